/**
 * Build D of the deploy drill (`npm run chaos -- --deploy`): a bad release its gate cannot see. Its code is
 * src/workflows', and it replays every history src/workflows replays, so the replay gate passes it; its gate workflow
 * runs, so the gate run passes it too. But every new booking, order run, sweep and note throws in its first workflow
 * task (as a release would whose bug shows only on live runs: a setting read at a run's start, say). Replay cannot see
 * that, and none of its runs ever completes a task, so none is pinned to it: only the health a progressive ramp reads
 * (`deploy ramp --steps`: workflow tasks failing on the build) can stop it, and the ramp must undo itself.
 */
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import * as released from '../../../src/workflows';
import { pinnedWhenVersioned } from '../../../src/workflows/versioning';

export { deployGateWorkflow } from '../../../src/workflows';

/**
 * `workflow` as released, but a run's first activation throws unless it is replayed: a programming error, so the
 * SDK fails the workflow task (the server retries it) and never the run itself.
 */
function newRunsFail<I extends unknown[], O>(workflow: (...input: I) => Promise<O>): (...input: I) => Promise<O> {
  const wrapped = async (...input: I): Promise<O> => {
    if (!workflowInfo().unsafe.isReplaying) {
      throw new TypeError('build D fails the first workflow task of every new run (a bad release replay cannot see)');
    }
    return workflow(...input);
  };
  setWorkflowOptions(pinnedWhenVersioned, wrapped);
  return wrapped;
}

export const bookingWorkflow = newRunsFail(released.bookingWorkflow);
export const orderWorkflow = newRunsFail(released.orderWorkflow);
export const reconciliationSweepWorkflow = newRunsFail(released.reconciliationSweepWorkflow);
export const operatorNoteWorkflow = newRunsFail(released.operatorNoteWorkflow);
