/**
 * How the workflow code is bundled: one set of options for every bundle, so the tests and the benchmarks run
 * what ships. Used by the worker when it bundles at start (src/worker.ts), `npm run bundle`
 * (scripts/bundle-workflows.ts), the tests' global setup and the benchmarks (bench/stack.ts).
 *
 * `preloadModules` (SDK 1.24): these modules are evaluated once per reusable V8 context, before any workflow
 * exists, and shared by every workflow run in it, deep-frozen; the other modules of the bundle are evaluated
 * again for each workflow. A module's imports are shared with it. So a module may be listed only if it and
 * everything it imports keep no state at module level (no `let`, no Map or Set filled later, no object
 * written after load) and do nothing at load time that needs a workflow (workflowInfo, activities, timers):
 * a shared module's state would leak from one booking into another and break determinism on replay.
 *
 * Not listed, on purpose: the workflows' counters (src/workflows/counters.ts keeps a Map of counters),
 * everything that imports them (the workflow functions, their runs and handlers), and the modules that proxy
 * activities.
 */
import type { BundleOptions } from '@temporalio/worker';

/**
 * The SDK's workflow API (its index and the modules only it loads: interceptors, metrics, nexus,
 * random-streams, trigger) and its common library (already shared: the bundle's entry point loads it before
 * any workflow). Each keeps per-workflow state on the workflow's activator, never in the module; the
 * module-level objects (workflowRandom, metricMeter, the nexus enum converters) delegate to the activator of
 * the workflow running at the time of the call.
 */
export const SDK_PRELOAD_MODULES: readonly string[] = [
  require.resolve('@temporalio/workflow'),
  require.resolve('@temporalio/common'),
];

/**
 * The contract and the rules: our own workflow-side modules that are constants and pure functions, read one by
 * one for module state:
 *  - contract/definitions: names, ids, search-attribute keys, defineQuery/Signal/Update objects, recovery
 *    defaults and bounds, pure schedule arithmetic (imports the SDK above only);
 *  - observability/definitions: metric names, labels and help texts, pure helpers (no imports);
 *  - values/timestamp: parseTimestamp, parseDeadline (its regular expression has no g/y flag, so exec keeps no
 *    lastIndex);
 *  - rules/schedule (re-exports pollOffsetSeconds), rules/price (judgePrice), rules/cancel-fee (cancelFeeAt,
 *    sameFee, feeWithin: copies before it sorts), rules/sweep-classify: the sweep's rule (classifyOrder, slices).
 * The other rules (book, cancel, sweep-listing) run in activities only: no workflow loads them.
 * Workflow code never writes to what these export (it copies RECOVERY_DEFAULTS' arrays before use); were
 * it to, the write would throw (frozen) and the workflow task would fail, never leak.
 */
export const OWN_PRELOAD_MODULES: readonly string[] = [
  require.resolve('./api/contract/definitions'),
  require.resolve('./api/contract/messages'),
  require.resolve('./runtime/observability/definitions'),
  require.resolve('./api/values/timestamp'),
  require.resolve('./runtime/rules/schedule'),
  require.resolve('./runtime/rules/price'),
  require.resolve('./runtime/rules/cancel-fee'),
  require.resolve('./runtime/rules/sweep-classify'),
];

export const WORKFLOW_PRELOAD_MODULES: readonly string[] = [...SDK_PRELOAD_MODULES, ...OWN_PRELOAD_MODULES];

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];
type WebpackPlugin = NonNullable<WebpackConfig['plugins']>[number];

/**
 * Webpack's report of a bundle in one line ("webpack compiled successfully in 1304 ms"): the SDK logs the whole
 * report, module by module, at INFO each time a worker bundles at start. Errors and warnings still print in full.
 * The SDK passes its own options to the report, so they are set where webpack normalizes them.
 */
const oneLineStats: WebpackPlugin = {
  apply(compiler) {
    compiler.hooks.compilation.tap('OneLineStats', (compilation) => {
      compilation.hooks.statsNormalize.tap('OneLineStats', (options) => {
        Object.assign(options, { assets: false, modules: false, version: false });
      });
    });
  },
};

/** The options every bundle of src/workflows is built with (bundleWorkflowCode, or a worker's bundlerOptions). */
export function workflowBundlerOptions(): Required<Pick<BundleOptions, 'preloadModules' | 'webpackConfigHook'>> {
  return {
    preloadModules: [...WORKFLOW_PRELOAD_MODULES],
    webpackConfigHook: (config) => ({ ...config, plugins: [...(config.plugins ?? []), oneLineStats] }),
  };
}
