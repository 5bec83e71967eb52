/**
 * A caller's recovery settings are held to RECOVERY_BOUNDS: each refusal names the field and its bound, the
 * deadline's floor comes from the policy's own schedule, and `recovery.testing` lifts the bounds only on a worker
 * with RECOVERY_TESTING=on. The client helper refuses the same values, in the same words, before Temporal.
 */
import fc from 'fast-check';
import type { Client } from '@temporalio/client';
import {
  ACTIVITY_TIMEOUT_SECONDS,
  BookingRequest,
  InvalidBookingRequestError,
  minimumDeadlineSeconds,
  RECOVERY_BOUNDS,
  RECOVERY_DEFAULTS,
  resendPollOffsetSeconds,
  startBooking,
  validateBookingRequest,
  type RecoveryOptions,
} from '../../src/api/client/index';
import { pollOffsetSeconds } from '../../src/runtime/rules/schedule';

const REQUEST = {
  customerReferenceNo: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b',
  ratePkgId: 'pkg-1',
  holder: { firstName: 'Ann', lastName: 'Lee', email: 'ann@example.com', phone: { countryCode: '+1', number: '555' } },
  guests: [{ roomIndex: 0, firstName: 'Ann', lastName: 'Lee', nationalityCode: 'US', age: 34, isChild: false }],
};
const withRecovery = (recovery: RecoveryOptions) => ({ ...REQUEST, recovery });

/** The issues a production worker (RECOVERY_TESTING off) answers; [] when it accepts the request. */
function refusedBy(recovery: RecoveryOptions, recoveryTesting = false): string[] {
  const checked = validateBookingRequest(withRecovery(recovery), { recoveryTesting });
  return checked.valid ? [] : checked.issues;
}

const HINT_FLOOR = 'set recovery.testing on a test worker for faster schedules';
const HINT_CAP = 'set recovery.testing on a test worker to go beyond it';
const WEEK = 7 * 24 * 3600;

describe('each refused option names its field and its bound', () => {
  const cases: [string, RecoveryOptions, string][] = [
    [
      'a re-send sooner than 10 minutes',
      { rebookAfterSeconds: 599 },
      `recovery.rebookAfterSeconds: must be at least 600 (Book is never re-sent sooner than 10 minutes after the last Book ended); ${HINT_FLOOR}`,
    ],
    [
      'a re-send later than a day',
      { rebookAfterSeconds: 86_401, deadlineSeconds: WEEK },
      'recovery.rebookAfterSeconds: must be at most 86400 (',
    ],
    ['more than 3 Book sends', { maxBookAttempts: 4 }, 'recovery.maxBookAttempts: must be at most 3 ('],
    ['no Book send at all', { maxBookAttempts: 0 }, 'recovery.maxBookAttempts: Too small: expected number to be >=1'],
    ['a first poll delay under 5 s', { delaysSeconds: [30, 4.9] }, 'recovery.delaysSeconds.1: must be at least 5 ('],
    ['a first poll delay over an hour', { delaysSeconds: [3601] }, 'recovery.delaysSeconds.0: must be at most 3600 ('],
    [
      'more than 20 first delays',
      { delaysSeconds: Array<number>(21).fill(30) },
      'recovery.delaysSeconds: must have at most 20 entries (',
    ],
    [
      'repeated polls under a minute apart',
      { repeatEverySeconds: 59 },
      'recovery.repeatEverySeconds: must be at least 60 (',
    ],
    [
      'repeated polls over an hour apart',
      { repeatEverySeconds: 3601 },
      'recovery.repeatEverySeconds: must be at most 3600 (',
    ],
    ['a deadline over 7 days', { deadlineSeconds: WEEK + 1 }, `recovery.deadlineSeconds: must be at most ${WEEK} (`],
    // A Cancel quoted free 20 s before the fee changes may start a minute later and run 30 s: it would land after.
    [
      'a fee margin shorter than a Cancel takes to start and land',
      { feeChangeMarginSeconds: 20 },
      'recovery.feeChangeMarginSeconds: must be at least 90 (a Cancel quoted before a change of fee may take this long',
    ],
    ['no fee margin at all', { feeChangeMarginSeconds: 0 }, 'recovery.feeChangeMarginSeconds: must be at least 90 ('],
    [
      'a deadline before the re-send and its poll',
      { deadlineSeconds: 1169 },
      'recovery.deadlineSeconds: must be at least 1170 (',
    ],
  ];

  test.each(cases)('%s', (_name, recovery, expected) => {
    const issues = refusedBy(recovery);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toContain(expected);
  });

  test('a floor says how a test goes faster; a cap says how a test goes beyond it', () => {
    expect(refusedBy({ repeatEverySeconds: 1 })[0]).toMatch(new RegExp(`; ${HINT_FLOOR}$`));
    expect(refusedBy({ maxBookAttempts: 9 })[0]).toMatch(new RegExp(`; ${HINT_CAP}$`));
  });

  test('every bound is accepted at its edge, and the defaults are within them', () => {
    expect(refusedBy({})).toEqual([]);
    expect(refusedBy({ ...RECOVERY_DEFAULTS, delaysSeconds: [...RECOVERY_DEFAULTS.delaysSeconds] })).toEqual([]);
    expect(
      refusedBy({ rebookAfterSeconds: 600, maxBookAttempts: 3, repeatEverySeconds: 60, deadlineSeconds: WEEK }),
    ).toEqual([]);
    expect(
      refusedBy({ rebookAfterSeconds: 86_400, maxBookAttempts: 1, repeatEverySeconds: 3600, deadlineSeconds: WEEK }),
    ).toEqual([]);
    expect(refusedBy({ delaysSeconds: [5, ...Array<number>(19).fill(3600)], deadlineSeconds: WEEK })).toEqual([]);
    expect(refusedBy({ delaysSeconds: [] })).toEqual([]);
    expect(refusedBy({ feeChangeMarginSeconds: 90 })).toEqual([]);
  });

  test('the bounds are the named constants', () => {
    expect(RECOVERY_BOUNDS).toEqual({
      rebookAfterSeconds: { min: 600, max: 86_400 },
      maxBookAttempts: { min: 1, max: 3 },
      deadlineSeconds: { max: WEEK },
      delaysSeconds: { min: 5, max: 3600, maxEntries: 20 },
      repeatEverySeconds: { min: 60, max: 3600 },
      feeChangeMarginSeconds: { min: 90, max: 3600 },
    });
  });
});

describe("the deadline's floor comes from the policy's own schedule", () => {
  test('default schedule: the re-send poll is at 930 s, plus the first Book and the re-send at their timeout', () => {
    const policy = { ...RECOVERY_DEFAULTS };
    expect(resendPollOffsetSeconds(policy)).toBe(930);
    expect(ACTIVITY_TIMEOUT_SECONDS.book).toBe(120);
    expect(minimumDeadlineSeconds(policy)).toBe(1170);
    expect(refusedBy({ deadlineSeconds: 1170 })).toEqual([]);
    expect(refusedBy({ deadlineSeconds: 1169 })[0]).toContain(
      'the first poll at or after rebookAfterSeconds is 930 s after Book, and the first Book and the re-send may each take 120 s',
    );
  });

  test('a schedule of its own: polls at 0, 60, 120, 420, 720 s; the re-send at 720 s', () => {
    const schedule = { delaysSeconds: [60, 60], repeatEverySeconds: 300, rebookAfterSeconds: 600 };
    expect(minimumDeadlineSeconds(schedule)).toBe(720 + 240);
    expect(refusedBy({ ...schedule, deadlineSeconds: 960 })).toEqual([]);
    expect(refusedBy({ ...schedule, deadlineSeconds: 959 })).toEqual([
      expect.stringContaining('recovery.deadlineSeconds: must be at least 960 ('),
    ]);
  });

  test('a longer re-send wait raises the floor above the default deadline', () => {
    // The first poll at or after 86400 s on the default schedule: 930 + 143 × 600 = 86730 s.
    expect(refusedBy({ rebookAfterSeconds: 86_400 })).toEqual([
      expect.stringContaining('recovery.deadlineSeconds: must be at least 86970 ('),
    ]);
  });

  test('the re-send poll is the workflow schedule`s first poll at or after rebookAfterSeconds', () => {
    const b = RECOVERY_BOUNDS;
    const policy = fc.record({
      delaysSeconds: fc.array(fc.integer({ min: b.delaysSeconds.min, max: b.delaysSeconds.max }), { maxLength: 20 }),
      repeatEverySeconds: fc.integer({ min: b.repeatEverySeconds.min, max: b.repeatEverySeconds.max }),
      rebookAfterSeconds: fc.integer({ min: b.rebookAfterSeconds.min, max: b.rebookAfterSeconds.max }),
    });
    fc.assert(
      fc.property(policy, (p) => {
        let k = 0;
        while (pollOffsetSeconds(k, p) < p.rebookAfterSeconds) k++;
        expect(resendPollOffsetSeconds(p)).toBe(pollOffsetSeconds(k, p));
        // Within the bounds the floor always fits under the cap.
        expect(minimumDeadlineSeconds(p)).toBeLessThanOrEqual(b.deadlineSeconds.max);
      }),
      { numRuns: 200 },
    );
  });

  test('a schedule already refused is not summed into a deadline floor as well', () => {
    expect(refusedBy({ repeatEverySeconds: 1, deadlineSeconds: 100 })).toEqual([
      expect.stringContaining('recovery.repeatEverySeconds: must be at least 60'),
    ]);
  });
});

describe('recovery.testing', () => {
  const fast: RecoveryOptions = {
    delaysSeconds: [1],
    repeatEverySeconds: 1,
    rebookAfterSeconds: 2,
    deadlineSeconds: 10,
  };

  test('lifts the bounds on a worker with RECOVERY_TESTING=on', () => {
    const checked = validateBookingRequest(withRecovery({ ...fast, testing: true, maxBookAttempts: 5 }), {
      recoveryTesting: true,
    });
    expect(checked.valid).toBe(true);
    if (!checked.valid) return;
    expect(checked.recovery).toMatchObject({ ...fast, maxBookAttempts: 5 });
  });

  test('is refused by a worker without the switch, naming recovery.testing and RECOVERY_TESTING, with the bounds it met', () => {
    const issues = refusedBy({ ...fast, testing: true });
    expect(issues[0]).toMatch(/^recovery\.testing: .*RECOVERY_TESTING=on/);
    expect(issues.slice(1).map((i) => i.slice(0, i.indexOf(':')))).toEqual([
      'recovery.rebookAfterSeconds',
      'recovery.delaysSeconds.0',
      'recovery.repeatEverySeconds',
    ]);
    // Even with production values: a test request never reaches a worker that books for real.
    expect(refusedBy({ testing: true })).toEqual([expect.stringMatching(/^recovery\.testing: /)]);
  });

  test('the switch alone lifts nothing: without `testing` the bounds hold on a test worker too', () => {
    expect(refusedBy(fast, true).length).toBeGreaterThan(0);
    expect(refusedBy({ ...fast, testing: false }, true).length).toBeGreaterThan(0);
  });

  test('keeps the shape checks: positive numbers, a whole number of Book sends', () => {
    expect(refusedBy({ testing: true, rebookAfterSeconds: 0 }, true)).toEqual([
      'recovery.rebookAfterSeconds: Too small: expected number to be >0',
    ]);
    expect(refusedBy({ testing: true, maxBookAttempts: 1.5 }, true)).toEqual([
      'recovery.maxBookAttempts: Invalid input: expected int, received number',
    ]);
  });
});

describe('the exploit: Book re-sent every second, or a booking unresolved at once', () => {
  test('{rebookAfterSeconds: 1, maxBookAttempts: 20, delaysSeconds: [1]} is refused, naming each field', () => {
    expect(refusedBy({ rebookAfterSeconds: 1, maxBookAttempts: 20, delaysSeconds: [1] })).toEqual([
      expect.stringMatching(/^recovery\.rebookAfterSeconds: must be at least 600 /),
      expect.stringMatching(/^recovery\.maxBookAttempts: must be at most 3 /),
      expect.stringMatching(/^recovery\.delaysSeconds\.0: must be at least 5 /),
    ]);
  });

  test('{deadlineSeconds: 1} is refused', () => {
    expect(refusedBy({ deadlineSeconds: 1 })).toEqual([
      expect.stringMatching(/^recovery\.deadlineSeconds: must be at least 1170 /),
    ]);
  });
});

describe('the client helper', () => {
  /** A client that counts starts and answers none. */
  function guardClient() {
    let starts = 0;
    const client = {
      workflow: {
        start: async () => {
          starts++;
          throw new Error('started');
        },
      },
    } as unknown as Client;
    return { client, starts: () => starts };
  }

  test('refuses out-of-bounds values before Temporal, in the worker`s words', async () => {
    const recovery = { rebookAfterSeconds: 1, maxBookAttempts: 20, delaysSeconds: [1] };
    const guard = guardClient();
    const error = await startBooking(guard.client, withRecovery(recovery)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidBookingRequestError);
    expect((error as InvalidBookingRequestError).issues).toEqual(refusedBy(recovery));
    expect(guard.starts()).toBe(0);
  });

  test('accepts `testing`, which only the worker can judge', async () => {
    const guard = guardClient();
    const request = withRecovery({ testing: true, rebookAfterSeconds: 1 });
    await expect(startBooking(guard.client, request)).rejects.toThrow('started');
    expect(guard.starts()).toBe(1);
    expect(BookingRequest.safeParse(request).success).toBe(true);
  });
});
