/**
 * The recovery schedule: its arithmetic (one copy, in the contract, tested without a server) and how a workflow waits
 * for the poll it says is due.
 */
export { pollOffsetSeconds } from '../../api/contract/definitions';

/**
 * How long to wait for a poll due at `dueMs`: at least a millisecond, so that a wait the schedule asks for is always
 * a timer. A workflow task's clock is not always the same in its first run and in a replay (the chaos run caught one
 * held on a lost worker's sticky queue that ran on the clock of the task before), and a timer started in one but not
 * the other is a nondeterminism error that stops the workflow for good; a timer's length may differ without harm.
 */
export function waitFor(dueMs: number): number {
  return Math.max(dueMs - Date.now(), 1);
}
