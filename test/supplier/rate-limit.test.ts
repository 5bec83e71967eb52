/**
 * Client-side rate limiting: the token-bucket math on an injected clock, waiting in line on fake
 * timers, and, over real HTTP, a burst of lookups that stays under the sandbox supplier's
 * QueryOrders limit with the limiter and runs into 429s without it.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { createQueryOrdersCoalescer } from '../../src/runtime/supplier/coalescer';
import { isSupplierError } from '../../src/runtime/supplier/errors';
import { createHttpSupplierClient } from '../../src/runtime/supplier/http-client';
import type { SupplierClient } from '../../src/runtime/supplier/interface';
import { createRateLimitedSupplierClient } from '../../src/runtime/supplier/limited-client';
import { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { SupplierRateLimiter, TokenBucket, type RateLimits } from '../../src/runtime/supplier/rate-limiter';
import type { BookRequest } from '../../src/runtime/supplier/schemas';
import { ticketTokens } from '../../src/runtime/supplier/token';
import { startSandbox, type Sandbox } from '../../dev/sandbox/server';

/** A clock the test moves by hand. */
function manualClock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), set: (ms: number) => void (t = ms) };
}

/** The most timestamps (ms) in any half-open one-second window; the busiest window starts at one of them. */
function maxInAnySecond(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.max(...sorted.map((start) => sorted.filter((t) => t >= start && t < start + 1000).length));
}

const limits = (overrides: Partial<RateLimits> = {}): RateLimits => ({
  overall: 100,
  checkAvail: 10,
  book: 10,
  queryOrders: 50,
  ...overrides,
});

describe('token bucket math (injected clock)', () => {
  test('starts full, refills at its rate, never beyond its capacity', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(10, 2, clock.now);
    expect(bucket.available()).toBe(2);
    bucket.take();
    bucket.take();
    expect(bucket.available()).toBe(0);
    clock.advance(50);
    expect(bucket.available()).toBeCloseTo(0.5);
    clock.advance(50);
    expect(bucket.available()).toBeCloseTo(1);
    clock.advance(10_000);
    expect(bucket.available()).toBe(2);
  });

  test('msUntilToken is the time the missing fraction takes to refill', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(5, 1, clock.now);
    expect(bucket.msUntilToken()).toBe(0);
    bucket.take();
    expect(bucket.msUntilToken()).toBeCloseTo(200);
    clock.advance(150);
    expect(bucket.msUntilToken()).toBeCloseTo(50);
    clock.advance(50);
    expect(bucket.msUntilToken()).toBe(0);
  });

  test('a clock stepping back neither adds nor removes tokens', () => {
    const clock = manualClock();
    const bucket = new TokenBucket(10, 1, clock.now);
    bucket.take();
    clock.advance(-5_000);
    expect(bucket.available()).toBe(0);
    clock.advance(100);
    expect(bucket.available()).toBeCloseTo(1);
  });

  test('with capacity 1, the limit is never exceeded in any one-second window', () => {
    const clock = manualClock(0);
    const limiter = new SupplierRateLimiter({ limits: limits({ queryOrders: 5 }), marginMs: 0, now: clock.now });
    const sent: number[] = [];
    // Ask every millisecond for ten seconds: grants are what would go on the wire.
    for (let t = 0; t < 10_000; t++) {
      clock.set(t);
      if (limiter.tryAcquire('queryOrders')) sent.push(t);
    }
    expect(sent).toHaveLength(50);
    expect(maxInAnySecond(sent)).toBe(5);
  });

  test('the default margin spaces grants so a second holds at most the limit even when arrival delays vary by 50 ms', () => {
    const clock = manualClock(0);
    const limiter = new SupplierRateLimiter({ limits: limits({ queryOrders: 5 }), now: clock.now });
    const granted: number[] = [];
    for (let t = 0; t < 10_000; t++) {
      clock.set(t);
      if (limiter.tryAcquire('queryOrders')) granted.push(t);
    }
    // 5/s lowered by 1000/1050: one grant every 210 ms.
    expect(granted.slice(0, 4)).toEqual([0, 210, 420, 630]);
    const delayPatterns = [
      (i: number) => (i % 2) * 50,
      (i: number) => (i % 6 === 0 ? 50 : 0),
      (i: number) => (i * 37) % 51,
    ];
    for (const delay of delayPatterns) {
      expect(maxInAnySecond(granted.map((t, i) => t + delay(i)))).toBeLessThanOrEqual(5);
    }
  });

  test('the overall bucket binds across operations; each operation has its own bucket', () => {
    const clock = manualClock();
    const limiter = new SupplierRateLimiter({
      limits: limits({ overall: 2, checkAvail: 1, book: 1, queryOrders: 1 }),
      capacity: 2,
      marginMs: 0,
      now: clock.now,
    });
    // Capacity is capped at one second's worth: checkAvail holds 1, overall 2.
    expect(limiter.tryAcquire('checkAvail')).toBe(true);
    expect(limiter.tryAcquire('checkAvail')).toBe(false);
    expect(limiter.tryAcquire('book')).toBe(true);
    // queryOrders has a token of its own, but overall is spent.
    expect(limiter.tryAcquire('queryOrders')).toBe(false);
    expect(limiter.msUntilAvailable('queryOrders')).toBeCloseTo(500);
    clock.advance(500);
    expect(limiter.tryAcquire('queryOrders')).toBe(true);
    expect(limiter.msUntilAvailable('checkAvail')).toBeCloseTo(500);
  });

  test('a failed tryAcquire takes nothing from either bucket', () => {
    const clock = manualClock();
    const limiter = new SupplierRateLimiter({
      limits: limits({ overall: 10, queryOrders: 1 }),
      marginMs: 0,
      now: clock.now,
    });
    expect(limiter.tryAcquire('book')).toBe(true);
    expect(limiter.tryAcquire('queryOrders')).toBe(false);
    clock.advance(100);
    // Overall has refilled; queryOrders (1/s) can only go now because the refusal left its token.
    expect(limiter.tryAcquire('queryOrders')).toBe(true);
  });
});

describe('waiting for a token (fake timers)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('callers wait in arrival order and go 1/rate apart', async () => {
    const limiter = new SupplierRateLimiter({
      limits: limits({ queryOrders: 10 }),
      marginMs: 0,
      now: () => Date.now(),
    });
    const start = Date.now();
    const admitted: number[] = [];
    const waits = [0, 1, 2].map((i) =>
      limiter.acquire('queryOrders').then(() => {
        admitted.push(i);
      }),
    );
    const at: number[] = [];
    for (let i = 0; i < 3; i++) {
      await jest.advanceTimersByTimeAsync(i === 0 ? 0 : 100);
      at.push(admitted.length);
    }
    await Promise.all(waits);
    expect(admitted).toEqual([0, 1, 2]);
    expect(at).toEqual([1, 2, 3]);
    expect(Date.now() - start).toBe(200);
  });

  test('an operation waiting on its own bucket does not hold up another operation', async () => {
    const limiter = new SupplierRateLimiter({ limits: limits({ book: 1 }), marginMs: 0, now: () => Date.now() });
    await limiter.acquire('book');
    let bookAdmitted = false;
    const book = limiter.acquire('book').then(() => void (bookAdmitted = true));
    let queryAdmitted = false;
    const query = limiter.acquire('queryOrders').then(() => void (queryAdmitted = true));
    // One overall token (100/s) later, queryOrders goes; book still waits for its own bucket (1/s).
    await jest.advanceTimersByTimeAsync(10);
    expect([queryAdmitted, bookAdmitted]).toEqual([true, false]);
    await jest.advanceTimersByTimeAsync(990);
    await Promise.all([book, query]);
    expect(bookAdmitted).toBe(true);
  });

  test('an aborted wait rejects with the reason and gives its place to the next caller', async () => {
    const limiter = new SupplierRateLimiter({
      limits: limits({ queryOrders: 10 }),
      marginMs: 0,
      now: () => Date.now(),
    });
    await limiter.acquire('queryOrders');
    const controller = new AbortController();
    const leaving = limiter.acquire('queryOrders', controller.signal);
    const next = limiter.acquire('queryOrders');
    controller.abort(new Error('activity cancelled'));
    await expect(leaving).rejects.toThrow('activity cancelled');
    await jest.advanceTimersByTimeAsync(100);
    await expect(next).resolves.toBeUndefined();
  });

  test('the limited client turns an aborted wait into a SupplierClientTimeout and sends nothing', async () => {
    const limiter = new SupplierRateLimiter({ limits: limits({ book: 1 }), marginMs: 0, now: () => Date.now() });
    const sent: string[] = [];
    const inner: SupplierClient = {
      checkAvail: async () => ({ status: 1 }),
      book: async (req) => (
        sent.push(req.customerReferenceNo),
        { customerReferenceNo: req.customerReferenceNo, status: 1 }
      ),
      queryOrders: async () => ({ orders: [], unreadable: [] }),
      cancel: async () => ({ status: 2 }),
      close: async () => undefined,
    };
    const client = createRateLimitedSupplierClient(inner, limiter);
    await client.book(bookRequest('first'), { sessionId: 's' });
    const controller = new AbortController();
    const second = client.book(bookRequest('second'), { sessionId: 's', signal: controller.signal });
    controller.abort();
    await expect(second).rejects.toMatchObject({ name: 'SupplierError', type: 'SupplierClientTimeout' });
    expect(sent).toEqual(['first']);
  });
});

function bookRequest(customerReferenceNo: string): BookRequest {
  return {
    customerReferenceNo,
    ratePkgId: 'PKG-SANDBOX-1',
    holder: {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'ada@example.com',
      phone: { countryCode: 'GB', countryNumber: 44, number: '2079460000' },
    },
    guests: [{ roomIndex: 0, firstName: 'Ada', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false }],
  };
}

describe('over HTTP against the sandbox with a QueryOrders limit of 5/s', () => {
  const LIMIT = 5;
  const sandboxLimits: RateLimits = { overall: 10_000, checkAvail: 10_000, book: 10_000, queryOrders: LIMIT };
  const profile = SupplierProfile.parse({
    rateLimits: sandboxLimits,
    timeoutsMs: { ticket: 2_000, checkAvail: 2_000, book: 2_000, queryOrders: 2_000 },
  });

  let sandbox: Sandbox;
  let supplier: SupplierClient;
  let ticketAgent: Agent;

  beforeEach(async () => {
    sandbox = await startSandbox({ port: 0, rateLimits: sandboxLimits });
    ticketAgent = new Agent({ connections: 2 });
    const tokens = ticketTokens({
      baseUrl: sandbox.url,
      profile,
      appKey: 'sandbox-app',
      appSecret: 'sandbox-secret',
      dispatcher: ticketAgent,
    });
    supplier = createHttpSupplierClient({ baseUrl: sandbox.url, profile, tokens });
  });
  afterEach(async () => {
    await supplier.close();
    await ticketAgent.close();
    await sandbox.close();
  });

  /** 60 references, a third of them booked; the rest are not found. */
  async function references(): Promise<{ refs: string[]; booked: Set<string> }> {
    const refs = Array.from({ length: 60 }, () => randomUUID());
    const booked = refs.filter((_, i) => i % 3 === 0);
    await Promise.all(
      booked.map((ref) => supplier.book(bookRequest(ref), { sessionId: `sess-${ref}`, test: 'confirmAfterMs=0' })),
    );
    return { refs, booked: new Set(booked) };
  }

  /** One booking after another, each polling as soon as the previous answer is in: one request each. */
  async function sequentialBurst(
    lookup: (ref: string) => Promise<unknown>,
    refs: string[],
  ): Promise<{ ok: number; rateLimited: number }> {
    let ok = 0;
    let rateLimited = 0;
    for (const ref of refs) {
      try {
        await lookup(ref);
        ok++;
      } catch (err) {
        if (!isSupplierError(err) || err.type !== 'SupplierRateLimited') throw err;
        rateLimited++;
      }
    }
    return { ok, rateLimited };
  }

  /** Lookups started 5 ms apart, as bookings waking one after another: without a limiter each is a request of its own. */
  async function staggeredBurst(
    lookup: (ref: string) => Promise<unknown>,
    refs: string[],
  ): Promise<PromiseSettledResult<unknown>[]> {
    const started: Promise<PromiseSettledResult<unknown>[]>[] = [];
    for (const ref of refs) {
      // Settled at once, so a 429 during the burst is not an unhandled rejection while the loop sleeps.
      started.push(Promise.allSettled([lookup(ref)]));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return (await Promise.all(started)).flat();
  }

  test('60 sequential lookups through the limiter: no 429 and never more than the limit in one second', async () => {
    const { refs, booked } = await references();
    const limiter = new SupplierRateLimiter({ limits: profile.rateLimits });
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50, limiter });
    let found = 0;

    const result = await sequentialBurst(async (ref) => {
      const mine = await orders.lookup(ref);
      expect(mine.map((o) => o.customerReferenceNo)).toEqual(booked.has(ref) ? [ref] : []);
      found += mine.length;
    }, refs);

    const stats = sandbox.stats();
    process.stderr.write(
      `with limiter: ${JSON.stringify({ ...result, requests: stats.queryOrders.requests, peakPerSecond: stats.peakPerSecond.queryOrders })}\n`,
    );
    expect(result).toEqual({ ok: 60, rateLimited: 0 });
    expect(found).toBe(booked.size);
    expect(stats.rateLimited).toBe(0);
    expect(stats.peakPerSecond.queryOrders).toBeLessThanOrEqual(LIMIT);
  });

  test('the same 60 sequential lookups without the limiter meet 429s (the test above has teeth)', async () => {
    const { refs } = await references();
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });

    const result = await sequentialBurst((ref) => orders.lookup(ref), refs);

    const stats = sandbox.stats();
    process.stderr.write(
      `without limiter: ${JSON.stringify({ ...result, peakPerSecond: stats.peakPerSecond.queryOrders })}\n`,
    );
    expect(result.rateLimited).toBeGreaterThan(0);
    expect(stats.rateLimited).toBe(result.rateLimited);
    expect(stats.peakPerSecond.queryOrders).toBeGreaterThan(LIMIT);
  });

  test('a staggered burst through the limiter is merged while it waits: few requests, no 429', async () => {
    const { refs, booked } = await references();
    const limiter = new SupplierRateLimiter({ limits: profile.rateLimits });
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50, limiter });

    const settled = await staggeredBurst((ref) => orders.lookup(ref), refs);

    const stats = sandbox.stats();
    process.stderr.write(
      `staggered with limiter: ${JSON.stringify({ requests: stats.queryOrders.requests, peakPerSecond: stats.peakPerSecond.queryOrders })}\n`,
    );
    expect(settled.every((s) => s.status === 'fulfilled')).toBe(true);
    settled.forEach((s, i) => {
      const mine = (s as PromiseFulfilledResult<{ customerReferenceNo: string }[]>).value;
      expect(mine.map((o) => o.customerReferenceNo)).toEqual(booked.has(refs[i]!) ? [refs[i]] : []);
    });
    expect(stats.rateLimited).toBe(0);
    expect(stats.peakPerSecond.queryOrders).toBeLessThanOrEqual(LIMIT);
    expect(stats.queryOrders.requests).toBeLessThan(refs.length / 4);
  });

  test('the same staggered burst without the limiter meets 429s', async () => {
    const { refs } = await references();
    const orders = createQueryOrdersCoalescer({ profile, supplier, windowMs: 20, maxReferences: 50 });

    const settled = await staggeredBurst((ref) => orders.lookup(ref), refs);

    const refused = settled.filter(
      (s) => s.status === 'rejected' && isSupplierError(s.reason) && s.reason.type === 'SupplierRateLimited',
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(sandbox.stats().rateLimited).toBeGreaterThan(0);
  });

  test('the limited client keeps direct QueryOrders calls under the limit too', async () => {
    const limiter = new SupplierRateLimiter({ limits: profile.rateLimits });
    const limited = createRateLimitedSupplierClient(supplier, limiter);
    const refs = Array.from({ length: 12 }, () => randomUUID());

    await Promise.all(refs.map((ref) => limited.queryOrders({ customerReferenceNos: [ref] }, {})));

    const stats = sandbox.stats();
    expect(stats.queryOrders.requests).toBe(12);
    expect(stats.rateLimited).toBe(0);
    expect(stats.peakPerSecond.queryOrders).toBeLessThanOrEqual(LIMIT);
  });
});
