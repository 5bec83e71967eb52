/**
 * `npm run bundle -- [--tracing] [out]`: builds the workflow bundle once (default lib/workflow-bundle.js), for
 * WORKER_WORKFLOW_BUNDLE. A worker given it skips webpack at start, which matters when workers restart often.
 * `--tracing` bundles the OpenTelemetry workflow interceptors in, for workers with OTEL_TRACES_EXPORTER set: a
 * prebuilt bundle cannot take them at start, and a worker refuses a bundle that does not match its tracing.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { TRACING_WORKFLOW_INTERCEPTORS } from '../src/runtime/observability/tracing';
import { workflowBundlerOptions } from '../src/workflow-bundle';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const tracing = args.includes('--tracing');
  const outArg = args.find((a) => !a.startsWith('--'));
  const out = path.resolve(outArg ?? path.join(__dirname, '../lib/workflow-bundle.js'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../src/workflows'),
    // The stateless modules evaluated once per V8 context and shared (see src/workflow-bundle.ts).
    ...workflowBundlerOptions(),
    ...(tracing ? { workflowInterceptorModules: [TRACING_WORKFLOW_INTERCEPTORS] } : {}),
  });
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, code);
  console.log(out);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
