/**
 * bookingWorkflow: CheckAvail → Book → durable recovery loop.
 *
 * The story, in order:
 *  1. Validate the request (an invalid one fails at once, naming each field).
 *  2. CheckAvail; judge the price against what the user saw and the price-change policy, asking a
 *     person through the `approvePriceChange` update when the policy says so.
 *  3. Book with the caller's reference. From here on, workflow cancellation no longer abandons the
 *     booking: money may be at stake, so the order's fate is still found out and reported.
 *  4. When Book's outcome is unknown (timeout, 504, reset after send, pending order), poll QueryOrders
 *     on the spec's schedule; re-send Book (same reference, so never a second order) only when the
 *     order is still not found 10 minutes after the Book; after the deadline, report `unresolved`.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  allHandlersFinished,
  workflowInfo,
} from '@temporalio/workflow';
import type { BookingActivities, BookOutcome, CheckAvailOutcome, OrderView } from '../activities/booking';
// Values from the contract's zod-free parts only; its schemas are types here (see ../contract/schemas).
import {
  ACTIVITY_TIMEOUT_SECONDS,
  approvePriceChangeUpdate,
  bookingStateQuery,
  bookingWorkflowId,
  BookingStageKey,
  CustomerReferenceNoKey,
  queryOrdersTaskQueue,
  RECOVERY_DEFAULTS,
  supplierOrderUpdateSignal,
} from '../contract/definitions';
import type {
  BookAttempt,
  BookingOutcome,
  BookingRequest,
  BookingStage,
  BookingState,
  ParsedBookingRequest,
  PollRecord,
  PriceApproval,
  RecoveryPolicy,
  RequestValidation,
} from '../contract';
import type { Money } from '../values';
import { judgePrice } from './price';
import { pollOffsetSeconds } from './schedule';

const { checkAvail } = proxyActivities<BookingActivities>({
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.checkAvail} seconds`,
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/**
 * Book is never retried by Temporal: an activity that timed out may have reached the supplier, so
 * the workflow decides (recovery), and it re-sends Book itself only where no order can exist.
 * The timeout is above the client's 90 s Book timeout, so the client classifies first; the activity
 * heartbeats every 2 s, so a worker lost mid-Book is noticed after 15 s and recovery starts then.
 */
const { book } = proxyActivities<BookingActivities>({
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.book} seconds`,
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 1 },
});

/**
 * The input check (contract schemas, no I/O) runs as a local activity, in the worker's main thread
 * where the schemas exist once, instead of in every cached workflow (see ../contract/schemas).
 */
const { validateBookingRequest } = proxyLocalActivities<BookingActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});
/** Runs started before this patch validated inside the workflow; they replay on that path. */
const VALIDATE_IN_LOCAL_ACTIVITY = 'validate-request-in-local-activity';

/** A failing QueryOrders is retried with backoff and is not a poll; after 5 minutes it counts as an error poll. */
const queryOrderOptions = {
  startToCloseTimeout: `${ACTIVITY_TIMEOUT_SECONDS.queryOrders} seconds`,
  scheduleToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
/**
 * Since this patch QueryOrders runs on the booking queue's rate-limited companion queue (the
 * fleet-wide cap, see src/worker.ts); runs started before it keep polling on the booking queue.
 */
const QUERY_ORDERS_QUEUE = 'query-orders-on-rate-limited-queue';

/** How often an ARI-changed answer without a package leads to another CheckAvail. */
const MAX_ARI_RECHECKS = 3;
/** Book refused before any work (429, connection refused) is re-sent for at most this long. */
const BOOK_RETRY_WINDOW_MS = 10 * 60_000;
/** Polls kept in state (and carried over continue-as-new); older ones are dropped, counted. */
const MAX_POLLS_KEPT = 200;

/** State carried across continue-as-new while recovering. Internal: not part of the contract. */
interface ResumeState {
  state: BookingState;
  anchorMs: number;
  nextIndex: number;
  deadlineMs: number;
}
export type BookingWorkflowInput = BookingRequest & { resume?: ResumeState };

export async function bookingWorkflow(input: BookingWorkflowInput): Promise<BookingOutcome> {
  // The query answers from the first moment, while the input check (a local activity) is running:
  // clients such as `npm run book` ask for progress right after the start.
  let state: BookingState = input?.resume?.state ?? startingState(input ?? {});
  setHandler(bookingStateQuery, () => state);
  // Decided once per run, at its start, so a run never switches queues half-way through recovery.
  const { queryOrder } = proxyActivities<BookingActivities>(
    patched(QUERY_ORDERS_QUEUE)
      ? { ...queryOrderOptions, taskQueue: queryOrdersTaskQueue(workflowInfo().taskQueue) }
      : queryOrderOptions,
  );

  // A resumed run is past Book: a cancel arriving while its input is re-checked must not end it.
  const { request, recovery } = await (input?.resume
    ? CancellationScope.nonCancellable(() => parseRequest(input))
    : parseRequest(input));
  if (!input.resume) state = startingState(request);
  // One derivation of the session id (startingState), carried over continue-as-new in the state.
  const { sessionId } = state;
  const traceId = workflowInfo().workflowId;
  const context = { ...request.context, sessionId, traceId };
  let approval: PriceApproval | undefined;
  let pendingPrice: Money | undefined;
  let hints = 0;

  setHandler(
    approvePriceChangeUpdate,
    (answer) => {
      approval = answer;
      return { accepted: answer.approved, stage: state.stage };
    },
    {
      validator: (answer) => {
        const issues = approvalIssues(answer);
        if (issues.length > 0) throw new Error(`Invalid approval: ${issues.join('; ')}`);
        if (state.stage !== 'awaiting-price-approval' || !pendingPrice) {
          throw new Error(`No price change is awaiting approval (stage: ${state.stage})`);
        }
        // A second answer in the same workflow task would otherwise pass too, and its caller be told "accepted".
        if (approval !== undefined) throw new Error('The price change was already answered');
        if (!sameMoney(answer.price, pendingPrice)) {
          throw new Error(
            `Approval is for ${fmt(answer.price)} but the price awaiting approval is ${fmt(pendingPrice)}`,
          );
        }
      },
    },
  );
  setHandler(supplierOrderUpdateSignal, () => {
    hints++;
  });
  // Cancellation is noted, not obeyed, once Book may have reached the supplier.
  CancellationScope.current().cancelRequested.catch(() => {
    state.cancelRequested = true;
  });

  const setStage = (stage: BookingStage, details?: string) => {
    state.stage = stage;
    upsertSearchAttributes([{ key: BookingStageKey, value: stage }]);
    setCurrentDetails(details ?? describe(state));
  };
  const finish = (outcome: BookingOutcome): BookingOutcome => {
    state.outcome = outcome;
    state.nextPollAt = undefined;
    state.stage = 'completed';
    // The outcome kind, not just "completed", so operators can filter for `unresolved` bookings.
    upsertSearchAttributes([{ key: BookingStageKey, value: outcome.kind }]);
    setCurrentDetails(`Outcome: ${outcome.kind}. ${describe(state)}`);
    if (outcome.kind === 'unresolved') {
      log.error('Booking unresolved at the recovery deadline: needs manual follow-up', {
        customerReferenceNo: state.customerReferenceNo,
      });
    }
    return outcome;
  };

  // Also set here, not only by the client helper, for bookings started from other languages or the CLI.
  upsertSearchAttributes([{ key: CustomerReferenceNoKey, value: request.customerReferenceNo }]);

  if (input.resume) {
    setCurrentDetails(describe(state));
    return finish(await CancellationScope.nonCancellable(() => recover(input.resume!)));
  }

  // --- 1. Availability and price (cancellable: nothing is booked yet) ---------------------------
  setStage('checking-availability');
  let accepted: Money | undefined;
  try {
    let outcome: CheckAvailOutcome = await checkAvail({ ratePkgId: request.ratePkgId, context });
    for (let i = 0; outcome.kind === 'ari-changed' && !outcome.price && i < MAX_ARI_RECHECKS; i++) {
      outcome = await checkAvail({ ratePkgId: request.ratePkgId, context });
    }
    if (outcome.kind === 'unavailable') return finish({ kind: 'unavailable' });
    if (outcome.kind === 'ari-changed' && !outcome.price) {
      return finish({
        kind: 'failed',
        reason: `Price changed and the current price could not be read after ${MAX_ARI_RECHECKS + 1} checks`,
        errorType: 'SupplierAriChanged',
        cancelRequested: state.cancelRequested,
      });
    }
    const current = outcome.price;
    state.currentPrice = current;
    const verdict = judgePrice(request.expectedPrice, current, request.priceChangePolicy);
    if (verdict === 'reject') {
      return finish({
        kind: 'price-rejected',
        expectedPrice: request.expectedPrice!,
        currentPrice: current,
        reason: 'policy',
      });
    }
    if (verdict === 'ask') {
      pendingPrice = current;
      setStage(
        'awaiting-price-approval',
        `Price changed from ${fmt(request.expectedPrice)} to ${fmt(current)}: awaiting approval`,
      );
      const timeoutSeconds = request.priceChangePolicy?.approvalTimeoutSeconds ?? 900;
      const answered = await condition(() => approval !== undefined, `${timeoutSeconds} seconds`, {
        summary: 'Awaiting price approval',
      });
      if (!answered || !approval?.approved) {
        return finish({
          kind: 'price-rejected',
          expectedPrice: request.expectedPrice!,
          currentPrice: current,
          reason: answered ? 'refused' : 'approval-timeout',
        });
      }
    }
    accepted = current;
    state.acceptedPrice = current;
  } catch (err) {
    if (isCancellation(err)) return finish({ kind: 'cancelled' });
    // Retries used up, whatever the last failure was (a supplier error, or the activity's own timeout):
    // nothing was booked, and the caller gets an outcome rather than a failed workflow.
    if (err instanceof ActivityFailure) {
      const cause = err.cause;
      return finish({
        kind: 'failed',
        reason: `CheckAvail failed: ${cause?.message ?? err.message}`,
        errorType: cause instanceof ApplicationFailure ? (cause.type ?? undefined) : (cause?.name ?? 'ActivityFailure'),
        cancelRequested: state.cancelRequested,
      });
    }
    throw err;
  }
  if (state.cancelRequested) return finish({ kind: 'cancelled' });
  void accepted;

  // --- 2 and 3. Book and recover (not cancellable: Book may reach the supplier) ------------------
  return finish(await CancellationScope.nonCancellable(() => bookAndResolve()));

  async function bookAndResolve(): Promise<BookingOutcome> {
    const firstBookMs = Date.now();
    const result = await sendBook();
    const decided = decideAfterBook(result);
    if (decided) return decided;
    return recover({
      state,
      anchorMs: Date.now(),
      nextIndex: 0,
      deadlineMs: firstBookMs + recovery.deadlineSeconds * 1000,
    });
  }

  /** Sends Book, re-sending only after a refusal before any work (the Book rule's `refused`). */
  async function sendBook(): Promise<BookOutcome> {
    setStage('booking');
    const started = Date.now();
    for (let wait = 1_000; ; wait = Math.min(wait * 2, 60_000)) {
      const at = new Date().toISOString();
      const outcome = await bookOnce();
      if (outcome.kind === 'refused') {
        if (Date.now() - started >= BOOK_RETRY_WINDOW_MS) {
          return {
            kind: 'rejected',
            errorType: outcome.errorType,
            message: `Book refused for ${BOOK_RETRY_WINDOW_MS / 60_000} minutes`,
          };
        }
        await sleep(outcome.retryAfterMs ?? wait, { summary: `Book refused (${outcome.errorType}); retrying` });
        continue;
      }
      state.bookAttempts.push(attemptRecord(at, outcome));
      return outcome;
    }
  }

  /** One Book, its ending as the Book rule's value (src/activities/book-rule.ts). */
  async function bookOnce(): Promise<BookOutcome> {
    try {
      return await book({
        customerReferenceNo: request.customerReferenceNo,
        ratePkgId: request.ratePkgId,
        holder: request.holder,
        guests: request.guests,
        context,
      });
    } catch (err) {
      const cause = err instanceof ActivityFailure && err.cause instanceof ApplicationFailure ? err.cause : undefined;
      // Histories recorded before the Book rule returned refusals as values threw them (keep until
      // no run from before 2026-11-23 can be open: their recovery deadline, 24 h by default).
      if (cause?.type === 'SupplierRateLimited' || cause?.type === 'SupplierNetworkBeforeSend') {
        return {
          kind: 'refused',
          errorType: cause.type,
          message: cause.message,
          retryAfterMs: cause.nextRetryDelay as number | undefined,
        };
      }
      // The activity itself failed or timed out (the worker died mid-call): the supplier may have acted.
      const message = err instanceof Error ? err.message : String(err);
      return { kind: 'ambiguous', errorType: cause?.type ?? 'ActivityFailure', message };
    }
  }

  /** A final outcome from a Book answer, or undefined when the order must be looked up. */
  function decideAfterBook(result: BookOutcome): BookingOutcome | undefined {
    if (result.kind === 'rejected') {
      return {
        kind: 'failed',
        reason: result.message,
        errorType: result.errorType,
        cancelRequested: state.cancelRequested,
      };
    }
    if (result.kind === 'order') return decideOnOrder(result.order);
    return undefined;
  }

  function decideOnOrder(order: OrderView): BookingOutcome | undefined {
    state.order = stripState(order);
    if (order.state === 'confirmed')
      return { kind: 'confirmed', order: stripState(order), cancelRequested: state.cancelRequested };
    if (order.state === 'failed') {
      return {
        kind: 'failed',
        reason: order.statusRemark ?? `Order ended in status ${order.status}`,
        order: stripState(order),
        cancelRequested: state.cancelRequested,
      };
    }
    return undefined;
  }

  /** The durable polling loop. Poll k happens `pollOffsetSeconds(k)` after the Book it verifies. */
  async function recover(from: ResumeState): Promise<BookingOutcome> {
    let { anchorMs, nextIndex } = from;
    const { deadlineMs } = from;
    state.deadlineAt = new Date(deadlineMs).toISOString();
    let hintsSeen = hints;
    setStage('recovering');

    for (;;) {
      if (shouldContinueAsNew()) {
        await condition(allHandlersFinished);
        return continueAsNew<typeof bookingWorkflow>({
          ...stripResume(input),
          resume: { state, anchorMs, nextIndex, deadlineMs },
        });
      }
      const dueMs = Math.min(anchorMs + pollOffsetSeconds(nextIndex, recovery) * 1000, deadlineMs);
      state.nextPollAt = new Date(dueMs).toISOString();
      setCurrentDetails(describe(state));

      const waitMs = dueMs - Date.now();
      const hinted =
        waitMs > 0
          ? await condition(() => hints > hintsSeen, waitMs, { summary: `Wait for QueryOrders poll ${nextIndex + 1}` })
          : false;
      hintsSeen = hints;
      const trigger = hinted ? 'supplier-hint' : 'schedule';
      if (!hinted) nextIndex++;

      const poll = await pollOnce(anchorMs, trigger);
      if (poll.kind === 'found') {
        const decided = decideOnOrder(poll.order);
        if (decided) return decided;
      }
      if (!hinted && dueMs >= deadlineMs) {
        return {
          kind: 'unresolved',
          customerReferenceNo: state.customerReferenceNo,
          sessionId,
          lastStatus: state.order?.status,
          bookAttempts: state.bookAttempts,
          polls: state.polls,
          cancelRequested: state.cancelRequested,
        };
      }
      const sinceBookMs = Date.now() - anchorMs;
      if (
        !hinted &&
        poll.kind === 'not-found' &&
        sinceBookMs >= recovery.rebookAfterSeconds * 1000 &&
        state.bookAttempts.filter((a) => a.result !== 'rejected').length < recovery.maxBookAttempts
      ) {
        // Still no order long after Book: the request most likely never arrived. The same reference
        // makes a re-sent Book safe: the supplier returns any existing order instead of a second one.
        const result = await sendBook();
        const decided = decideAfterBook(result);
        if (decided) return decided;
        setStage('recovering');
        anchorMs = Date.now();
        nextIndex = 0;
      }
    }
  }

  async function pollOnce(anchorMs: number, trigger: PollRecord['trigger']) {
    const at = new Date();
    const record: PollRecord = {
      at: at.toISOString(),
      sinceBookSeconds: Math.round((at.getTime() - anchorMs) / 1000),
      trigger,
      result: 'error',
    };
    try {
      const result = await queryOrder({ customerReferenceNo: request.customerReferenceNo, traceId });
      record.result = result.kind;
      if (result.kind === 'found') record.status = result.order.status;
      pushPoll(record);
      return result;
    } catch (err) {
      // QueryOrders kept failing for its whole retry window: the booking is still unknown, not failed.
      record.error =
        err instanceof ActivityFailure && err.cause instanceof ApplicationFailure
          ? (err.cause.type ?? err.cause.message)
          : String(err);
      pushPoll(record);
      return { kind: 'error' as const };
    }
  }

  function pushPoll(record: PollRecord) {
    state.polls.push(record);
    if (state.polls.length > MAX_POLLS_KEPT) state.polls.splice(0, state.polls.length - MAX_POLLS_KEPT);
  }

  function shouldContinueAsNew(): boolean {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= recovery.continueAsNewAfterEvents;
  }
}

async function parseRequest(
  input: BookingWorkflowInput,
): Promise<{ request: ParsedBookingRequest; recovery: RecoveryPolicy }> {
  if (input?.resume && !workflowInfo().continuedFromExecutionRunId) {
    // `resume` skips CheckAvail and the price check: only this workflow's own continue-as-new may set it.
    throw ApplicationFailure.create({
      type: 'InvalidBookingRequest',
      message: 'resume: internal to continue-as-new; a new booking must not set it',
      nonRetryable: true,
      details: [{ issues: ['resume: internal to continue-as-new'] }],
    });
  }
  const raw = stripResume(input ?? ({} as BookingWorkflowInput));
  const checked: RequestValidation = patched(VALIDATE_IN_LOCAL_ACTIVITY)
    ? await validateBookingRequest(raw)
    : checkedBeforePatch(raw);
  if (!checked.valid) {
    const { issues } = checked;
    throw ApplicationFailure.create({
      type: 'InvalidBookingRequest',
      message: `Invalid booking request: ${issues.join('; ')}`,
      nonRetryable: true,
      details: [{ issues }],
    });
  }
  const expectedId = bookingWorkflowId(checked.request.customerReferenceNo);
  if (workflowInfo().workflowId !== expectedId) {
    // One workflow per reference is what makes a retried start harmless; another id would allow two.
    throw ApplicationFailure.create({
      type: 'InvalidBookingRequest',
      message: `workflowId: must be "${expectedId}" for this customerReferenceNo`,
      nonRetryable: true,
      details: [{ issues: [`workflowId: must be "${expectedId}"`] }],
    });
  }
  return { request: checked.request, recovery: checked.recovery };
}

/**
 * Runs from before VALIDATE_IN_LOCAL_ACTIVITY validated their input in workflow code, in their first
 * workflow task: a run on that path that is still open passed that check (an invalid input fails there
 * and then), so replaying it needs only the defaults the check applied. Keeping the schemas out of the
 * workflow bundle keeps zod out of every cached workflow. Remove with the patch (see its date).
 */
function checkedBeforePatch(raw: BookingRequest): RequestValidation {
  return {
    valid: true,
    request: raw as ParsedBookingRequest,
    recovery: { ...RECOVERY_DEFAULTS, delaysSeconds: [...RECOVERY_DEFAULTS.delaysSeconds], ...raw.recovery },
  };
}

/** What is wrong with an approval, field by field (the update's input is not checked anywhere else). */
function approvalIssues(answer: PriceApproval): string[] {
  const a = (answer ?? {}) as Partial<Record<keyof PriceApproval, unknown>>;
  const issues: string[] = [];
  if (typeof a.approved !== 'boolean') issues.push('approved: expected boolean');
  const price = a.price as Partial<Money> | undefined;
  if (typeof price?.currency !== 'string' || price.currency === '') issues.push('price.currency: expected string');
  if (typeof price?.amount !== 'number' || !Number.isFinite(price.amount)) issues.push('price.amount: expected number');
  if (a.approvedBy !== undefined && (typeof a.approvedBy !== 'string' || a.approvedBy === '')) {
    issues.push('approvedBy: expected a non-empty string');
  }
  return issues;
}

/** The state before anything happened; from the raw input until it is checked, then from the request. */
function startingState(request: Partial<BookingRequest>): BookingState {
  const customerReferenceNo = String(request.customerReferenceNo ?? '');
  return {
    stage: 'checking-availability',
    customerReferenceNo,
    sessionId: request.sessionId ?? `sess-${customerReferenceNo}`,
    ratePkgId: String(request.ratePkgId ?? ''),
    ...(request.expectedPrice ? { expectedPrice: request.expectedPrice } : {}),
    bookAttempts: [],
    polls: [],
    cancelRequested: false,
  };
}

function stripResume(input: BookingWorkflowInput): BookingRequest {
  const { resume: _resume, ...request } = input;
  return request;
}

function stripState(order: OrderView) {
  const { state: _state, ...summary } = order;
  return summary;
}

function attemptRecord(at: string, outcome: Exclude<BookOutcome, { kind: 'refused' }>): BookAttempt {
  if (outcome.kind === 'order') return { at, result: 'order', status: outcome.order.status };
  return { at, result: outcome.kind, error: outcome.errorType };
}

function sameMoney(a: Money, b: Money): boolean {
  return a.currency === b.currency && a.amount === b.amount;
}

function fmt(m: Money | undefined): string {
  return m ? `${m.amount} ${m.currency}` : 'unknown';
}

/** The view an operator sees in the Web UI ("current details", rendered as Markdown). No personal data. */
function describe(s: BookingState): string {
  const lastPoll = s.polls[s.polls.length - 1];
  return [
    `Stage: ${s.stage}`,
    `Reference: ${s.customerReferenceNo}`,
    `Rate package: ${s.ratePkgId}`,
    s.acceptedPrice ? `Price: ${fmt(s.acceptedPrice)}` : undefined,
    `Book attempts: ${s.bookAttempts.length}`,
    s.polls.length ? `Polls: ${s.polls.length}` : undefined,
    lastPoll
      ? `Last poll: ${lastPoll.at} → ${lastPoll.result}${lastPoll.status !== undefined ? ` (status ${lastPoll.status})` : ''}`
      : undefined,
    s.nextPollAt ? `Next poll: ${s.nextPollAt}` : undefined,
    s.deadlineAt ? `Gives up at: ${s.deadlineAt}` : undefined,
    s.cancelRequested ? 'Cancel requested: the booking is still being resolved' : undefined,
  ]
    .filter(Boolean)
    .map((line) => `- ${line}`)
    .join('\n');
}
