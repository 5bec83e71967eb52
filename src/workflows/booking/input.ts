/** The workflow's input: the booking request, checked once per run, and the state a resumed run carries. */
import { ApplicationFailure, CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { CheckAvailOutcome } from '../../activities/types';
import { bookingWorkflowId } from '../../api/contract/definitions';
import type {
  BookingRequest,
  BookingState,
  ParsedBookingRequest,
  RecoveryPolicy,
  RequestValidation,
} from '../../api/contract/index';
import { bookingResumeIssues } from '../input-guard';
import { checkRequestAndAvail, validateBookingRequest } from './proxies';
import { startingState } from './run';

/** Where recovery's schedule stands: the Book it runs from, the next poll, the deadline. */
export interface RecoverySchedule {
  anchorMs: number;
  nextIndex: number;
  deadlineMs: number;
}

/**
 * State carried across continue-as-new while recovering. Internal: not part of the contract. The request and its
 * recovery policy are carried as the first run checked them: a resumed run is past Book, so no check deployed since
 * may fail it.
 */
export interface ResumeState extends RecoverySchedule {
  state: BookingState;
  request: ParsedBookingRequest;
  recovery: RecoveryPolicy;
}
export type BookingWorkflowInput = BookingRequest & { resume?: ResumeState };

/** The first CheckAvail's ending, made with the input check: its answer, or its failure. */
export type FirstCheck = { kind: 'answered'; outcome: CheckAvailOutcome } | { kind: 'failed'; error: unknown };

export interface CheckedInput {
  request: ParsedBookingRequest;
  recovery: RecoveryPolicy;
  firstCheck?: FirstCheck;
  /** The supplier account the first step chose, on a worker with several (a new run only). */
  supplier?: string;
}

/**
 * The checked request and its recovery policy; an invalid request fails the workflow, naming each field. A new
 * run also brings its first CheckAvail's ending, made in the same local activity. A resumed run takes what its first
 * run checked, unchecked: it is past Book, and failing it now (a check tightened by a deploy, a check that could not
 * run) would leave an order nobody follows.
 */
export async function checkInput(input: BookingWorkflowInput): Promise<CheckedInput> {
  if (input?.resume) {
    // `resume` skips CheckAvail, the price check and the input check: only this workflow's own continue-as-new
    // may set it (not a first run, a retry or a cron run, which a starter could make carry it).
    const issues = bookingResumeIssues(input, workflowInfo());
    if (issues.length > 0) throw invalid(issues.join('; '), issues);
    return { request: input.resume.request, recovery: input.resume.recovery };
  }
  const raw = input ?? ({} as BookingWorkflowInput);
  const { checked, firstCheck, supplier } = await checkedWithAvailability(raw);
  if (!checked.valid) throw invalid(`Invalid booking request: ${checked.issues.join('; ')}`, checked.issues);
  const expectedId = bookingWorkflowId(checked.request.customerReferenceNo);
  if (workflowInfo().workflowId !== expectedId) {
    // One workflow per reference is what makes a retried start harmless; another id would allow two.
    throw invalid(`workflowId: must be "${expectedId}" for this customerReferenceNo`, [
      `workflowId: must be "${expectedId}"`,
    ]);
  }
  return { request: checked.request, recovery: checked.recovery, firstCheck, ...(supplier ? { supplier } : {}) };
}

/**
 * The input check and, for a valid request, the first CheckAvail, in one local activity, with the headers the run
 * will send (run.ts, BookingRun). When CheckAvail fails for good, or the booking is cancelled meanwhile, the input is
 * checked on its own (to the end, whatever the cancellation) and the failure goes to the availability step,
 * which ends the booking with it as it ends any failed CheckAvail.
 */
async function checkedWithAvailability(
  raw: BookingRequest,
): Promise<{ checked: RequestValidation; firstCheck?: FirstCheck; supplier?: string }> {
  try {
    const answer = await checkRequestAndAvail({
      request: raw,
      sessionId: startingState(raw).sessionId,
      traceId: workflowInfo().workflowId,
    });
    if (!('availability' in answer)) return { checked: answer.validation };
    return {
      checked: answer.validation,
      firstCheck: { kind: 'answered', outcome: answer.availability },
      ...(answer.supplier ? { supplier: answer.supplier } : {}),
    };
  } catch (error) {
    const checked = await CancellationScope.nonCancellable(() => validateBookingRequest(raw));
    return { checked, firstCheck: { kind: 'failed', error } };
  }
}

function invalid(message: string, issues: string[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'InvalidBookingRequest',
    message,
    nonRetryable: true,
    details: [{ issues }],
  });
}

export function withoutResume(input: BookingWorkflowInput): BookingRequest {
  const { resume: _resume, ...request } = input;
  return request;
}
