/** The committed JSON Schemas are what the zod contract generates; run `npm run schema` when this fails. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { contractJsonSchemas, renderSchema } from '../../src/api/contract/json-schema';

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

test('the cancel request names how to send it: Update-With-Start on the order workflow, with its policies', () => {
  const { description } = contractJsonSchemas()['cancel-booking-request.schema.json'] as { description: string };
  for (const words of [
    'workflow type orderWorkflow',
    'Update-With-Start',
    'workflow id order:<customerReferenceNo>',
    'task queue hotel-booking',
    'order-workflow-start.schema.json',
    'conflict policy USE_EXISTING',
    'reuse policy ALLOW_DUPLICATE',
    'search attribute CustomerReferenceNo',
  ])
    expect(description).toContain(words);
  const start = contractJsonSchemas()['order-workflow-start.schema.json'] as { required: string[]; properties: object };
  expect(start.required).toEqual(['customerReferenceNo']);
  expect(Object.keys(start.properties)).toEqual(['customerReferenceNo']);
});

test('the order outcome names each of its kinds', () => {
  const schema = contractJsonSchemas()['order-outcome.schema.json'] as {
    description: string;
    anyOf: { properties: { kind: { const: string } } }[];
  };
  for (const branch of schema.anyOf) expect(schema.description).toContain(branch.properties.kind.const);
});
