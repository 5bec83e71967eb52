/** The committed JSON Schemas are what the zod contract generates; run `npm run schema` when this fails. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { contractJsonSchemas, renderSchema } from '../../src/contract-json-schema';

test.each(Object.entries(contractJsonSchemas()))('schema/%s is up to date', (file, schema) => {
  const committed = readFileSync(path.resolve(__dirname, '../../schema', file), 'utf8');
  expect(committed).toBe(renderSchema(schema));
});

test('the request schema requires the idempotency key and names the fields', () => {
  const request = contractJsonSchemas()['booking-request.schema.json'] as {
    required: string[];
    properties: Record<string, unknown>;
  };
  expect(request.required).toEqual(expect.arrayContaining(['customerReferenceNo', 'ratePkgId', 'holder', 'guests']));
  expect(Object.keys(request.properties)).toEqual(
    expect.arrayContaining(['expectedPrice', 'priceChangePolicy', 'context', 'recovery']),
  );
});
