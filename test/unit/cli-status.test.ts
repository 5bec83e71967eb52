/**
 * `npm run book -- status` on a booking that closed without a result (src/operators/cli/verbs.ts): it says why, from the
 * failure the client decodes; an invalid request is the caller's error (exit 0, no "needs a person"), while any
 * other failure, a termination, or an invalid request on a run continued-as-new (its Book was sent) needs a person.
 * The client is a stand-in that answers describe() and result() as the server would.
 */
import {
  ApplicationFailure,
  TerminatedFailure,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import { EXIT } from '../../src/operators/cli/common';
import { failureReport, runStatus, type StatusReport, type VerbIo } from '../../src/operators/cli/verbs';

const REF = '5b4f1c7e-2f51-4a55-9a55-3a1c2b7f0d11';
const ISSUES = ['guests.0.age: expected a number from 0 to 120', 'holder.email: expected an email address'];

function invalidRequest(): WorkflowFailedError {
  const cause = ApplicationFailure.create({
    type: 'InvalidBookingRequest',
    message: `Invalid booking request: ${ISSUES.join('; ')}`,
    nonRetryable: true,
    details: [{ issues: ISSUES }],
  });
  return new WorkflowFailedError('Workflow execution failed', cause, 'NON_RETRYABLE_FAILURE');
}

function terminated(reason: string): WorkflowFailedError {
  return new WorkflowFailedError(reason, new TerminatedFailure(reason), 'NON_RETRYABLE_FAILURE');
}

/** A closed booking workflow `booking:REF` and no order run; `firstRunId` as the server's describe() gives it. */
function clientWithClosedBooking(status: string, failure: Error, firstRunId = 'run-1'): Client {
  const description = {
    workflowId: `booking:${REF}`,
    runId: 'run-1',
    status: { name: status },
    startTime: new Date('2026-11-20T10:00:00.000Z'),
    closeTime: new Date('2026-11-20T10:00:01.000Z'),
    typedSearchAttributes: { get: () => undefined },
    raw: { workflowExecutionInfo: { firstRunId } },
  };
  const handle = (workflowId: string) => ({
    describe: () =>
      workflowId === `booking:${REF}`
        ? Promise.resolve(description)
        : Promise.reject(new WorkflowNotFoundError('not found', workflowId, undefined)),
    result: () => Promise.reject(failure),
    query: () => Promise.reject(new Error('closed')),
  });
  return {
    workflow: { getHandle: handle },
    withDeadline: <T>(_deadline: number, run: () => Promise<T>) => run(),
  } as unknown as Client;
}

/** Runs `status` and keeps what it printed, as text and as the --json object. */
async function status(client: Client): Promise<{ code: number; text: string; report: StatusReport }> {
  const lines: string[] = [];
  let report: StatusReport | undefined;
  const io: VerbIo = {
    json: false,
    say: (text) => lines.push(text),
    print: (value) => (report = value as StatusReport),
  };
  const code = await runStatus(client, REF, io);
  return { code, text: lines.join('\n'), report: report! };
}

describe('status on a booking that failed', () => {
  test('an invalid request started from another service: its reason, the caller to fix it, exit 0', async () => {
    const { code, text, report } = await status(clientWithClosedBooking('FAILED', invalidRequest()));
    expect(code).toBe(EXIT.OK);
    expect(text).toContain(`why: InvalidBookingRequest: Invalid booking request: ${ISSUES.join('; ')}`);
    expect(text).toMatch(/the request was invalid: the error of the service that started it/);
    expect(text).not.toMatch(/needs a person/i);
    expect(report.needsPerson).toBe(false);
    expect(report.booking?.failure).toEqual({
      type: 'InvalidBookingRequest',
      message: `Invalid booking request: ${ISSUES.join('; ')}`,
      issues: ISSUES,
      callersError: true,
    });
  });

  test('an invalid request on a run continued-as-new (Book was sent): the reason, and a person follows up', async () => {
    const { code, text, report } = await status(clientWithClosedBooking('FAILED', invalidRequest(), 'run-0'));
    expect(code).toBe(EXIT.NEEDS_PERSON);
    expect(text).toContain('why: InvalidBookingRequest: Invalid booking request');
    expect(text).toMatch(/Needs a person/);
    expect(report.booking?.failure?.callersError).toBe(false);
  });

  test('a booking terminated by an operator: the termination reason, and a person follows up', async () => {
    const { code, text, report } = await status(clientWithClosedBooking('TERMINATED', terminated('stuck, see INC-7')));
    expect(code).toBe(EXIT.NEEDS_PERSON);
    expect(text).toContain('why: stuck, see INC-7');
    expect(report.booking?.failure).toEqual({ message: 'stuck, see INC-7', callersError: false });
  });

  test('a failure of another type needs a person; an error that is not the run failure reads as nothing', () => {
    const other = new WorkflowFailedError(
      'Workflow execution failed',
      ApplicationFailure.create({ type: 'SomethingElse', message: 'boom', nonRetryable: true }),
      'NON_RETRYABLE_FAILURE',
    );
    expect(failureReport(other, true)).toEqual({ type: 'SomethingElse', message: 'boom', callersError: false });
    expect(failureReport(new Error('14 UNAVAILABLE: connection refused'), true)).toBeUndefined();
  });
});
