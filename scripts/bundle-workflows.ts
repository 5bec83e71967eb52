/**
 * `npm run bundle -- [out]`: builds the workflow bundle once (default lib/workflow-bundle.js), for
 * WORKER_WORKFLOW_BUNDLE. A worker given it skips webpack at start, which matters when workers restart often.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '../lib/workflow-bundle.js'));
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../src/workflows') });
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, code);
  console.log(out);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
