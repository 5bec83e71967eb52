/** Regenerates schema/*.schema.json from the zod contract: `npm run schema`. */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { contractJsonSchemas, renderSchema } from '../src/api/contract/json-schema';

const dir = path.resolve(__dirname, '../schema');
mkdirSync(dir, { recursive: true });
for (const [file, schema] of Object.entries(contractJsonSchemas())) {
  writeFileSync(path.join(dir, file), renderSchema(schema));
  console.log(`wrote schema/${file}`);
}
