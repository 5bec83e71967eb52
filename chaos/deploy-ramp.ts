/**
 * The drill's bad release (`npm run chaos -- --deploy`): build D (dev/builds/new-runs-fail) replays every history
 * and passes its gate run, but fails the first workflow task of every new run. Its workers start beside the current
 * build's, and the deploy command's progressive ramp (`ramp --steps 50,100 --pause 60s --wait`, as an operator runs
 * it) sends it a share of the bookings started meanwhile. The ramp must see D's runs failing and undo itself, with
 * the build that was current taking every new run again; D's workers stop once the deploy command's drain says so.
 * The runs that failed on D are not pinned to it (no task of theirs completed there): after the undo the server hands
 * their next task to the current build, and the checks find every one of them finished there, none on D.
 */
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode } from '@temporalio/worker';
import { DEFAULT_TASK_QUEUE } from '../src/api/client/index';
import { parseDeployArgs } from '../src/operators/deploy/command';
import { drainStep } from '../src/operators/deploy/drain';
import { runDeployStep } from '../src/operators/deploy/main';
import type { RampHealth } from '../src/operators/deploy/ramp';
import { describeDeployment, setRampingBuild } from '../src/operators/deploy/routing';
import { workflowBundlerOptions } from '../src/workflow-bundle';
import type { Log, WorkerFleet } from './stack';
import { errorLine, seconds, sleep } from './timing';

/**
 * The ramp's one share and how long it is watched (health read every RAMP_POLL_MS). One step, not up to 100: should no
 * run reach D while it is watched (the drill's starts over), the ramp holds at 50 % rather than make an unproven build
 * current, and the drill ends it (a finding either way).
 */
export const RAMP_STEPS = '50';
const RAMP_PAUSE = '60s';
const RAMP_POLL_MS = 3_000;
/** D's one worker slot. */
export const RAMP_SLOT = 'D1';

/** What the ramp of build D did, for the checks and the report. */
export interface RampRecord {
  buildId: string;
  /** Seconds since the phase start when D's workers were started, and when the ramp began and ended. */
  startedAtSeconds: number;
  rampBeganMs?: number;
  rampEndedMs?: number;
  /** The build current before the ramp: the one it must fall back to. */
  currentBefore?: string;
  exitCode?: number;
  rolledBack?: boolean;
  steps?: Array<{ percent: number; health: RampHealth }>;
  /** Routing read after the ramp returned. */
  currentAfter?: string;
  rampingAfter?: string | null;
  /** When the deploy command's drain first said D may stop, and when its workers were stopped. */
  drainedAtMs?: number;
  stoppedAtMs?: number;
  lines: string[];
  errors: string[];
}

/** Build D's workflow bundle (dev/builds/new-runs-fail), beside `nextTo` (another bundle of the run). */
export async function bundleBuildD(nextTo: string): Promise<string> {
  const quiet = { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} };
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve(path.resolve(__dirname, '..', 'dev', 'builds', 'new-runs-fail')),
    logger: quiet as never,
    ...workflowBundlerOptions(),
  });
  const file = path.join(path.dirname(nextTo), 'workflow-bundle-new-runs-fail.js');
  writeFileSync(file, code);
  return file;
}

/**
 * Starts D's workers (its bundle made first): the environment of the current build's workers, with D's build id and
 * bundle. Started beside B's, so the ramp need not wait for them.
 */
export async function startBuildD(
  fleet: WorkerFleet,
  buildId: string,
  bundle: Promise<string>,
  env: Record<string, string>,
): Promise<void> {
  await fleet.add([RAMP_SLOT], { ...env, WORKER_BUILD_ID: buildId, WORKER_WORKFLOW_BUNDLE: await bundle });
}

export interface RampDrillOptions {
  /** The operator with the workers' payload keys (the gate reads and writes payloads). */
  operator: Client;
  identity: string;
  deploymentName: string;
  buildId: string;
  bundle: Promise<string>;
  /** D's workers polling (startBuildD). */
  workersUp: Promise<void>;
  fleet: WorkerFleet;
  graceSeconds: number;
  phaseStart: number;
  hardLimitAt: number;
  signal: AbortSignal;
  log: Log;
  mark: (event: string) => void;
}

/**
 * Starts D's workers and ramps D as an operator would; returns once the ramp is over (undone or not), with D's drain
 * and stop still going on in the background (the returned promise's `drained`).
 */
export async function rampFailingBuild(o: RampDrillOptions, record: RampRecord): Promise<{ drained: Promise<void> }> {
  const bundle = await o.bundle;
  await o.workersUp;
  record.startedAtSeconds = seconds(Date.now() - o.phaseStart);
  record.currentBefore = (await describeDeployment(o.operator, o.deploymentName))?.current;
  const args = parseDeployArgs(
    [
      'ramp',
      ...['--deployment', o.deploymentName, '--task-queue', DEFAULT_TASK_QUEUE, '--build-id', o.buildId],
      ...['--bundle', bundle, '--steps', RAMP_STEPS, '--pause', RAMP_PAUSE, '--wait', '--gate-timeout', '45s'],
    ],
    {},
  );
  o.mark(`build D: deploy ramp --steps ${RAMP_STEPS} --pause ${RAMP_PAUSE} --wait`);
  record.rampBeganMs = Date.now();
  try {
    const result = await runDeployStep(o.operator, args, {
      say: (line) => record.lines.push(line),
      identity: o.identity,
      pollMs: RAMP_POLL_MS,
    });
    record.exitCode = result.exitCode;
    record.rolledBack = result.value.rolledBack === true;
    if (Array.isArray(result.value.steps)) record.steps = result.value.steps as RampRecord['steps'];
  } catch (err) {
    record.errors.push(`ramp of D: ${errorLine(err)}`);
  }
  record.rampEndedMs = Date.now();
  for (const line of record.lines) o.log(`ramp D: ${line.trim()}`);
  let routing = await describeDeployment(o.operator, o.deploymentName).catch(() => undefined);
  if (routing?.ramping?.buildId === o.buildId) {
    // Held at its share, undone by nothing (no run of D seen): ended here so the drill goes on; the checks flag it.
    await setRampingBuild(o.operator, o.deploymentName, undefined, { identity: o.identity }, routing.conflictToken)
      .then(async () => (routing = await describeDeployment(o.operator, o.deploymentName)))
      .catch((err: unknown) =>
        record.errors.push(`the ramp of D left at its share could not be ended: ${errorLine(err)}`),
      );
    o.mark('build D: ramp held at its share with no failure seen; ended by the drill');
  }
  if (routing?.current) record.currentAfter = routing.current;
  record.rampingAfter = routing?.ramping?.buildId ?? null;
  const last = record.steps?.at(-1);
  o.mark(
    `build D: ramp ${record.rolledBack ? 'undone by itself' : `not undone (exit ${record.exitCode ?? 'none'})`}` +
      (last ? ` at ${last.percent} %: ${last.health.runs} runs on D, ${last.health.failures} failing` : '') +
      `; current ${record.currentAfter ?? '?'}`,
  );
  return { drained: drainAndStopD(o, record) };
}

/** Asks the deploy command's drain every 3 s until D may stop, then stops D's workers (or gives up at the hard limit). */
async function drainAndStopD(o: RampDrillOptions, record: RampRecord): Promise<void> {
  const args = parseDeployArgs(
    ['drain', '--deployment', o.deploymentName, '--build-id', o.buildId, '--grace', `${o.graceSeconds}`],
    {},
  );
  const io = { say: () => undefined, identity: o.identity };
  let lastError = '';
  while (Date.now() < o.hardLimitAt && !o.signal.aborted) {
    try {
      if ((await drainStep(o.operator, args, io)).exitCode === 0) {
        record.drainedAtMs = Date.now();
        break;
      }
    } catch (err) {
      lastError = errorLine(err); // a node down, or D still routed to (then it is a finding below)
    }
    await sleep(3_000, o.signal);
  }
  if (record.drainedAtMs === undefined) {
    record.errors.push(`build D may not stop at the hard limit${lastError ? `: ${lastError}` : ''}`);
    return;
  }
  await o.fleet.retire([RAMP_SLOT]);
  record.stoppedAtMs = Date.now();
  o.mark(
    `build D drained ${seconds(record.drainedAtMs - record.rampEndedMs!)} s after the ramp ended: workers stopped`,
  );
}
