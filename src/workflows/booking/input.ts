/** The workflow's input: the booking request, checked once per run, and the state a resumed run carries. */
import { ApplicationFailure, CancellationScope, workflowInfo } from '@temporalio/workflow';
import type { CheckAvailOutcome } from '../../activities/booking';
import { bookingWorkflowId } from '../../contract/definitions';
import type {
  BookingRequest,
  BookingState,
  ParsedBookingRequest,
  RecoveryPolicy,
  RequestValidation,
} from '../../contract';
import { checkRequestAndAvail, validateBookingRequest } from './proxies';
import { startingState } from './run';

/** State carried across continue-as-new while recovering. Internal: not part of the contract. */
export interface ResumeState {
  state: BookingState;
  anchorMs: number;
  nextIndex: number;
  deadlineMs: number;
}
export type BookingWorkflowInput = BookingRequest & { resume?: ResumeState };

/** The first CheckAvail's ending, made with the input check: its answer, or its failure. */
export type FirstCheck = { kind: 'answered'; outcome: CheckAvailOutcome } | { kind: 'failed'; error: unknown };

export interface CheckedInput {
  request: ParsedBookingRequest;
  recovery: RecoveryPolicy;
  firstCheck?: FirstCheck;
}

/**
 * The checked request and its recovery policy; an invalid request fails the workflow, naming each field. A new
 * run also brings its first CheckAvail's ending, made in the same local activity.
 */
export async function checkInput(input: BookingWorkflowInput): Promise<CheckedInput> {
  if (input?.resume && !workflowInfo().continuedFromExecutionRunId) {
    // `resume` skips CheckAvail and the price check: only this workflow's own continue-as-new may set it.
    throw invalid('resume: internal to continue-as-new; a new booking must not set it', [
      'resume: internal to continue-as-new',
    ]);
  }
  const raw = withoutResume(input ?? ({} as BookingWorkflowInput));
  const { checked, firstCheck } = input.resume
    ? { checked: await validated(raw, true), firstCheck: undefined }
    : await checkedWithAvailability(raw);
  if (!checked.valid) throw invalid(`Invalid booking request: ${checked.issues.join('; ')}`, checked.issues);
  const expectedId = bookingWorkflowId(checked.request.customerReferenceNo);
  if (workflowInfo().workflowId !== expectedId) {
    // One workflow per reference is what makes a retried start harmless; another id would allow two.
    throw invalid(`workflowId: must be "${expectedId}" for this customerReferenceNo`, [
      `workflowId: must be "${expectedId}"`,
    ]);
  }
  return { request: checked.request, recovery: checked.recovery, firstCheck };
}

/**
 * The input check and, for a valid request, the first CheckAvail, in one local activity, with the headers the run
 * will send (run.ts, newRun). When CheckAvail fails for good, or the booking is cancelled meanwhile, the input is
 * checked on its own (to the end, whatever the cancellation) and the failure goes to the availability step,
 * which ends the booking with it as it ends any failed CheckAvail.
 */
async function checkedWithAvailability(
  raw: BookingRequest,
): Promise<{ checked: RequestValidation; firstCheck?: FirstCheck }> {
  try {
    const answer = await checkRequestAndAvail({
      request: raw,
      sessionId: startingState(raw).sessionId,
      traceId: workflowInfo().workflowId,
    });
    if (!('availability' in answer)) return { checked: answer.validation };
    return { checked: answer.validation, firstCheck: { kind: 'answered', outcome: answer.availability } };
  } catch (error) {
    const checked = await CancellationScope.nonCancellable(() => validated(raw, false));
    return { checked, firstCheck: { kind: 'failed', error } };
  }
}

/**
 * The local activity's check. A resumed run's recovery settings were checked when the booking started and its
 * Book has been sent: today's bounds must not fail it (the activity skips them), whatever was deployed since.
 */
function validated(raw: BookingRequest, resumed: boolean): Promise<RequestValidation> {
  return resumed ? validateBookingRequest(raw, { resumed: true }) : validateBookingRequest(raw);
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
