/**
 * Every workflow type's own guard (src/workflows/input-guard.ts), fuzzed: whatever a start carries, a forged internal
 * field, a value out of bounds or an id that does not match is refused with issues naming the field, and anything
 * at all (any JSON value) is answered with issues rather than an exception. The workflow tier
 * (test/workflow/partners-apart.test.ts) shows the runs refusing with the typed failure before anything is sent.
 */
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import {
  bookingResumeIssues,
  continuedAsNew,
  noteInputIssues,
  orderInputIssues,
  refuseInput,
  sweepInputIssues,
  type RunInfo,
} from '../../src/workflows/input-guard';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';

const ref = fc.uuid();
const firstRun = (workflowId: string): RunInfo => ({ workflowId, attempt: 1 });
const continued = (workflowId: string): RunInfo => ({ workflowId, attempt: 1, continuedFromExecutionRunId: 'r-1' });

/** Runs that are not a continue-as-new of the workflow's own: a first run, a retry, a cron run. */
const notContinued = (workflowId: string) =>
  fc.constantFrom<RunInfo>(
    { workflowId, attempt: 1 },
    { workflowId, attempt: 2, continuedFromExecutionRunId: 'r-1' },
    { workflowId, attempt: 1, continuedFromExecutionRunId: 'r-1', cronSchedule: '* * * * *' },
  );

/** A recovery policy within every bound a run checks itself. */
const goodRecovery = fc.record(
  {
    delaysSeconds: fc.array(fc.double({ min: 0.1, max: 3600, noNaN: true }), { maxLength: 20 }),
    repeatEverySeconds: fc.double({ min: 0.1, max: 3600, noNaN: true }),
    deadlineSeconds: fc.double({ min: 1, max: 7 * 24 * 3600, noNaN: true }),
    continueAsNewAfterEvents: fc.integer({ min: 100, max: 50_000 }),
    feeChangeMarginSeconds: fc.double({ min: 0, max: 3600, noNaN: true }),
  },
  { requiredKeys: [] },
);

/** One field of the recovery policy set out of bounds, and the field the refusal must name. */
const badRecovery = fc.oneof(
  fc.record({
    repeatEverySeconds: fc.oneof(fc.constant(0), fc.double({ max: -0.001, noNaN: true }), fc.constant(1e9)),
  }),
  fc.record({ continueAsNewAfterEvents: fc.oneof(fc.integer({ max: 99 }), fc.constant(1e7), fc.constant(150.5)) }),
  fc.record({ feeChangeMarginSeconds: fc.oneof(fc.double({ max: -0.001, noNaN: true }), fc.integer({ min: 3601 })) }),
  fc.record({ deadlineSeconds: fc.oneof(fc.constant(-1), fc.integer({ min: 7 * 24 * 3600 + 1 })) }),
  fc.record({ delaysSeconds: fc.array(fc.constant(1), { minLength: 21, maxLength: 40 }) }),
  fc.record({ maxBookAttempts: fc.oneof(fc.constant(0), fc.constant(2.5), fc.integer({ min: 4 })) }),
  fc.record({ repeatEverySeconds: fc.constantFrom('60', null, Number.NaN, Number.POSITIVE_INFINITY) }),
);

describe('order input', () => {
  test('a valid input on its own id passes, on a first run and continued', () => {
    fc.assert(
      fc.property(ref, goodRecovery, fc.boolean(), (r, recovery, isContinued) => {
        const id = `order:${r}`;
        const input = { customerReferenceNo: r, sessionId: `s-${r}`, context: { language: 'en-US' }, recovery };
        expect(orderInputIssues(input, isContinued ? continued(id) : firstRun(id))).toEqual([]);
      }),
    );
  });

  test('a carry on any run that is not its own continue-as-new is refused, naming carry', () => {
    fc.assert(
      fc.property(ref, fc.anything(), (r, carry) => {
        const id = `order:${r}`;
        fc.pre(carry !== undefined);
        fc.assert(
          fc.property(notContinued(id), (info) => {
            expect(orderInputIssues({ customerReferenceNo: r, carry }, info)).toContainEqual(
              expect.stringMatching(/^carry: internal to continue-as-new/),
            );
          }),
          { numRuns: 3 },
        );
      }),
      { numRuns: 50 },
    );
  });

  test('an id that names another reference is refused, naming workflowId', () => {
    fc.assert(
      fc.property(ref, ref, fc.constantFrom('order:', 'booking:', '', 'order: '), (a, b, prefix) => {
        fc.pre(a !== b || prefix !== 'order:');
        expect(orderInputIssues({ customerReferenceNo: a }, firstRun(`${prefix}${b}`))).toContainEqual(
          expect.stringMatching(/^workflowId: must be "order:/),
        );
      }),
    );
  });

  test('a recovery value out of bounds is refused, naming its field', () => {
    fc.assert(
      fc.property(ref, badRecovery, (r, recovery) => {
        const field = Object.keys(recovery)[0]!;
        const issues = orderInputIssues({ customerReferenceNo: r, recovery }, firstRun(`order:${r}`));
        expect(issues).toContainEqual(expect.stringMatching(new RegExp(`^recovery\\.${field}: `)));
      }),
    );
  });

  test('unknown fields, a context field of no header and texts past their bound are named', () => {
    fc.assert(
      fc.property(ref, fc.string({ minLength: 1, maxLength: 20 }), (r, key) => {
        fc.pre(!['customerReferenceNo', 'sessionId', 'context', 'recovery', 'carry'].includes(key));
        fc.pre(!['__proto__', 'constructor'].includes(key));
        const id = `order:${r}`;
        expect(orderInputIssues({ customerReferenceNo: r, [key]: 1 }, firstRun(id))).toContainEqual(
          `${key}: not a field of the order input`,
        );
      }),
    );
    const r = 'f0c8c2a8-55f4-4e41-9ec7-0c34dc5d1e0e';
    const id = `order:${r}`;
    expect(orderInputIssues({ customerReferenceNo: r, context: { auth: 'x' } }, firstRun(id))).toEqual([
      'context.auth: not a field of the context',
    ]);
    expect(orderInputIssues({ customerReferenceNo: r, sessionId: 'x'.repeat(257) }, firstRun(id))[0]).toMatch(
      /^sessionId:/,
    );
  });

  test('any value at all is answered with issues, never an exception', () => {
    fc.assert(
      fc.property(fc.anything(), fc.string(), (input, id) => {
        const issues = orderInputIssues(input, firstRun(id));
        expect(Array.isArray(issues)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe('booking resume', () => {
  const resume = (r: string) => ({
    state: { stage: 'recovering' },
    request: { customerReferenceNo: r },
    recovery: { repeatEverySeconds: 600 },
    anchorMs: 0,
    nextIndex: 0,
    deadlineMs: 1,
  });

  test('taken only on its own continue-as-new, for its own reference', () => {
    fc.assert(
      fc.property(ref, (r) => {
        const id = `booking:${r}`;
        expect(bookingResumeIssues({ customerReferenceNo: r, resume: resume(r) }, continued(id))).toEqual([]);
        fc.assert(
          fc.property(notContinued(id), (info) => {
            expect(bookingResumeIssues({ resume: resume(r) }, info)).toEqual([
              'resume: internal to continue-as-new; a new booking must not set it',
            ]);
          }),
          { numRuns: 3 },
        );
        expect(bookingResumeIssues({ resume: resume(r) }, continued(`booking:x${r}`))).toEqual([
          'resume.request.customerReferenceNo: must name this workflow id',
        ]);
      }),
      { numRuns: 30 },
    );
  });

  test('a resumed schedule out of bounds is refused, naming its field', () => {
    fc.assert(
      fc.property(ref, badRecovery, (r, recovery) => {
        const field = Object.keys(recovery)[0]!;
        const issues = bookingResumeIssues({ resume: { ...resume(r), recovery } }, continued(`booking:${r}`));
        expect(issues).toContainEqual(expect.stringMatching(new RegExp(`^resume\\.recovery\\.${field}: `)));
      }),
    );
  });
});

describe('sweep and note', () => {
  const sweep = {
    lookbackMinutes: 60,
    settleMinutes: 10,
    sliceMinutes: 60,
    cancelOrphans: true,
    statuses: defaultSupplierProfile.orderStatus,
  };

  test("the sweep's own input passes; a listing stretched or a status missing is refused by name", () => {
    expect(sweepInputIssues(sweep)).toEqual([]);
    fc.assert(
      fc.property(
        fc.constantFrom('lookbackMinutes', 'settleMinutes', 'sliceMinutes', 'checkInHours'),
        fc.oneof(fc.constant(-1), fc.constant(1e9), fc.constant(1.5), fc.constant('60')),
        (key, value) => {
          expect(sweepInputIssues({ ...sweep, [key]: value })).toContainEqual(expect.stringMatching(`^${key}: `));
        },
      ),
    );
    expect(sweepInputIssues({ ...sweep, statuses: { confirmed: 2 } })[0]).toMatch(/^statuses: /);
    expect(sweepInputIssues({ ...sweep, orphanFeeCeiling: { amount: -5, currency: 'USD' } })[0]).toMatch(
      /^orphanFeeCeiling: /,
    );
  });

  test('a note must be for the item its id names, with bounded texts', () => {
    const item = { workflowId: 'booking:r', runId: 'run-1', customerReferenceNo: 'r' };
    const note = { item, note: 'called the hotel', by: 'ops@example.com' };
    expect(noteInputIssues(note, firstRun('note:booking:r:run-1:r'))).toEqual([]);
    expect(noteInputIssues(note, firstRun('note:booking:other:run-1:r'))[0]).toMatch(/^workflowId: /);
    expect(noteInputIssues({ ...note, note: 'x'.repeat(2001) }, firstRun('note:booking:r:run-1:r'))[0]).toMatch(
      /^note: /,
    );
    fc.assert(
      fc.property(fc.anything(), (input) => {
        expect(Array.isArray(noteInputIssues(input, firstRun('note:x')))).toBe(true);
        expect(Array.isArray(sweepInputIssues(input))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

test('a refusal is a typed, non-retryable failure that lists each issue', () => {
  const failure = refuseInput('InvalidOrderInput', ['carry: internal', 'recovery.x: bad']);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({
    type: 'InvalidOrderInput',
    nonRetryable: true,
    details: [{ issues: ['carry: internal', 'recovery.x: bad'] }],
  });
  expect(continuedAsNew({ workflowId: 'w', attempt: 1, continuedFromExecutionRunId: 'r' })).toBe(true);
});
