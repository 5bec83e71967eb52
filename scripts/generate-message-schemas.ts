/**
 * Freezes each cross-build payload's schema at its current version: `npm run schema:messages` writes
 * schema/messages/<name>/v<version>.json for a version not frozen yet, and never rewrites one that is: a frozen
 * version is what builds already running were made with. A schema that changed under a frozen version is refused
 * here (move its version in src/api/contract/cross-build.ts), as the unit test refuses it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CROSS_BUILD_PAYLOADS, crossBuildJsonSchema, crossBuildSchemaFile } from '../src/api/contract/cross-build';
import { compatibilityIssues } from '../src/api/contract/payload-compat';

const dir = path.resolve(__dirname, '../schema/messages');
const render = (schema: unknown) => JSON.stringify(schema, null, 2) + '\n';
let refused = 0;
for (const payload of CROSS_BUILD_PAYLOADS) {
  const file = path.join(dir, crossBuildSchemaFile(payload.name, payload.version));
  const text = render(crossBuildJsonSchema(payload));
  if (existsSync(file)) {
    // Compared as JSON: Prettier formats the committed file its own way.
    if (JSON.stringify(JSON.parse(readFileSync(file, 'utf8'))) !== JSON.stringify(JSON.parse(text))) {
      console.error(`${payload.name}: its schema changed under frozen version ${payload.version}: move its version`);
      refused++;
    }
    continue;
  }
  const previous = path.join(dir, crossBuildSchemaFile(payload.name, payload.version - 1));
  if (payload.version > 1 && existsSync(previous)) {
    const [older, newer] = [JSON.parse(readFileSync(previous, 'utf8')), JSON.parse(text)];
    const issues = [
      ...compatibilityIssues(older.payload, newer.payload),
      ...(older.answer || newer.answer
        ? compatibilityIssues(older.answer, newer.answer).map((i) => `answer: ${i}`)
        : []),
    ];
    if (issues.length > 0) {
      console.error(
        `${payload.name} v${payload.version} breaks v${payload.version - 1}: use a new name\n  ${issues.join('\n  ')}`,
      );
      refused++;
      continue;
    }
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  console.log(`wrote schema/messages/${crossBuildSchemaFile(payload.name, payload.version)}`);
}
if (refused > 0) process.exit(1);
