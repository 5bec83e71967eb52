/**
 * orderWorkflow, on demand: one run per piece of work on a confirmed booking's order, `order:<reference>`.
 *  - A caller's cancelBooking update starts it (Update-With-Start, attaching to a run already open): the run reads
 *    the order fresh with QueryOrders, quotes the fee that applies now in the order's currency, and with
 *    `{confirm: true}` at that very fee cancels by the Cancel rule and follows the order to its end (cancel.ts).
 *  - onCancelAfterBook and the sweep's orphans send it `autoCancel` by signal-with-start, so an open run takes it
 *    too: it waits for the order to be cancellable and cancels it; not done, a person is told (auto-cancel.ts).
 *  - A supplier callback for a reference no workflow follows, or an operator, sends it `checkOrder` (signal-with-
 *    start), which verifies the order against its booking (work.ts).
 *  - It ends when its work is done; the next request starts a new run. Nothing waits for weeks.
 * An operator's "Request cancellation" lets a Cancel in flight finish, sends nothing more, and ends with an
 * outcome.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import { orderInputIssues, refuseInput } from '../input-guard';
import { pinnedWhenVersioned } from '../versioning';
import type { OrderCheck, OrderOutcome } from '../../api/contract/index';
import { cancelOnItsOwn, takeAutoCancel } from './auto-cancel';
import { follow } from './cancel';
import type { OrderCarry, OrderWorkflowArgs } from './carry';
import { listenOrder } from './messages';
import { OrderRun } from './run';
import { checkOrderStart } from './proxies';

export type { OrderCarry, OrderWorkflowArgs } from './carry';
import { answerNotOurs, answerRequest, checkOrder } from './work';

/**
 * PINNED: a run that sent Cancel follows it on the build that sent it, up to a day, through continue-as-new.
 * Signals and updates sent to an open run (a callback, a second confirm) go to that build; a new run (the next
 * request) starts on the current build.
 */
setWorkflowOptions(pinnedWhenVersioned, orderWorkflow);

export async function orderWorkflow(input: OrderWorkflowArgs): Promise<OrderOutcome> {
  // Its own last guard: an input nobody could send (a carry on a first run, another reference's id, a schedule out
  // of bounds) is refused before any command, whoever was let through to start it.
  const issues = orderInputIssues(input, workflowInfo());
  if (issues.length > 0) throw refuseInput('InvalidOrderInput', issues);
  const run = new OrderRun(input);
  // A continued run knows what it carries before any handler is set: an update buffered for its first task is then
  // judged against the cancellation it follows, not against an empty run.
  if (input.carry) restoreCarry(run, input.carry);
  listenOrder(run);
  // Noted, not obeyed at once: the work below is not cancellable, so a Cancel in flight finishes.
  CancellationScope.current().cancelRequested.catch(() => {
    run.interrupted = true;
  });
  return CancellationScope.nonCancellable(() => work(run, input));
}

async function work(run: OrderRun, input: OrderWorkflowArgs): Promise<OrderOutcome> {
  // The first piece of work reads the order fresh: hints that came with the start (signal-with-start) are seen.
  run.hintsSeen = run.hints;
  if (input.carry) await resume(run, input.carry, input);
  else await checkStart(run, input);

  for (;;) {
    await condition(
      () =>
        run.requests.length > 0 ||
        run.autoCancels.length > 0 ||
        run.checks.length > 0 ||
        run.hints > run.hintsSeen ||
        allHandlersFinished(),
    );
    if (run.notOurs !== undefined) {
      const outcome = answerNotOurs(run, run.notOurs);
      if (run.requests.length + run.autoCancels.length + run.checks.length > 0 || !allHandlersFinished()) continue;
      return run.finish(outcome);
    }
    const request = run.requests.shift();
    if (request) {
      run.current = request;
      await answerRequest(run, request, input);
      run.current = undefined;
      continue;
    }
    const auto = run.autoCancels.shift();
    if (auto) {
      await takeAutoCancel(run, auto, input);
      continue;
    }
    if (run.checks.length > 0 || run.hints > run.hintsSeen) {
      run.hintsSeen = run.hints;
      const check = takeChecks(run);
      // A hint after a cancellation of this run adds nothing: it has already read the order to its end.
      if (!run.state.cancellation) run.recordOutcome(await checkOrder(run, check));
      continue;
    }
    // A run given nothing to do (an update refused before it was taken, a start without work) checks the order;
    // then the loop looks again, so a signal that came meanwhile is taken, not dropped by the run's end.
    if (!run.outcome) {
      run.recordOutcome(await checkOrder(run, undefined));
      continue;
    }
    break;
  }
  return run.finish(run.outcome);
}

/**
 * The run's first step, before any read of the supplier: the input within the worker's bounds, and the order its own
 * namespace's booking made. Not ours (another partner's reference on a shared supplier account, a booking that never
 * sent Book) or not verifiable: every piece of work is answered not-found, nothing read, nothing sent.
 */
async function checkStart(run: OrderRun, input: OrderWorkflowArgs): Promise<void> {
  const { carry: _carry, ...start } = input;
  let checked;
  try {
    checked = await checkOrderStart({ input: start });
  } catch {
    run.notOurs = 'whether a booking of this namespace made this order could not be read: ask again';
    return;
  }
  if (checked.kind === 'invalid') throw refuseInput('InvalidOrderInput', checked.issues);
  if (checked.kind === 'not-ours') run.notOurs = checked.reason;
  else if (checked.supplier) run.onAccount(checked.supplier);
}

/** The checks asked so far, as one: the latest's words, and an operator's resolvesUnresolved if any asked it. */
function takeChecks(run: OrderRun): OrderCheck | undefined {
  const asked = run.checks.splice(0);
  const latest = asked[asked.length - 1];
  if (!latest) return undefined;
  return asked.some((c) => c.resolvesUnresolved) ? { ...latest, resolvesUnresolved: true } : latest;
}

/** What the run before continue-as-new knew: its state, who asked for the cancellation, the outcome so far. */
function restoreCarry(run: OrderRun, carry: OrderCarry): void {
  Object.assign(run.state, carry.state);
  if (run.state.supplier) run.onAccount(run.state.supplier);
  if (carry.autoAsked) run.autoAsked = carry.autoAsked;
  if (carry.outcome) run.outcome = carry.outcome;
}

/** Takes up what the run before continue-as-new was doing (its state already restored). */
async function resume(run: OrderRun, carry: OrderCarry, input: OrderWorkflowArgs): Promise<void> {
  if (carry.cancel) run.recordOutcome(await follow(run, carry.cancel.plan, carry.cancel.follow, input));
  else if (carry.wait) run.recordOutcome(await cancelOnItsOwn(run, carry.wait.auto, input, carry.wait.from));
}
