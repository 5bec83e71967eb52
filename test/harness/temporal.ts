/**
 * What a test file uses to reach the servers global-setup started: a time-skipping environment or a
 * dev-server environment over the shared server, and the prebuilt workflow bundle.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { expectWorkerWarnings } from './quiet-worker-logs';

/** The SDK types `create` as private; it is the only way to attach time skipping to a server someone else started. */
type CreateFn = (opts: {
  server: { type: 'existing' };
  supportsTimeSkipping: boolean;
  address: string;
  namespace?: string;
}) => Promise<TestWorkflowEnvironment>;
const create = (TestWorkflowEnvironment as unknown as { create: CreateFn }).create.bind(TestWorkflowEnvironment);

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(
      `${name} is not set: run this file through jest so test/harness/global-setup.ts starts the servers`,
    );
  return value;
}

/** Time-skipping environment on the shared Java test server. Tests using it run one workflow at a time. */
export function connectTimeSkipping(): Promise<TestWorkflowEnvironment> {
  // Every worker on the Java test server notes that it does not advertise keeping heartbeat details of a
  // failed activity; Book heartbeats for liveness only, with no details to keep.
  expectWorkerWarnings(/^WARN Temporal Server 1\.16\.0 or newer is required .*activity_failure_include_heartbeat/);
  return create({
    server: { type: 'existing' },
    supportsTimeSkipping: true,
    address: required('TEST_TIME_SKIPPING_ADDRESS'),
  });
}

/**
 * A time-skipping server of the file's own, stopped by its env.teardown(). For a file that leaves runs the shared
 * server cannot skip past (an update held for a worker that starts later, a run continued onto a queue nobody
 * polls): on the shared server they stalled time skipping for the file after it, whose first test then waited out
 * its timeout. About 3 s to start.
 */
export async function ownTimeSkipping(): Promise<TestWorkflowEnvironment> {
  expectWorkerWarnings(/^WARN Temporal Server 1\.16\.0 or newer is required .*activity_failure_include_heartbeat/);
  const { startTimeSkipping } = await import('./global-setup');
  return startTimeSkipping();
}

/** Environment on the shared dev server (real time, full server, search attributes registered). */
export function connectDevServer(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createFromExistingServer({ address: required('TEST_DEV_SERVER_ADDRESS') });
}

export function workflowBundle(): { codePath: string } {
  return { codePath: required('TEST_WORKFLOW_BUNDLE') };
}
