/**
 * The booking CLI's verbs for a booking that exists: `status`, `approve`, `reject` and `list`
 * (`npm run book -- <verb> ...`; docs/cli.md). One request or a few, no reconnect loop: a lost connection is
 * an error (exit 1); ask again.
 */
import {
  ApplicationFailure,
  WorkflowFailedError,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import {
  approvePriceChange,
  BookingStageKey,
  bookingWorkflowId,
  CustomerReferenceNoKey,
  getBookingHandle,
  getOrderHandle,
  orderWorkflowId,
  type BookingErrorType,
  type BookingOutcome,
  type BookingState,
  type OrderOutcome,
  type OrderState,
} from '../../api/client/index';
import { bookingStateQuery, ORDER_OUTCOMES_NEEDING_A_PERSON, orderStateQuery } from '../../api/contract/index';
import { describeRunBuild, runBuildOf, type RunBuild } from '../shared/run-build';
import { operatorIdentity, recordedAs } from '../shared/identity';
import type { Money } from '../../api/values/index';
import {
  CliError,
  EXIT,
  formatMoney,
  isNotFound,
  parseMoneyStrict,
  refusalReason,
  usage,
  type ExitCode,
} from './common';

/** How long a state query may take before the state is left out (no worker polling, say). */
const QUERY_MS = 5_000;

export interface VerbIo {
  json: boolean;
  /** Text lines (not printed with --json). */
  say(text: string): void;
  /** The one JSON object printed with --json. */
  print(value: unknown): void;
}

// --- status ---------------------------------------------------------------------------------------

/** One workflow of the reference, as `status --json` prints it. */
export interface WorkflowReport {
  workflowId: string;
  runId: string;
  /** RUNNING, COMPLETED, FAILED, TERMINATED, ... */
  status: string;
  startTime: string;
  closeTime?: string;
  /** The BookingStage search attribute: the booking's stage or outcome, the order run's `order-<stage>`. */
  stage?: string;
  /** The build the run is on (Worker Deployment Versioning), or null when it is unversioned. */
  build: RunBuild | null;
  /** Why a run that closed without a result ended (FAILED, TERMINATED, TIMED_OUT, CANCELED). */
  failure?: FailureReport;
}

/** A failed, terminated, timed-out or cancelled run's failure, as the client decodes it. */
export interface FailureReport {
  /** The ApplicationFailure's type (src/api/contract: BookingErrorTypes), absent for a termination or a timeout. */
  type?: string;
  message: string;
  /** For an invalid request: each field that failed validation. */
  issues?: string[];
  /** True when the caller sent a request that could not be booked: theirs to fix, not a person's to follow up. */
  callersError: boolean;
}

export interface StatusReport {
  reference: string;
  /** Null when there is no booking workflow (an order run may still exist: an orphan the sweep found). */
  booking:
    | (WorkflowReport & {
        /** The bookingState query's answer (absent when no worker answered in time). */
        state?: BookingState;
        outcome?: BookingOutcome;
      })
    | null;
  /** The latest order run (cancellations, quotes, checks), or null when none ran. */
  order: (WorkflowReport & { state?: OrderState; outcome?: OrderOutcome }) | null;
  /** True when the booking or the order ended in a state a person must follow up (exit 4). */
  needsPerson: boolean;
}

/** Order outcomes a person must follow up (each is also an ERROR line and an alert). */
const ORDER_NEEDS_PERSON = new Set<string>(ORDER_OUTCOMES_NEEDING_A_PERSON);

/**
 * Failures that are the caller's error: the request was refused before any Book was sent. Only on a booking's
 * first run: a run continued-as-new has sent Book already, so it failing for any reason needs a person.
 */
const CALLERS_ERRORS = new Set<string>(['InvalidBookingRequest'] satisfies BookingErrorType[]);

function describeOrUndefined(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
}

function workflowReport(d: WorkflowExecutionDescription): WorkflowReport {
  const stage = d.typedSearchAttributes.get(BookingStageKey);
  return {
    workflowId: d.workflowId,
    runId: d.runId,
    status: d.status.name,
    startTime: d.startTime.toISOString(),
    ...(d.closeTime ? { closeTime: d.closeTime.toISOString() } : {}),
    ...(stage ? { stage } : {}),
    build: runBuildOf(d) ?? null,
  };
}

/** A query, or undefined when it does not answer in time (no worker) or fails. */
function queryOrUndefined<T>(client: Client, run: () => Promise<T>): Promise<T | undefined> {
  return client.withDeadline(Date.now() + QUERY_MS, run).catch(() => undefined);
}

/** The closed run's result, or undefined when it failed or was terminated (the status says which). */
function resultOrUndefined<T>(d: WorkflowExecutionDescription, result: () => Promise<T>): Promise<T | undefined> {
  return d.status.name === 'COMPLETED' || d.status.name === 'CONTINUED_AS_NEW'
    ? result().catch(() => undefined)
    : Promise.resolve(undefined);
}

/** A run that closed without a result: failed, terminated, timed out, cancelled. */
function closedBadly(d: WorkflowExecutionDescription | undefined): d is WorkflowExecutionDescription {
  return !!d && !['RUNNING', 'COMPLETED', 'CONTINUED_AS_NEW'].includes(d.status.name);
}

/** Whether this run is the workflow's first (not one continued-as-new); false when the server does not say. */
function isFirstRun(d: WorkflowExecutionDescription): boolean {
  return d.raw.workflowExecutionInfo?.firstRunId === d.runId;
}

/**
 * What the failure result() rejects with says, or undefined when it cannot be read (the error was not the run's
 * failure: a lost connection, say). `callersErrorPossible` is false for runs whose failure always needs a person.
 */
export function failureReport(err: unknown, callersErrorPossible: boolean): FailureReport | undefined {
  if (!(err instanceof WorkflowFailedError)) return undefined;
  const cause = err.cause ?? err;
  const type = cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
  const issues = cause instanceof ApplicationFailure ? issuesIn(cause.details) : undefined;
  return {
    ...(type ? { type } : {}),
    message: cause.message,
    ...(issues ? { issues } : {}),
    callersError: callersErrorPossible && type !== undefined && CALLERS_ERRORS.has(type),
  };
}

/** The `issues` an InvalidBookingRequest failure carries in its details (`[{ issues: string[] }]`). */
function issuesIn(details: unknown): string[] | undefined {
  const first: unknown = Array.isArray(details) ? details[0] : undefined;
  const issues = first && typeof first === 'object' ? (first as { issues?: unknown }).issues : undefined;
  return Array.isArray(issues) && issues.every((i) => typeof i === 'string') ? issues : undefined;
}

function failureOrUndefined(
  d: WorkflowExecutionDescription | undefined,
  result: () => Promise<unknown>,
  callersErrorPossible: boolean,
): Promise<FailureReport | undefined> {
  if (!closedBadly(d)) return Promise.resolve(undefined);
  return result().then(
    () => undefined,
    (err: unknown) => failureReport(err, callersErrorPossible),
  );
}

export async function statusReport(client: Client, reference: string): Promise<StatusReport | undefined> {
  const [booking, order] = await Promise.all([
    describeOrUndefined(client, bookingWorkflowId(reference)),
    describeOrUndefined(client, orderWorkflowId(reference)),
  ]);
  if (!booking && !order) return undefined;
  const bookingHandle = getBookingHandle(client, reference);
  const orderHandle = getOrderHandle(client, reference);
  const [bookingState, bookingOutcome, orderState, orderOutcome, bookingFailure, orderFailure] = await Promise.all([
    booking?.status.name === 'RUNNING'
      ? queryOrUndefined(client, () => bookingHandle.query(bookingStateQuery))
      : Promise.resolve(undefined),
    booking && booking.status.name !== 'RUNNING'
      ? resultOrUndefined(booking, () => bookingHandle.result())
      : Promise.resolve(undefined),
    order?.status.name === 'RUNNING'
      ? queryOrUndefined(client, () => orderHandle.query(orderStateQuery))
      : Promise.resolve(undefined),
    order && order.status.name !== 'RUNNING'
      ? resultOrUndefined(order, () => orderHandle.result())
      : Promise.resolve(undefined),
    failureOrUndefined(booking, () => bookingHandle.result(), !!booking && isFirstRun(booking)),
    failureOrUndefined(order, () => orderHandle.result(), false),
  ]);
  const needsPerson =
    bookingOutcome?.kind === 'unresolved' ||
    (orderOutcome !== undefined && ORDER_NEEDS_PERSON.has(orderOutcome.kind)) ||
    (closedBadly(booking) && bookingFailure?.callersError !== true) ||
    closedBadly(order);
  return {
    reference,
    booking: booking
      ? {
          ...workflowReport(booking),
          ...(bookingState ? { state: bookingState } : {}),
          ...(bookingOutcome ? { outcome: bookingOutcome } : {}),
          ...(bookingFailure ? { failure: bookingFailure } : {}),
        }
      : null,
    order: order
      ? {
          ...workflowReport(order),
          ...(orderState ? { state: orderState } : {}),
          ...(orderOutcome ? { outcome: orderOutcome } : {}),
          ...(orderFailure ? { failure: orderFailure } : {}),
        }
      : null,
    needsPerson,
  };
}

function bookingLines(b: NonNullable<StatusReport['booking']>): string[] {
  const lines = [`Booking workflow ${b.workflowId}: ${b.status}, started ${b.startTime}`];
  if (b.closeTime) lines.push(`  closed ${b.closeTime}`);
  if (b.stage) lines.push(`  stage: ${b.stage}`);
  lines.push(`  build: ${describeRunBuild(b.build)}`);
  const s = b.state;
  if (s) {
    if (s.supplier) lines.push(`  supplier account: ${s.supplier}`);
    lines.push(`  book attempts: ${s.bookAttempts.length}, polls: ${s.polls.length}`);
    if (s.expectedPrice) lines.push(`  expected price: ${formatMoney(s.expectedPrice)}`);
    if (s.currentPrice) lines.push(`  current price: ${formatMoney(s.currentPrice)}`);
    if (s.stage === 'awaiting-price-approval' && s.currentPrice)
      lines.push(
        `  waiting for a price approval: npm run book -- approve --ref ${s.customerReferenceNo} ` +
          `--price ${s.currentPrice.amount}${s.currentPrice.currency} (or reject --ref ...)`,
      );
    if (s.nextPollAt) lines.push(`  next poll at: ${s.nextPollAt}`);
    if (s.nextBookAt) lines.push(`  next Book at: ${s.nextBookAt} (the last was refused before any work)`);
    if (s.deadlineAt) lines.push(`  recovery deadline: ${s.deadlineAt}`);
  } else if (b.status === 'RUNNING') lines.push('  state: no worker answered the query');
  if (b.outcome?.kind === 'failed')
    lines.push(`  failed: ${b.outcome.reason}${b.outcome.errorType ? ` (${b.outcome.errorType})` : ''}`);
  if (b.outcome) lines.push(`  outcome: ${JSON.stringify(b.outcome)}`);
  lines.push(...failureLines(b.failure));
  return lines;
}

/** Why a run closed without a result; for a caller's error, whose it is. */
function failureLines(f: FailureReport | undefined): string[] {
  if (!f) return [];
  const lines = [`  why: ${f.type ? `${f.type}: ` : ''}${f.message}`];
  if (f.callersError)
    lines.push(
      '  the request was invalid: the error of the service that started it, which fixes it; nothing was booked',
    );
  return lines;
}

function orderLines(o: NonNullable<StatusReport['order']>): string[] {
  const lines = [`Order workflow ${o.workflowId} (latest run): ${o.status}, started ${o.startTime}`];
  if (o.closeTime) lines.push(`  closed ${o.closeTime}`);
  if (o.stage) lines.push(`  stage: ${o.stage}`);
  lines.push(`  build: ${describeRunBuild(o.build)}`);
  if (o.state) lines.push(`  state: ${JSON.stringify(o.state)}`);
  if (o.outcome) lines.push(`  outcome: ${JSON.stringify(o.outcome)}`);
  lines.push(...failureLines(o.failure));
  return lines;
}

export async function runStatus(client: Client, reference: string, io: VerbIo): Promise<ExitCode> {
  const report = await statusReport(client, reference);
  if (!report) throw new CliError(EXIT.NOT_FOUND, `No booking (and no order run) for reference ${reference}`);
  io.say(`Booking ${reference}`);
  for (const line of report.booking ? bookingLines(report.booking) : ['No booking workflow (an order run only)'])
    io.say(line);
  for (const line of report.order ? orderLines(report.order) : ['No order run (none was asked for)']) io.say(line);
  if (report.needsPerson) io.say('Needs a person: the booking or its order ended in a state a person must follow up');
  io.print(report);
  return report.needsPerson ? EXIT.NEEDS_PERSON : EXIT.OK;
}

// --- approve / reject -----------------------------------------------------------------------------

export interface ApprovalReport {
  reference: string;
  approved: boolean;
  price: Money;
  /** The update's answer: accepted mirrors `approved`; the stage the booking was in when it was taken. */
  answer: { accepted: boolean; stage: string };
}

/**
 * Answers the booking's price question. `approve` needs the price (it must equal the one awaiting approval, so a
 * stale approval fails); `reject` takes it from the booking's state when --price is not given.
 */
export async function runApproval(
  client: Client,
  command: { verb: 'approve' | 'reject'; reference: string; price?: string; by?: string },
  io: VerbIo,
): Promise<ExitCode> {
  const { verb, reference } = command;
  if (verb === 'approve' && command.price === undefined)
    throw usage(
      'approve: --price <amount><CURRENCY> is required, e.g. --price 250.66USD (the price awaiting approval)',
    );
  let price = command.price !== undefined ? parseMoneyStrict(command.price, '--price') : undefined;
  if (command.by !== undefined && command.by.trim() === '') throw usage('--by: expected a name');
  const handle = getBookingHandle(client, reference);
  if (!price) {
    const state = await handle.query(bookingStateQuery).catch((err: unknown) => {
      if (isNotFound(err)) throw new CliError(EXIT.NOT_FOUND, `No booking for reference ${reference}`);
      throw err;
    });
    if (state.stage !== 'awaiting-price-approval' || !state.currentPrice)
      throw new CliError(EXIT.REFUSED, `No price change is awaiting approval (stage: ${state.stage})`);
    price = state.currentPrice;
  }
  const approval = { approved: verb === 'approve', price, approvedBy: recordedAs(operatorIdentity(), command.by) };
  const answer = await approvePriceChange(client, reference, approval).catch(async (err: unknown) => {
    if (isNotFound(err)) {
      // An update to a booking that has ended is answered "not found" too: say which it is.
      const described = await describeOrUndefined(client, bookingWorkflowId(reference));
      if (!described) throw new CliError(EXIT.NOT_FOUND, `No booking for reference ${reference}`);
      const stage = described.typedSearchAttributes.get(BookingStageKey) ?? described.status.name;
      throw new CliError(EXIT.REFUSED, `Refused: the booking has ended (${stage}); no price change awaits approval`);
    }
    const reason = refusalReason(err);
    if (reason !== undefined) throw new CliError(EXIT.REFUSED, `Refused: ${reason}`);
    throw err;
  });
  io.say(
    `Booking ${reference}: price ${formatMoney(price)} ${verb === 'approve' ? 'approved' : 'rejected'} ` +
      `(the booking was ${answer.stage}); \`npm run book -- status --ref ${reference}\` follows it`,
  );
  const report: ApprovalReport = { reference, approved: approval.approved, price, answer };
  io.print(report);
  return EXIT.OK;
}

// --- list -----------------------------------------------------------------------------------------

export interface ListedWorkflow {
  reference: string | null;
  stage: string;
  workflowId: string;
  runId: string;
  type: string;
  status: string;
  startTime: string;
  closeTime?: string;
  /** The build the run is on, as visibility lists it, or null when it is unversioned. */
  build: RunBuild | null;
}

export interface ListReport {
  stage: string;
  /** The visibility query sent. */
  query: string;
  limit: number;
  workflows: ListedWorkflow[];
}

/** A BookingStage value: lower-case words and dashes (`unresolved`, `recovering`, `order-cancel-failed`). */
const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

export function parseLimit(text: string | undefined): number {
  if (text === undefined) return 50;
  if (!/^[1-9][0-9]{0,3}$/.test(text) || Number(text) > 1000)
    throw usage(`--limit: expected a whole number from 1 to 1000 (got "${text}")`);
  return Number(text);
}

export async function runList(
  client: Client,
  command: { stage: string | undefined; limit: string | undefined },
  io: VerbIo,
): Promise<ExitCode> {
  const { stage } = command;
  if (stage === undefined)
    throw usage('list: --stage <stage> is required, e.g. --stage unresolved (docs/cli.md lists the stages)');
  if (!STAGE_PATTERN.test(stage))
    throw usage(`--stage: expected a stage such as unresolved, recovering or order-cancel-failed (got "${stage}")`);
  const limit = parseLimit(command.limit);
  const query = `BookingStage = "${stage}"`;
  const workflows: ListedWorkflow[] = [];
  for await (const w of client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
    workflows.push({
      reference: w.typedSearchAttributes.get(CustomerReferenceNoKey) ?? null,
      stage: w.typedSearchAttributes.get(BookingStageKey) ?? stage,
      workflowId: w.workflowId,
      runId: w.runId,
      type: w.type,
      status: w.status.name,
      startTime: w.startTime.toISOString(),
      ...(w.closeTime ? { closeTime: w.closeTime.toISOString() } : {}),
      build: runBuildOf(w) ?? null,
    });
    if (workflows.length >= limit) break;
  }
  if (workflows.length === 0) io.say(`No workflow has BookingStage "${stage}"`);
  else {
    io.say(['REFERENCE', 'STAGE', 'WORKFLOW ID', 'STARTED', 'BUILD'].join('\t'));
    for (const w of workflows)
      io.say([w.reference ?? '-', w.stage, w.workflowId, w.startTime, w.build?.buildId ?? 'unversioned'].join('\t'));
    if (workflows.length >= limit) io.say(`(first ${limit}; --limit shows more)`);
  }
  const report: ListReport = { stage, query, limit, workflows };
  io.print(report);
  return EXIT.OK;
}
