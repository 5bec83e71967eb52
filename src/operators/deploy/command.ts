/**
 * The deploy command's face: its steps and flags (DEPLOY_USAGE, what `--help` prints), the parsed command line, its
 * one error type, and what every step is given (DeployIo) and gives back (DeployResult).
 */
import { parseArgs } from 'node:util';
import { DEFAULT_TASK_QUEUE } from '../../api/contract/index';
import { BUILD_ID_PATTERN, defaultBuildId, DEPLOYMENT_NAME_PATTERN } from '../../runtime/config/build';

export const DEPLOY_STEPS = ['status', 'gate', 'rollout', 'ramp', 'drain', 'rollback', 'move', 'settings'] as const;
export type DeployStep = (typeof DEPLOY_STEPS)[number];

/** The server's own visibility grace period for drainage (matching.wv.VersionDrainageStatusVisibilityGracePeriod). */
export const DEFAULT_GRACE_SECONDS = 180;

export class DeployError extends Error {
  override readonly name = 'DeployError';
}

/**
 * The gate refused before it could prove anything: it cannot get the target build's own code. A refusal, as any
 * other gate's (exit 1), not a mistake in the command (exit 2).
 */
export class GateRefusedError extends DeployError {}

export interface DeployArgs {
  step: DeployStep;
  deploymentName: string;
  taskQueue: string;
  buildId?: string;
  percent?: number;
  bundle?: string;
  strict: boolean;
  wait: boolean;
  json: boolean;
  /** Seconds a build must have stopped taking new runs before drain says it may stop (default 180: visibility lags). */
  graceSeconds?: number;
  /** move: the build whose pinned runs go, and the build they go to. */
  from?: string;
  to?: string;
  /** A progressive ramp: the percentages in order (100: the build made current), and the pause after each. */
  steps?: number[];
  pauseSeconds?: number;
  /** Health limits of a progressive ramp, over the new build's runs since the ramp began. */
  maxFailures?: number;
  maxStuck?: number;
  /** A run whose workflow task has waited this long counts as stuck. */
  stuckAfterSeconds?: number;
  /** How long the gate run may take on the target build before it is refused (default 60). */
  gateTimeoutSeconds?: number;
}

/** What `--help` prints: the steps and flags of the header above, for a person at a terminal. */
export const DEPLOY_USAGE = `npm run deploy -- <step> [flags]

Steps:
  status                             the deployment's current and ramping builds, each build's open runs
  gate     [--build-id B]            the gate alone (exit 1 when refused): the replay gate, then the gate run
  ramp     [--build-id B] --percent P  the gate, then P % of new runs to B; --percent 0 ends the ramp
  ramp     [--build-id B] --steps 5,25,50,100 --pause D [--max-failures N] [--max-stuck N] [--stuck-after D]
           [--wait]                  the gate, then each share in turn (100: B current), each watched for D; after
                                     each pause B's runs since the ramp began are read from the server: failed runs
                                     and failing workflow tasks over N (default 0), or runs whose workflow task
                                     waited over --stuck-after (default 60s) over N (default 0), undo the ramp by
                                     themselves (exit 1); with --wait, health is read and printed every 15 s of each
                                     pause, and the ramp undone as soon as it is over a limit; a ramp that cannot go
                                     on (B no longer served, its health unread, the server unreachable) is undone too
  rollout  [--build-id B]            the gate, then B current: every new run starts on B
  drain    --build-id A [--wait] [--grace S]
                                     A may stop once routing sends it no new run, no open run is on it or pinned
                                     to it, and either the server says drained or A stopped taking new runs S
                                     seconds ago (default 180); with --wait, until then (or until A takes new runs
                                     again: exit 1)
  move     --from A --to B           every open run pinned to A replayed against B's code (--bundle), then, if all
                                     replay, B is served and passes its gate run, each pinned to B: for a build
                                     that is lost
  settings                           from the fleet's configuration (the workers' environment): each QueryOrders
                                     queue's rate limit set at queue level (it outranks every worker's), and the
                                     sweep Schedule written and marked as the deploy's (workers leave it alone)
  rollback [--build-id A]            the gate for A, then A current again (default: the build that was current
                                     just before the present one, never one that only ramped; needs A's --bundle)

Who may: every step runs as an operator. On a cluster with the authorizer (dev/temporal/authz-server), routing
changes, gate runs and move's pins (UpdateWorkflowExecutionOptions) and settings' queue limit (UpdateTaskQueueConfig)
take an operator's certificate (OU=operators); a worker's, a partner's or a receiver's is refused (PERMISSION_DENIED).

The gate: the replay gate replays the open runs the build would continue (and a sample of closed ones) against the
build's own code; then every task queue of the build must have been polled by one of its workers within the last
90 s (else refused, naming the queue); then the gate run: a short workflow of ours (deployGateWorkflow: a local
activity and one on the queue, nothing booked, no supplier called) started pinned to the build by a versioning
override. A build that fails its first workflow task, or whose workers do not take the run within --gate-timeout, is
refused; a build made before the gate workflow existed passes with a warning (--strict refuses it). Ramp, rollout,
rollback and move change nothing unless the gate passes, and every routing change carries the conflict token read
before the gate (a change another deploy made meanwhile refuses it; nothing changes).

Flags:
  --deployment NAME   the Worker Deployment (default WORKER_DEPLOYMENT_NAME)
  --task-queue QUEUE  default BOOKING_TASK_QUEUE, else hotel-booking
  --build-id ID       gate, ramp and rollout default to this checkout's own build (WORKER_BUILD_ID, else version+commit)
  --bundle FILE       the target build's \`npm run bundle\` output; without it the gate bundles this checkout's
                      src/workflows, and refuses a build id that is not this checkout's own (a rollback needs it;
                      for move, the --to build's)
  --from ID, --to ID  move: the build whose pinned runs go, and the build they go to
  --steps, --pause    a progressive ramp's shares (rising, 1 to 100) and how long each is watched (90s, 5m, 1h)
  --gate-timeout D    how long the gate run may take on the target build before it is refused (default 60s)
  --wait              drain: until the build may stop; ramp --steps: each pause watched (see ramp)
  --strict            every divergence refuses, and a build without the gate workflow
  --json              one JSON line on stdout
  --help              this text

The connection is the CLI's (TEMPORAL_ADDRESS, TEMPORAL_TLS_*, PAYLOAD_ENCRYPTION_KEYS). docs/operations.md,
"Deploying a new build", has the whole sequence.`;

/** Whether the command line asks for the usage text (then nothing else is read or checked). */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h') || argv[0] === 'help';
}

/** Reads the command line; every mistake is a DeployError naming the flag. */
export function parseDeployArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): DeployArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        deployment: { type: 'string' },
        'task-queue': { type: 'string' },
        'build-id': { type: 'string' },
        percent: { type: 'string' },
        bundle: { type: 'string' },
        strict: { type: 'boolean', default: false },
        wait: { type: 'boolean', default: false },
        grace: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        steps: { type: 'string' },
        pause: { type: 'string' },
        'max-failures': { type: 'string' },
        'max-stuck': { type: 'string' },
        'stuck-after': { type: 'string' },
        'gate-timeout': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
  } catch (err) {
    // node:util's own words ("Unknown option '--x'"), and where the list of flags is.
    throw new DeployError(`${(err as Error).message} (npm run deploy -- --help lists the steps and flags)`);
  }
  const { values, positionals } = parsed;
  const step = positionals[0] as DeployStep | undefined;
  if (!step || !DEPLOY_STEPS.includes(step)) {
    throw new DeployError(`step: one of ${DEPLOY_STEPS.join(', ')}, got ${step ?? 'none'}`);
  }
  const deploymentName = values.deployment ?? env.WORKER_DEPLOYMENT_NAME;
  if (!deploymentName || !DEPLOYMENT_NAME_PATTERN.test(deploymentName)) {
    throw new DeployError('--deployment (or WORKER_DEPLOYMENT_NAME): the Worker Deployment, letters, digits, - and _');
  }
  // The build a gate, ramp or rollout is for: named, else this checkout's (or image's) own, as its workers compute it.
  const buildId =
    values['build-id'] ??
    (['gate', 'rollout', 'ramp'].includes(step) ? (env.WORKER_BUILD_ID ?? defaultBuildId(env)) : undefined);
  if (buildId !== undefined && !BUILD_ID_PATTERN.test(buildId)) {
    throw new DeployError(`--build-id: letters, digits and . _ + - only, got "${buildId}"`);
  }
  if (step === 'drain' && !buildId) throw new DeployError('--build-id: drain needs the build it waits for');
  const from = buildIdFlag('--from', values.from);
  const to = buildIdFlag('--to', values.to);
  if (step === 'move' && (!from || !to || from === to)) {
    throw new DeployError('--from and --to: move needs the build whose pinned runs go and another build they go to');
  }
  const steps = values.steps === undefined ? undefined : parseSteps(values.steps);
  if (steps && step !== 'ramp') throw new DeployError('--steps: only a ramp takes steps');
  if (steps && values.percent !== undefined) throw new DeployError('--steps or --percent: a ramp takes one of them');
  const pauseSeconds = values.pause === undefined ? undefined : parseDuration('--pause', values.pause);
  if (steps && pauseSeconds === undefined) throw new DeployError('--pause: how long each step of --steps is watched');
  const percentText = values.percent;
  let percent: number | undefined;
  if (percentText !== undefined) {
    percent = Number(percentText);
    if (!Number.isFinite(percent) || percent < 0 || percent > 100) {
      throw new DeployError(`--percent: 0 to 100, got "${percentText}"`);
    }
  } else if (step === 'ramp' && !steps) {
    throw new DeployError('--percent: the share of new runs the build takes, 0 to 100 (or --steps and --pause)');
  }
  const graceText = values.grace ?? String(DEFAULT_GRACE_SECONDS);
  const graceSeconds = Number(graceText);
  if (!/^\d+$/.test(graceText) || graceSeconds > 86_400) {
    throw new DeployError(`--grace: whole seconds, 0 to 86400, got "${graceText}"`);
  }
  return {
    step,
    deploymentName,
    graceSeconds,
    taskQueue: values['task-queue'] ?? env.BOOKING_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
    ...(buildId ? { buildId } : {}),
    ...(percent !== undefined ? { percent } : {}),
    ...(values.bundle ? { bundle: values.bundle } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(steps ? { steps } : {}),
    ...(pauseSeconds !== undefined ? { pauseSeconds } : {}),
    maxFailures: count('--max-failures', values['max-failures'] ?? '0'),
    maxStuck: count('--max-stuck', values['max-stuck'] ?? '0'),
    stuckAfterSeconds: parseDuration('--stuck-after', values['stuck-after'] ?? '60s'),
    gateTimeoutSeconds: parseDuration('--gate-timeout', values['gate-timeout'] ?? '60s'),
    strict: values.strict!,
    wait: values.wait!,
    json: values.json!,
  };
}

function buildIdFlag(flag: string, value: string | undefined): string | undefined {
  if (value !== undefined && !BUILD_ID_PATTERN.test(value)) {
    throw new DeployError(`${flag}: a build id, letters, digits and . _ + - only, got "${value}"`);
  }
  return value;
}

function count(flag: string, text: string): number {
  if (!/^\d{1,6}$/.test(text)) throw new DeployError(`${flag}: a whole number, got "${text}"`);
  return Number(text);
}

/** `5,25,50,100`: rising percentages, each 1 to 100. */
export function parseSteps(text: string): number[] {
  const steps = text.split(',').map((t) => Number(t.trim()));
  const rising = steps.every((p, i) => Number.isInteger(p) && p >= 1 && p <= 100 && (i === 0 || p > steps[i - 1]!));
  if (steps.length === 0 || !rising) {
    throw new DeployError(`--steps: rising whole percentages 1 to 100, comma-separated (5,25,50,100), got "${text}"`);
  }
  return steps;
}

/** `90`, `90s`, `5m`, `1h`: whole seconds, at most a day. */
export function parseDuration(flag: string, text: string): number {
  const match = /^(\d{1,6})(s|m|h)?$/.exec(text);
  const seconds = match ? Number(match[1]) * { s: 1, m: 60, h: 3600 }[(match[2] ?? 's') as 's' | 'm' | 'h'] : NaN;
  if (!(seconds <= 86_400))
    throw new DeployError(`${flag}: a duration such as 90s, 5m or 1h, at most 24h, got "${text}"`);
  return seconds;
}

export interface DeployIo {
  say(line: string): void;
  identity: string;
  /** How long `drain --wait` waits between two counts. */
  pollMs?: number;
  /** How long a move waits for the new build's workers to poll every queue the current build polls (default 60 s). */
  registerWaitMs?: number;
  /** How recent a poll must be for a queue to count as served (default 90 s: an idle long poll lasts a minute). */
  liveWithinMs?: number;
}

/** A step's outcome; the value is what `--json` prints. */
export interface DeployResult {
  exitCode: 0 | 1;
  value: Record<string, unknown>;
}
