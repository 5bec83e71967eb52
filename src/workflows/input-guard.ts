/**
 * Every workflow is its own last guard: whatever the authorizer lets through, a run checks the whole of its input at
 * its first step, before any command, and refuses what it cannot verify with a typed, non-retryable failure
 * (`Invalid<Type>Input`, naming each field). Pure and zod-free, so the workflow bundle stays small; what needs the
 * worker's settings or Temporal (recovery bounds, whose booking made an order) is checked by an activity after this.
 *
 * The rules each check enforces:
 *  - the workflow id is the one the input names (`order:<ref>`, `booking:<ref>`): one run per reference is what
 *    makes a retried or a second start harmless;
 *  - what a run hands over continue-as-new (`carry`, `resume`) is taken only on a run continued-as-new: not on a
 *    first run, not on a retry (attempt > 1) and not on a cron run, all of which a starter could make carry it;
 *  - every number within the contract's bounds, every text within its length, no field of a wrong type.
 */
import { ApplicationFailure, type WorkflowInfo } from '@temporalio/workflow';
import { orderWorkflowId, RECOVERY_BOUNDS, SUPPLIER_ACCOUNT_PATTERN } from '../api/contract/definitions';

/** A text a caller passes through (a reference, a Session-Id, a header): as REQUEST_LIMITS.id/header. */
const MAX_TEXT = 256;
const MAX_NOTE = 2000;
const MAX_NAME = 200;
const CONTEXT_KEYS = ['currency', 'language', 'ip', 'test'] as const;
const RECOVERY_KEYS = [
  'delaysSeconds',
  'repeatEverySeconds',
  'rebookAfterSeconds',
  'maxBookAttempts',
  'deadlineSeconds',
  'continueAsNewAfterEvents',
  'feeChangeMarginSeconds',
] as const;

/** The part of workflowInfo() a guard reads. */
export type RunInfo = Pick<WorkflowInfo, 'workflowId' | 'attempt' | 'continuedFromExecutionRunId' | 'cronSchedule'>;

/** Whether this run was continued-as-new by its own workflow: the only run that may take a hand-over. */
export function continuedAsNew(info: RunInfo): boolean {
  return !!info.continuedFromExecutionRunId && info.attempt === 1 && !info.cronSchedule;
}

/** Each issue of an order run's input, `<field>: <why>`; empty when the run may go on. */
export function orderInputIssues(input: unknown, info: RunInfo): string[] {
  if (!isObject(input)) return ['input: must be an object'];
  const issues: string[] = [];
  const ref = input['customerReferenceNo'];
  if (!isText(ref, MAX_TEXT)) issues.push(`customerReferenceNo: must be a text of 1 to ${MAX_TEXT} characters`);
  else if (info.workflowId !== orderWorkflowId(ref)) {
    issues.push(`workflowId: must be "${orderWorkflowId(ref)}" for this customerReferenceNo`);
  }
  if (input['sessionId'] !== undefined && !isText(input['sessionId'], MAX_TEXT)) {
    issues.push(`sessionId: must be a text of 1 to ${MAX_TEXT} characters`);
  }
  issues.push(...contextIssues(input['context']));
  issues.push(...recoveryIssues(input['recovery']));
  if (input['carry'] !== undefined) {
    if (!continuedAsNew(info)) issues.push('carry: internal to continue-as-new; a start must not set it');
    else if (!isObject(input['carry']) || !isObject(input['carry']['state'])) issues.push('carry: malformed');
  }
  const known = new Set(['customerReferenceNo', 'sessionId', 'context', 'recovery', 'carry']);
  for (const key of Object.keys(input)) if (!known.has(key)) issues.push(`${key}: not a field of the order input`);
  return issues;
}

/** The booking's own guard for its hand-over: `resume` only on a run continued-as-new (the request is checked apart). */
export function bookingResumeIssues(input: unknown, info: RunInfo): string[] {
  if (!isObject(input) || input['resume'] === undefined) return [];
  if (!continuedAsNew(info)) return ['resume: internal to continue-as-new; a new booking must not set it'];
  const resume = input['resume'];
  if (!isObject(resume) || !isObject(resume['state']) || !isObject(resume['request'])) return ['resume: malformed'];
  const request = resume['request'];
  if (
    !isText(request['customerReferenceNo'], MAX_TEXT) ||
    info.workflowId !== `booking:${request['customerReferenceNo']}`
  ) {
    return ['resume.request.customerReferenceNo: must name this workflow id'];
  }
  const supplier = resume['state']['supplier'];
  const supplierIssues =
    supplier === undefined || (typeof supplier === 'string' && SUPPLIER_ACCOUNT_PATTERN.test(supplier))
      ? []
      : ['resume.state.supplier: must be a supplier account id'];
  return [...supplierIssues, ...recoveryIssues(resume['recovery']).map((issue) => `resume.${issue}`)];
}

/**
 * The sweep's input: its Schedule's (a worker's), nothing a starter may stretch into an unbounded listing. Its id is
 * not checked: a Schedule names its runs, and only workers and operators may start one (the authorizer).
 */
export function sweepInputIssues(input: unknown): string[] {
  if (!isObject(input)) return ['input: must be an object'];
  const issues: string[] = [];
  const week = 7 * 24 * 60;
  const minutes = (key: string, min: number, max: number, optional = false) => {
    const v = input[key];
    if (optional && v === undefined) return;
    if (!isInt(v) || v < min || v > max) issues.push(`${key}: must be a whole number from ${min} to ${max}`);
  };
  minutes('lookbackMinutes', 1, 31 * 24 * 60);
  minutes('settleMinutes', 0, week);
  minutes('sliceMinutes', 1, 31 * 24 * 60);
  minutes('checkInHours', 1, 31 * 24, true);
  if (typeof input['cancelOrphans'] !== 'boolean') issues.push('cancelOrphans: must be true or false');
  if (input['orphanFeeCeiling'] !== undefined && !isMoney(input['orphanFeeCeiling'])) {
    issues.push('orphanFeeCeiling: must be {amount >= 0, currency}');
  }
  const statuses = input['statuses'];
  const codes = ['unknown', 'confirming', 'confirmed', 'cancelled', 'failed', 'cancelFailed'];
  if (!isObject(statuses) || codes.some((c) => !isInt(statuses[c]))) {
    issues.push(`statuses: must give a whole number for each of ${codes.join(', ')}`);
  }
  const supplier = input['supplier'];
  if (supplier !== undefined && !(typeof supplier === 'string' && SUPPLIER_ACCOUNT_PATTERN.test(supplier))) {
    issues.push('supplier: must be a supplier account id');
  }
  return issues;
}

/** An operator's note: bounded texts, and the id the console derives from the item (operatorNoteWorkflowId). */
export function noteInputIssues(input: unknown, info: RunInfo): string[] {
  if (!isObject(input)) return ['input: must be an object'];
  const issues: string[] = [];
  const item = input['item'];
  if (!isObject(item) || !isText(item['workflowId'], MAX_TEXT) || !isText(item['runId'], MAX_TEXT)) {
    issues.push(`item: must name a workflowId and runId of 1 to ${MAX_TEXT} characters`);
  } else {
    const ref = item['customerReferenceNo'];
    if (ref !== undefined && !isText(ref, MAX_TEXT)) issues.push('item.customerReferenceNo: must be a text');
    const expected = ['note', item['workflowId'], item['runId'], ...(typeof ref === 'string' ? [ref] : [])].join(':');
    if (info.workflowId !== expected) issues.push(`workflowId: must be "${expected}" for this item`);
  }
  if (!isText(input['note'], MAX_NOTE)) issues.push(`note: must be a text of 1 to ${MAX_NOTE} characters`);
  if (!isText(input['by'], MAX_NAME)) issues.push(`by: must be a text of 1 to ${MAX_NAME} characters`);
  return issues;
}

/** Refuses the run: a typed, non-retryable failure naming each issue, before any command. */
export function refuseInput(type: string, issues: string[]): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message: `${type}: ${issues.join('; ')}`,
    nonRetryable: true,
    details: [{ issues }],
  });
}

function contextIssues(context: unknown): string[] {
  if (context === undefined) return [];
  if (!isObject(context)) return ['context: must be an object'];
  return Object.keys(context).flatMap((key) => {
    if (!(CONTEXT_KEYS as readonly string[]).includes(key)) return [`context.${key}: not a field of the context`];
    const v = context[key];
    return v === undefined || isText(v, MAX_TEXT) ? [] : [`context.${key}: must be a text of 1 to ${MAX_TEXT}`];
  });
}

/**
 * The recovery policy's shape and the bounds no schedule may pass, even a test's: positive, whole where counted, a
 * deadline within RECOVERY_BOUNDS, a fee margin within [0, 3600] s, continue-as-new no sooner than 100 events. The
 * floors a production schedule has (RECOVERY_BOUNDS' minimums) are the worker's to apply: a test worker lifts them.
 */
function recoveryIssues(recovery: unknown): string[] {
  if (recovery === undefined) return [];
  if (!isObject(recovery)) return ['recovery: must be an object'];
  const issues: string[] = [];
  for (const key of Object.keys(recovery)) {
    if (!(RECOVERY_KEYS as readonly string[]).includes(key) && key !== 'testing') {
      issues.push(`recovery.${key}: not a field of the recovery policy`);
    }
  }
  const positive = (key: string, max: number, whole = false) => {
    const v = recovery[key];
    if (v === undefined) return;
    if (!isNumber(v) || v <= 0 || v > max || (whole && !Number.isInteger(v))) {
      issues.push(`recovery.${key}: must be a ${whole ? 'whole ' : ''}number above 0 and at most ${max}`);
    }
  };
  positive('repeatEverySeconds', RECOVERY_BOUNDS.repeatEverySeconds.max);
  positive('rebookAfterSeconds', RECOVERY_BOUNDS.rebookAfterSeconds.max);
  positive('maxBookAttempts', RECOVERY_BOUNDS.maxBookAttempts.max, true);
  positive('deadlineSeconds', RECOVERY_BOUNDS.deadlineSeconds.max);
  const delays = recovery['delaysSeconds'];
  if (delays !== undefined) {
    const max = RECOVERY_BOUNDS.delaysSeconds;
    if (
      !Array.isArray(delays) ||
      delays.length > max.maxEntries ||
      delays.some((d) => !isNumber(d) || d <= 0 || d > max.max)
    ) {
      issues.push(`recovery.delaysSeconds: at most ${max.maxEntries} numbers above 0 and at most ${max.max}`);
    }
  }
  const events = recovery['continueAsNewAfterEvents'];
  if (events !== undefined && (!isInt(events) || events < 100 || events > 50_000)) {
    issues.push('recovery.continueAsNewAfterEvents: must be a whole number from 100 to 50000');
  }
  const margin = recovery['feeChangeMarginSeconds'];
  if (margin !== undefined && (!isNumber(margin) || margin < 0 || margin > 3600)) {
    issues.push('recovery.feeChangeMarginSeconds: must be a number from 0 to 3600');
  }
  return issues;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function isText(v: unknown, max: number): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= max;
}
function isNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}
function isInt(v: unknown): v is number {
  return isNumber(v) && Number.isInteger(v);
}
function isMoney(v: unknown): boolean {
  return isObject(v) && isNumber(v['amount']) && v['amount'] >= 0 && isText(v['currency'], 8);
}
