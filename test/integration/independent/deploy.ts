/**
 * `npm run deploy` as an operator runs it (docs/operations.md, "Deploying a new build"; `npm run deploy -- --help`),
 * and one versioned worker of a build as `npm run worker` starts it, for the independent checks of #46.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { runProgram, type ProgramRun } from '../../harness/program';
import { startWorkerProcess, type WorkerProcess } from '../../harness/worker-process';

export const ROOT = path.resolve(__dirname, '../../..');

/** A deployment of these checks' own: its name is also its task queue, so no other test's workers serve it. */
export function deploymentName(): string {
  return `indep-deploy-${randomUUID().slice(0, 8)}`;
}

export function deploy(temporalAddress: string, deployment: string, args: string[]): Promise<ProgramRun> {
  return runProgram('npm', ['run', '-s', 'deploy', '--', args[0]!, '--deployment', deployment, ...args.slice(1)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TEMPORAL_ADDRESS: temporalAddress, BOOKING_TASK_QUEUE: deployment },
    timeoutMs: 150_000,
  });
}

/** A worker of `buildId` in `deployment` (WORKER_DEPLOYMENT_NAME, WORKER_BUILD_ID), polling until it is killed. */
export function versionedWorker(
  temporalAddress: string,
  supplierUrl: string,
  deployment: string,
  buildId: string,
): Promise<WorkerProcess> {
  return startWorkerProcess(
    { temporalAddress, supplierUrl },
    {
      BOOKING_TASK_QUEUE: deployment,
      WORKER_DEPLOYMENT_NAME: deployment,
      WORKER_BUILD_ID: buildId,
      SUPPLIER_PROFILE: '{}',
      RECONCILIATION_SCHEDULE: 'off',
    },
    'Worker polling task queue',
  );
}
