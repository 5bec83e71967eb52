/**
 * The deploy drill (`--deploy`): two builds of the booking workers side by side under fire, on Worker Deployment
 * Versioning. Build A (src/workflows) is made current before the first booking; at DRILL_AT.deploy build B (the
 * changed-commands bundle, dev/builds/changed-commands) starts beside it, passes the replay gate and is made current;
 * at DRILL_AT.rollback A is made current again (gated), at DRILL_AT.forward B again. Then the drill waits until no
 * open run is on A and stops A's workers once the deploy command's drain says it may (no run on it or pinned to it,
 * and the server says drained or DRAIN_GRACE_SECONDS passed). Every routing change goes through
 * src/operators/deploy/routing.ts as the operator; every gate through src/operators/deploy/gate.ts with the workers'
 * payload keys, then the gate run on the build's own workers (gate-run.ts). Two refusals are drilled too: build C,
 * which fails every first workflow task (payload keys not the fleet's), started beside B after B's deploy, must be
 * refused by its gate run; and once A is stopped, a rollout back to A must be refused (no live worker). Either one
 * not refused is a finding. Before C, right after B's deploy, a bad release the gates cannot see (build D, started
 * beside B: its new runs fail their first task) is ramped by the deploy command's progressive ramp and must be undone
 * by it (chaos/deploy-ramp.ts). From the drill's
 * start until A is stopped, order-status callbacks go through the callback receiver to open runs on either build
 * (chaos/deploy-callbacks.ts).
 */
import { Client, type ConnectionLike } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { DEFAULT_TASK_QUEUE } from '../src/api/client/index';
import { randomBytes } from 'node:crypto';
import { parseDeployArgs } from '../src/operators/deploy/command';
import { drainStep } from '../src/operators/deploy/drain';
import { describeGate, runReplayGate, type GateReport, type GateRun } from '../src/operators/deploy/gate';
import { describeGateRun, runGateWorkflow } from '../src/operators/deploy/gate-run';
import { runDeployStep } from '../src/operators/deploy/main';
import { describeDeployment, setCurrentBuild } from '../src/operators/deploy/routing';
import type { WorkerBuild } from '../src/runtime/config/build';
import { temporal } from '@temporalio/proto';
import { sendCallbacksWhileBuildsMove, type CallbackRecord } from './deploy-callbacks';
import { bundleBuildD, rampFailingBuild, startBuildD, type RampRecord } from './deploy-ramp';
import { runBuilds } from './history';
import type { Log, WorkerFleet } from './stack';
import { errorLine, seconds, sleep } from './timing';

/** The deployment the drill's workers poll as. */
export const DRILL_DEPLOYMENT = 'chaos';
/** Who changes the routing, as the server records it (the deployment's lastModifierIdentity). */
export const DRILL_OPERATOR = 'chaos-operator';
/** Fractions of the start phase at which the routing changes (apart from the prod faults at 1/3, 1/2 and 2/3). */
export const DRILL_AT = { deploy: 0.25, rollback: 0.45, forward: 0.6 } as const;
/** Worker slots per build: two each, so a kill never leaves a build without a poller. */
export const BUILD_SLOTS = { A: ['A1', 'A2'], B: ['B1', 'B2'] } as const;

export type BuildLabel = 'A' | 'B';

/** The drain's grace for the drill: A may stop this long after it stopped taking new runs, if nothing is left on it. */
export const DRAIN_GRACE_SECONDS = 30;
/** The gate run's ceiling for the rollout to the stopped build A: its refusal takes this long (no node is killed then). */
const GATE_RUN_TIMEOUT = '20s';

/** The drill's builds, bundles and operator, made at setup. */
export interface DeployStack {
  deploymentName: string;
  builds: Record<BuildLabel, WorkerBuild>;
  /** Workflow bundles (WORKER_WORKFLOW_BUNDLE) per build. */
  bundles: Record<BuildLabel, string>;
  /** The operator's client: routing and the replay gate. */
  operator: Client;
  /** The payload codec the runs are written with, for the gate's replays. */
  dataConverter: DataConverter;
}

/** One routing change: the gate before it (none for the first build), the call, and when it took effect. */
export interface DeployStep {
  kind: 'first' | 'deploy' | 'rollback' | 'forward';
  build: BuildLabel;
  buildId: string;
  /** Seconds since the phase start when the step began (negative: before the first booking). */
  atSeconds: number;
  gate?: {
    verdict: 'pass' | 'refuse' | 'error';
    seconds: number;
    counts?: GateReport['counts'];
    openElsewhere?: Record<string, number>;
    reasons: string[];
    lines: string[];
    /** When the gate began (its listing of open runs follows at once), epoch ms. */
    startedMs?: number;
    /** The runs that refused the build, each with what visibility, the server's own record and its history say. */
    refusals?: RefusalEvidence[];
  };
  /** Epoch ms just before the setCurrent call that took, and when it returned; absent: the build never became current. */
  setBeforeMs?: number;
  setAfterMs?: number;
  setAttempts: number;
  /** The current build the server reported after the call. */
  currentAfter?: string;
  error?: string;
}

/**
 * A run that refused a build, seen three ways after the gate: the build visibility gave the gate, the build the
 * server's own record of the run holds (DescribeWorkflowExecution's versioning info), and the builds its history's
 * completed workflow tasks carry, with when the first was completed: a run visibility listed as unversioned whose
 * first task had completed on a build before the gate listed it was judged on a stale listing.
 */
export interface RefusalEvidence {
  workflowId: string;
  runId: string;
  role: string;
  /** As the gate saw it (from visibility): '' unversioned. */
  gateBuildId: string;
  gateBehavior: string;
  /** Visibility's TemporalWorkerDeploymentVersion / behavior for the run, read again after the gate. */
  visibilityNow?: { version: string; behavior: string };
  /** DescribeWorkflowExecution: versioningInfo's behavior and deployment version. */
  described?: { behavior: string; buildId: string };
  /** Builds of the run's completed workflow tasks in its history, and when its first task completed (epoch ms). */
  historyBuilds: string[];
  firstTaskCompletedMs?: number;
  /** First task completed this long before the gate began (positive: before). */
  completedBeforeGateMs?: number;
  error: string;
}

/** What the drill did and saw, for the checks and the report. */
export interface DeployRecord {
  deploymentName: string;
  builds: Record<BuildLabel, string>;
  steps: DeployStep[];
  /** When B's workers were started and polling. */
  bStartedAtSeconds?: number;
  bReadyMs?: number;
  /** A's drain: from the moment it stopped being current (B made current for good) to no open run on it. */
  aDrain?: {
    notCurrentSinceMs: number;
    drainedAtMs?: number;
    /** Epoch ms when A's workers were stopped (absent: never, A still had runs at the hard limit). */
    stoppedAtMs?: number;
    /** openRunsOn(A) readings while it drained: [seconds since A stopped being current, count]. */
    samples: Array<[number, number]>;
  };
  errors: string[];
  /** Booking references a refusal names: their decoded histories are kept beside the report. */
  implicated: string[];
  /** The progressive ramp of build D, whose new runs fail: it must undo itself. */
  ramp?: RampRecord;
  /** Order-status callbacks sent through the callback receiver while builds moved. */
  callbacks?: CallbackRecord;
}

/** A client as the operator: same connection, its own identity. */
export function operatorClient(connection: ConnectionLike, namespace: string): Client {
  return new Client({ connection, namespace, identity: DRILL_OPERATOR });
}

/** Makes `build` current, retrying while its pollers register or a node is down; records the call on the step. */
export async function makeCurrent(
  d: DeployStack,
  label: BuildLabel,
  step: DeployStep,
  opts: { log: Log; limitMs?: number },
): Promise<boolean> {
  const build = d.builds[label];
  const giveUpAt = Date.now() + (opts.limitMs ?? 90_000);
  for (;;) {
    step.setAttempts++;
    const before = Date.now();
    try {
      await setCurrentBuild(d.operator, build, { identity: DRILL_OPERATOR });
      step.setBeforeMs = before;
      step.setAfterMs = Date.now();
      const routing = await describeDeployment(d.operator, build.deploymentName).catch(() => undefined);
      if (routing?.current) step.currentAfter = routing.current;
      delete step.error;
      opts.log(`deploy: build ${label} (${build.buildId}) current after ${step.setAttempts} call(s)`);
      return true;
    } catch (err) {
      step.error = errorLine(err);
      if (Date.now() > giveUpAt) {
        opts.log(`deploy: build ${label} could not be made current: ${step.error}`);
        return false;
      }
      await sleep(1_000);
    }
  }
}

/** The operator with the workers' payload keys: the deploy command's gate reads and writes payloads. */
function gateClient(d: DeployStack): Client {
  return new Client({
    connection: d.operator.connection,
    namespace: d.operator.options.namespace,
    identity: DRILL_OPERATOR,
    dataConverter: d.dataConverter,
  });
}

/**
 * The replayer's workers log each state change at INFO through the process's SDK runtime: this process only replays,
 * so its runtime logs warnings and errors. A runtime already installed (a test's) is left as it is.
 */
function quietReplayLogs(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Installed already: its logger stays.
  }
}

/** The replay gate for `label`, tried again when the cluster does not answer (a node down); a verdict is final. */
async function gate(d: DeployStack, label: BuildLabel, log: Log): Promise<NonNullable<DeployStep['gate']>> {
  quietReplayLogs();
  const t = Date.now();
  let lastError = '';
  for (let attempt = 1; attempt <= 4; attempt++) {
    try {
      const report = await runReplayGate({
        client: d.operator,
        workflowBundle: { codePath: d.bundles[label] },
        dataConverter: d.dataConverter,
        build: d.builds[label],
        taskQueue: DEFAULT_TASK_QUEUE,
      });
      const lines = describeGate(report);
      if (report.verdict === 'pass') {
        // The build's own workers prove their code: a gate run pinned to it (src/operators/deploy/gate-run.ts).
        const run = await runGateWorkflow({
          client: gateClient(d),
          build: d.builds[label],
          taskQueue: DEFAULT_TASK_QUEUE,
          timeoutMs: 45_000,
        });
        lines.push(describeGateRun(run, d.builds[label]));
        if (run.verdict === 'refuse') {
          report.verdict = 'refuse';
          report.reasons.push(`gate run: ${run.reason}`);
        } else if (run.reason) {
          // Passed without the whole proof (a build without the gate workflow): every build of the drill carries it.
          report.verdict = 'refuse';
          report.reasons.push(`gate run passed only with a warning: ${run.reason}`);
        }
      }
      for (const line of lines) log(`gate ${label}: ${line.trim()}`);
      const refused = report.runs.filter(
        (r) =>
          r.status !== 'replays' && (r.role === 'would-continue' || r.role === 'own-build' || r.status === 'fails'),
      );
      return {
        verdict: report.verdict,
        seconds: seconds(Date.now() - t),
        counts: report.counts,
        openElsewhere: report.openElsewhere,
        reasons: report.reasons.slice(0, 20),
        lines,
        startedMs: t,
        ...(refused.length > 0 ? { refusals: await refusalEvidence(d, refused.slice(0, 10), t) } : {}),
      };
    } catch (err) {
      lastError = errorLine(err);
      log(`gate ${label}: attempt ${attempt} failed: ${lastError}`);
      await sleep(3_000 * attempt);
    }
  }
  return { verdict: 'error', seconds: seconds(Date.now() - t), reasons: [lastError], lines: [] };
}

/** What visibility, the server's record and the history say of each run that refused a build (see RefusalEvidence). */
async function refusalEvidence(d: DeployStack, refused: GateRun[], gateStartedMs: number): Promise<RefusalEvidence[]> {
  const { VersioningBehavior } = temporal.api.enums.v1;
  return Promise.all(
    refused.map(async (r): Promise<RefusalEvidence> => {
      const e: RefusalEvidence = {
        workflowId: r.workflowId,
        runId: r.runId,
        role: r.role,
        gateBuildId: r.buildId,
        gateBehavior: r.behavior,
        historyBuilds: [],
        error: r.error ?? '',
      };
      const handle = d.operator.workflow.getHandle(r.workflowId, r.runId);
      try {
        const history = await handle.fetchHistory();
        const builds = runBuilds(r.workflowId, r.runId, r.type, history.events ?? []);
        e.historyBuilds = builds.builds;
        const firstDone = (history.events ?? []).find((ev) => ev.workflowTaskCompletedEventAttributes);
        if (firstDone?.eventTime) {
          e.firstTaskCompletedMs =
            Number(firstDone.eventTime.seconds ?? 0) * 1000 + Math.floor((firstDone.eventTime.nanos ?? 0) / 1e6);
          e.completedBeforeGateMs = gateStartedMs - e.firstTaskCompletedMs;
        }
        const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
        e.described = {
          behavior: VersioningBehavior[info?.behavior ?? 0] ?? String(info?.behavior),
          buildId: info?.deploymentVersion?.buildId ?? '',
        };
        const query = `WorkflowId = '${r.workflowId}' AND RunId = '${r.runId}'`;
        for await (const listed of d.operator.workflow.list({ query })) {
          const attrs = listed.searchAttributes as Record<string, unknown[] | undefined>;
          e.visibilityNow = {
            version: String(attrs?.TemporalWorkerDeploymentVersion?.[0] ?? ''),
            behavior: String(attrs?.TemporalWorkflowVersioningBehavior?.[0] ?? ''),
          };
        }
      } catch (err) {
        e.error += ` (evidence incomplete: ${errorLine(err)})`;
      }
      return e;
    }),
  );
}

/** One gated routing change: gate, then (on a pass only) make the build current. */
async function gatedStep(
  d: DeployStack,
  record: DeployRecord,
  kind: DeployStep['kind'],
  label: BuildLabel,
  o: { phaseStart: number; log: Log; mark: (event: string) => void },
): Promise<DeployStep> {
  const step: DeployStep = {
    kind,
    build: label,
    buildId: d.builds[label].buildId,
    atSeconds: seconds(Date.now() - o.phaseStart),
    setAttempts: 0,
  };
  record.steps.push(step);
  o.mark(`${kind}: replay gate for build ${label}`);
  step.gate = await gate(d, label, o.log);
  if (step.gate.verdict !== 'pass') {
    step.error = `gate ${step.gate.verdict}: ${step.gate.reasons[0] ?? ''}`;
    for (const e of step.gate.refusals ?? []) {
      o.log(
        `gate ${label} refused over ${e.workflowId}: the gate read build '${e.gateBuildId}' (${e.gateBehavior}); ` +
          `visibility now '${e.visibilityNow?.version ?? '?'}', the server's record ${e.described?.buildId || "''"} ` +
          `(${e.described?.behavior ?? '?'}), its history ${JSON.stringify(e.historyBuilds)}, first task completed ` +
          `${e.completedBeforeGateMs ?? '?'} ms before the gate began`,
      );
      if (e.workflowId.startsWith('booking:')) record.implicated.push(e.workflowId.slice('booking:'.length));
    }
    o.mark(`${kind}: gate for build ${label} ${step.gate.verdict}; routing left as it was`);
    return step;
  }
  if (await makeCurrent(d, label, step, o)) o.mark(`${kind}: build ${label} current`);
  return step;
}

/**
 * The drill, as a loop beside the chaos: B started and made current, A again, B again, at their times; then A
 * drained and stopped. Ends when A is stopped, or at the hard limit with A still up (a finding).
 */
export async function runDrill(
  d: DeployStack,
  fleet: WorkerFleet,
  record: DeployRecord,
  o: {
    phaseStart: number;
    startPhaseMs: number;
    hardLimitAt: number;
    startsDone: () => boolean;
    envOf: (label: BuildLabel) => Record<string, string>;
    signal: AbortSignal;
    log: Log;
    mark: (event: string) => void;
  },
): Promise<void> {
  const at = (fraction: number) => o.phaseStart + o.startPhaseMs * fraction;
  const since = () => seconds(Date.now() - o.phaseStart);
  // Build D's bundle is made while A alone runs, so the ramp does not wait for it.
  const bundleD = bundleBuildD(d.bundles.B);
  bundleD.catch(() => undefined);
  const callbacks = startCallbacks(d, record, o);
  let dDrained: Promise<void> = Promise.resolve();
  try {
    await sleep(at(DRILL_AT.deploy) - Date.now(), o.signal);
    if (o.signal.aborted) return;
    o.mark('build B: workers starting beside A (and build D: new runs fail, replays and gate run pass)');
    const t = Date.now();
    record.bStartedAtSeconds = since();
    // D's workers come up beside B's, taking nothing until the ramp sends them runs: the ramp then finds them polling.
    record.ramp = { buildId: buildIdOfD(d), startedAtSeconds: since(), lines: [], errors: [] };
    const dUp = startBuildD(fleet, record.ramp.buildId, bundleD, o.envOf('A'));
    dUp.catch(() => undefined);
    await fleet.add([...BUILD_SLOTS.B], o.envOf('B'));
    record.bReadyMs = Date.now() - t;
    o.mark(`build B: workers polling after ${record.bReadyMs} ms`);
    await gatedStep(d, record, 'deploy', 'B', o);
    // The ramp first, while bookings still start: its health needs runs sent to D.
    ({ drained: dDrained } = await rampFailingBuild(
      {
        operator: gateClient(d),
        identity: DRILL_OPERATOR,
        deploymentName: d.deploymentName,
        buildId: record.ramp.buildId,
        bundle: bundleD,
        workersUp: dUp,
        fleet,
        graceSeconds: DRAIN_GRACE_SECONDS,
        ...o,
      },
      record.ramp,
    ));
    await refuseBrokenBuild(d, fleet, record, o);

    await sleep(at(DRILL_AT.rollback) - Date.now(), o.signal);
    if (o.signal.aborted) return;
    await gatedStep(d, record, 'rollback', 'A', o);

    await sleep(at(DRILL_AT.forward) - Date.now(), o.signal);
    if (o.signal.aborted) return;
    const forward = await gatedStep(d, record, 'forward', 'B', o);
    if (forward.setAfterMs === undefined) {
      record.errors.push('build B was not made current again: A keeps taking new runs and is never drained');
      return;
    }
    // A stopped being current at the latest when the call returned (under a node kill the call can take a minute).
    await drainAndStopA(d, fleet, record, forward.setAfterMs, o);
    if (record.aDrain?.stoppedAtMs !== undefined) await refuseStoppedBuild(d, record, o);
  } catch (err) {
    record.errors.push(`drill: ${errorLine(err)}`);
    o.log(`deploy drill failed: ${errorLine(err)}`);
  } finally {
    await dDrained;
    await callbacks.stop();
  }
}

/** Build D's id: the run's seed as A's and B's carry it. */
function buildIdOfD(d: DeployStack): string {
  const a = d.builds.A.buildId;
  return a.startsWith('a-') ? `d-${a.slice(2)}` : `${a}-new-runs-fail`;
}

/** The callbacks sent beside the drill (chaos/deploy-callbacks.ts), from its start until `stop()` (A stopped). */
function startCallbacks(
  d: DeployStack,
  record: DeployRecord,
  o: { signal: AbortSignal; log: Log },
): { stop: () => Promise<void> } {
  const until = new AbortController();
  const onAbort = () => until.abort();
  o.signal.addEventListener('abort', onAbort);
  record.callbacks = { sent: [], errors: [] };
  const current = () => {
    const last = record.steps.filter((s) => s.setAfterMs !== undefined).at(-1);
    return last?.buildId;
  };
  const running = sendCallbacksWhileBuildsMove({
    connection: d.operator.connection,
    namespace: d.operator.options.namespace,
    dataConverter: d.dataConverter,
    taskQueue: DEFAULT_TASK_QUEUE,
    record: record.callbacks,
    current,
    until: until.signal,
    log: o.log,
  });
  return {
    stop: async () => {
      until.abort();
      o.signal.removeEventListener('abort', onAbort);
      await running;
    },
  };
}

/**
 * Asks the deploy command's drain (src/operators/deploy/drain.ts) every 3 s until it says A may stop: no open run on
 * A or pinned to it, and the server says drained or DRAIN_GRACE_SECONDS have passed since A stopped taking new runs;
 * and every booking has been started. Then stops A's workers. The time to drain runs from the moment A stopped being
 * current to the first time drain said so.
 */
async function drainAndStopA(
  d: DeployStack,
  fleet: WorkerFleet,
  record: DeployRecord,
  notCurrentSinceMs: number,
  o: { hardLimitAt: number; startsDone: () => boolean; signal: AbortSignal; log: Log; mark: (e: string) => void },
): Promise<void> {
  const drain: NonNullable<DeployRecord['aDrain']> = { notCurrentSinceMs, samples: [] };
  record.aDrain = drain;
  const args = parseDeployArgs(
    ['drain', '--deployment', d.deploymentName, '--build-id', d.builds.A.buildId, '--grace', `${DRAIN_GRACE_SECONDS}`],
    {},
  );
  const io = { say: () => undefined, identity: DRILL_OPERATOR };
  let mayStop = false;
  while (Date.now() < o.hardLimitAt && !o.signal.aborted) {
    try {
      const { exitCode, value } = await drainStep(d.operator, args, io);
      drain.samples.push([seconds(Date.now() - notCurrentSinceMs), Number(value.openRuns) + Number(value.pinnedRuns)]);
      mayStop = exitCode === 0;
      if (mayStop) drain.drainedAtMs ??= Date.now();
      else delete drain.drainedAtMs;
      if (mayStop && o.startsDone()) break;
    } catch {
      // A node may be down: ask again.
    }
    await sleep(3_000, o.signal);
  }
  if (!mayStop || !o.startsDone()) {
    record.errors.push(`build A may not stop at the hard limit (last count ${drain.samples.at(-1)?.[1]})`);
    return;
  }
  o.mark(`build A drained ${seconds(drain.drainedAtMs! - notCurrentSinceMs)} s after it stopped being current`);
  await fleet.retire([...BUILD_SLOTS.A]);
  drain.stoppedAtMs = Date.now();
  o.mark('build A: workers stopped');
  o.log(`deploy: build A drained and stopped`);
}

/**
 * Build C beside B: A's code in an image misconfigured with payload keys that are not the fleet's, so it can read no
 * run's input and fails every first workflow task; its workers poll, so its queues look served. Its gate run must
 * refuse it, and routing must stay where it was; C's workers are stopped after. (The key is random, made here, and
 * never written anywhere but the worker's environment.)
 */
async function refuseBrokenBuild(
  d: DeployStack,
  fleet: WorkerFleet,
  record: DeployRecord,
  o: { envOf: (label: BuildLabel) => Record<string, string>; log: Log; mark: (e: string) => void },
): Promise<void> {
  const c: WorkerBuild = { deploymentName: d.deploymentName, buildId: `${d.builds.A.buildId}-wrong-keys` };
  o.mark('build C (fails its first workflow task): workers starting');
  await fleet.add(['C1'], {
    ...o.envOf('A'),
    WORKER_BUILD_ID: c.buildId,
    PAYLOAD_ENCRYPTION_KEYS: `not-the-fleets:${randomBytes(32).toString('base64')}`,
  });
  try {
    const before = (await describeDeployment(d.operator, d.deploymentName))?.current;
    // C's worker is up: a "no live worker" verdict here is a task held up by a node the chaos killed meanwhile, so
    // the run is tried again (three times at most) until C's worker has taken the task and failed it.
    let run = await runGateWorkflow({
      client: gateClient(d),
      build: c,
      taskQueue: DEFAULT_TASK_QUEUE,
      timeoutMs: 45_000,
    });
    for (let attempt = 2; attempt <= 3 && /no live worker/.test(run.reason ?? ''); attempt++) {
      o.log(`gate C: attempt ${attempt - 1}: ${describeGateRun(run, c)}`);
      run = await runGateWorkflow({
        client: gateClient(d),
        build: c,
        taskQueue: DEFAULT_TASK_QUEUE,
        timeoutMs: 45_000,
      });
    }
    o.log(`gate C: ${describeGateRun(run, c)}`);
    o.mark(`build C: gate run ${run.verdict}${run.reason ? `: ${run.reason.slice(0, 200)}` : ''}`);
    const after = (await describeDeployment(d.operator, d.deploymentName))?.current;
    if (run.verdict !== 'refuse' || !/failed its first workflow task/.test(run.reason ?? '')) {
      record.errors.push(
        `build C, which fails its first workflow task, was not refused by its gate run: ${run.verdict} ${run.reason ?? ''}`,
      );
    }
    if (after !== before) record.errors.push(`routing changed while build C was gated: ${before} -> ${after}`);
  } finally {
    await fleet.retire(['C1']);
  }
}

/**
 * A rollout back to A once its workers stopped: the deploy command (replay gate, served check, gate run) must refuse
 * it, and B must stay current.
 */
async function refuseStoppedBuild(d: DeployStack, record: DeployRecord, o: { log: Log; mark: (e: string) => void }) {
  const args = parseDeployArgs(
    [
      'rollout',
      ...['--deployment', d.deploymentName, '--task-queue', DEFAULT_TASK_QUEUE],
      ...['--build-id', d.builds.A.buildId, '--bundle', d.bundles.A, '--gate-timeout', GATE_RUN_TIMEOUT],
    ],
    {},
  );
  const lines: string[] = [];
  let outcome: string;
  try {
    const result = await runDeployStep(gateClient(d), args, { say: (l) => lines.push(l), identity: DRILL_OPERATOR });
    outcome = result.exitCode === 0 ? 'made current' : `refused: ${lines.filter((l) => /REFUSED/.test(l)).join(' ')}`;
  } catch (err) {
    outcome = `refused: ${errorLine(err)}`;
  }
  o.mark(`rollout to stopped build A: ${outcome.slice(0, 300)}`);
  const current = (await describeDeployment(d.operator, d.deploymentName))?.current;
  if (!outcome.startsWith('refused') || !/no live worker/.test(outcome)) {
    record.errors.push(`a rollout to stopped build A was not refused for its missing workers: ${outcome}`);
  }
  if (current !== d.builds.B.buildId)
    record.errors.push(`after the rollout to stopped A, ${current} is current, not B`);
}
