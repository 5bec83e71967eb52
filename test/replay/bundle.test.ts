/**
 * The workflow bundle, as workers load it: zod must not be in it. Every cached workflow evaluates its own
 * copy of each module in the bundle, and zod's schemas cost about 4 MB and 35 ms per workflow (bench
 * parked); a lazy `require` of the contract's schemas slips past the lint rule, so the bundle is read here.
 */
import { readFileSync } from 'node:fs';
import { workflowBundle } from '../harness/temporal';

test('the workflow bundle holds no zod and no contract schemas', () => {
  const code = readFileSync(workflowBundle().codePath, 'utf8');
  expect(code).toContain('bookingWorkflow');
  expect(code).not.toMatch(/node_modules\/zod\//);
  // Module paths as webpack names them (comments may mention the files).
  expect(code).not.toMatch(/src\/contract\/schemas\.ts/);
  expect(code).not.toMatch(/src\/supplier\/schemas\.ts/);
});
