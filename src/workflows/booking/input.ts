/** The workflow's input: the booking request, checked once per run, and the state a resumed run carries. */
import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import { bookingWorkflowId, RECOVERY_DEFAULTS } from '../../contract/definitions';
import type {
  BookingRequest,
  BookingState,
  ParsedBookingRequest,
  RecoveryPolicy,
  RequestValidation,
} from '../../contract';
import { validateBookingRequest } from './activities';
import { PATCHES } from './patches';

/** State carried across continue-as-new while recovering. Internal: not part of the contract. */
export interface ResumeState {
  state: BookingState;
  anchorMs: number;
  nextIndex: number;
  deadlineMs: number;
}
export type BookingWorkflowInput = BookingRequest & { resume?: ResumeState };

/** The checked request and its recovery policy; an invalid request fails the workflow, naming each field. */
export async function checkInput(
  input: BookingWorkflowInput,
  fewerTasks: boolean,
): Promise<{ request: ParsedBookingRequest; recovery: RecoveryPolicy }> {
  if (input?.resume && !workflowInfo().continuedFromExecutionRunId) {
    // `resume` skips CheckAvail and the price check: only this workflow's own continue-as-new may set it.
    throw invalid('resume: internal to continue-as-new; a new booking must not set it', [
      'resume: internal to continue-as-new',
    ]);
  }
  const raw = withoutResume(input ?? ({} as BookingWorkflowInput));
  const checked: RequestValidation =
    fewerTasks || patched(PATCHES.validateInLocalActivity)
      ? await validated(raw, !!input.resume)
      : checkedBeforePatch(raw);
  if (!checked.valid) throw invalid(`Invalid booking request: ${checked.issues.join('; ')}`, checked.issues);
  const expectedId = bookingWorkflowId(checked.request.customerReferenceNo);
  if (workflowInfo().workflowId !== expectedId) {
    // One workflow per reference is what makes a retried start harmless; another id would allow two.
    throw invalid(`workflowId: must be "${expectedId}" for this customerReferenceNo`, [
      `workflowId: must be "${expectedId}"`,
    ]);
  }
  return { request: checked.request, recovery: checked.recovery };
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

/**
 * Runs from before PATCHES.validateInLocalActivity validated their input in workflow code, in their first
 * workflow task: a run on that path that is still open passed that check (an invalid input fails there
 * and then), so replaying it needs only the defaults the check applied. Keeping the schemas out of the
 * workflow bundle keeps zod out of every cached workflow. Remove with the patch.
 */
function checkedBeforePatch(raw: BookingRequest): RequestValidation {
  return {
    valid: true,
    request: raw as ParsedBookingRequest,
    recovery: { ...RECOVERY_DEFAULTS, delaysSeconds: [...RECOVERY_DEFAULTS.delaysSeconds], ...raw.recovery },
  };
}

export function withoutResume(input: BookingWorkflowInput): BookingRequest {
  const { resume: _resume, ...request } = input;
  return request;
}
