/**
 * The worker's CPU per workflow without a server: replays recorded booking histories in the reusable V8 context
 * (Worker.runReplayHistories, each replay a new workflow instance as on a worker) with bundles built with and
 * without the preloaded modules (src/workflow-bundle.ts) and with the SDK's alone, in alternation, and prints the
 * CPU ms of this process per replayed workflow (median of the rounds after the first). Not part of `npm run
 * bench`: a check of one bundler option; its figures are in bench/results/HISTORY.md.
 *
 *   npx ts-node --transpile-only bench/replay-cpu.ts [--version v1-baseline] [--only confirmed-at-once]
 *                                                   [--rounds 6] [--reps 40]
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { SDK_PRELOAD_MODULES, workflowBundlerOptions } from '../src/workflow-bundle';
import { testDataConverter } from '../test/fixtures/encryption';

type BundleName = 'no preload' | 'preload' | 'SDK only';
const BUNDLES: Record<BundleName, { preloadModules?: string[] }> = {
  'no preload': {},
  preload: workflowBundlerOptions(),
  'SDK only': { preloadModules: [...SDK_PRELOAD_MODULES] },
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      version: { type: 'string', default: 'v1-baseline' },
      only: { type: 'string' },
      rounds: { type: 'string', default: '6' },
      reps: { type: 'string', default: '40' },
    },
  });
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const dir = path.resolve(__dirname, '../test/replay/histories/booking', values.version!);
  const histories = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && f !== 'recorded.json' && (!values.only || f.includes(values.only)))
    .map((f) => {
      const j = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as { workflowId: string; history: unknown };
      return { workflowId: j.workflowId, history: historyFromJSON(j.history) };
    });
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} };
  const code = {} as Record<BundleName, string>;
  for (const name of Object.keys(BUNDLES) as BundleName[]) {
    code[name] = (
      await bundleWorkflowCode({ workflowsPath: require.resolve('../src/workflows'), ...BUNDLES[name], logger: quiet })
    ).code;
  }
  const rounds = Number(values.rounds);
  const reps = Number(values.reps);
  const cpu = Object.fromEntries(Object.keys(BUNDLES).map((k) => [k, [] as number[]])) as Record<BundleName, number[]>;
  const names = Object.keys(BUNDLES) as BundleName[];
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 ? [...names].reverse() : names) {
      const list = Array.from({ length: reps }, () => histories).flat();
      const start = process.cpuUsage();
      let n = 0;
      for await (const result of Worker.runReplayHistories(
        { workflowBundle: { code: code[name] }, replayName: name, dataConverter: testDataConverter() },
        list,
      )) {
        if (result.error) throw result.error;
        n++;
      }
      const used = process.cpuUsage(start);
      // The first round warms the JIT up; it is not counted.
      if (round > 0) cpu[name].push((used.user + used.system) / 1000 / n);
    }
  }
  for (const name of names) {
    const sorted = [...cpu[name]].sort((a, b) => a - b);
    console.log(
      `${name}: CPU ms per replayed workflow, median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} ` +
        `(rounds: ${cpu[name].map((x) => x.toFixed(2)).join(', ')})`,
    );
  }
  console.log(
    `${histories.length} histories of booking/${values.version} × ${reps} per round, ${rounds - 1} rounds counted`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
