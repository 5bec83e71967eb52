/**
 * The conformance kit against the sandbox supplier: every automatic clause passes against it as it is, and each
 * drift or fault mode shows up as the difference it introduces, in the clause that owns it, with the profile that
 * absorbs it where one can. The kit talks HTTP to a real sandbox, through the product's own client.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/runtime/config/index';
import { runConformance, type ConformanceOptions, type ConformanceReport } from '../../src/operators/conformance/run';
import { main } from '../../src/operators/conformance/main';
import { renderJUnit } from '../../src/operators/conformance/report/junit';
import { renderMarkdown } from '../../src/operators/conformance/report/markdown';
import { scenarios } from '../../src/operators/conformance/scenarios/index';
import type { ClauseReport, Scenario } from '../../src/operators/conformance/types';
import { defaultSupplierProfile, SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { SandboxOptions } from '../../dev/sandbox/server';
import { APP_KEY, APP_SECRET, Resources } from './helpers';

const resources = new Resources();
afterEach(() => resources.closeAll());

/** Fast enough for a test: the sandbox settles orders in 200 ms. */
function options(baseUrl: string, more: Partial<ConformanceOptions> = {}): ConformanceOptions {
  return {
    baseUrl,
    credentials: { kind: 'ticket', appKey: APP_KEY, appSecret: APP_SECRET },
    profile: defaultSupplierProfile,
    ratePkgIds: ['pkg-conformance-1', 'pkg-conformance-2'],
    budget: 200,
    ratePerSecond: 100,
    polling: { firstIntervalMs: 50, maxIntervalMs: 200, settleTimeoutMs: 5_000, stableAfterMs: 400 },
    ...more,
  };
}

async function runAgainst(
  sandbox: Partial<SandboxOptions> = {},
  more: Partial<ConformanceOptions> = {},
): Promise<ConformanceReport> {
  const s = await resources.sandbox(sandbox);
  return runConformance(options(s.url, more));
}

const clause = (report: ConformanceReport, id: string): ClauseReport => {
  const found = report.clauses.find((c) => c.id === id);
  if (!found) throw new Error(`no clause ${id}`);
  return found;
};

/** Clauses whose result is not `pass` (manual ones aside), as `id: result`. */
const notPassing = (report: ConformanceReport) =>
  report.clauses.filter((c) => c.result !== 'pass' && c.result !== 'manual').map((c) => `${c.id}: ${c.result}`);

/** The proposed profile, as a worker's configuration reads it: accepted, or the test fails with the reason. */
const asWorkerProfile = (report: ConformanceReport) =>
  loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: JSON.stringify(report.proposedProfile) }).supplier.profile;

describe('the conformance kit against the sandbox', () => {
  test('as it is: every automatic clause passes, nothing proposed, one order per reference', async () => {
    const sandbox = await resources.sandbox();
    const report = await runConformance(options(sandbox.url));
    expect(notPassing(report)).toEqual([]);
    expect(report.summary.pass).toBe(28);
    expect(report.summary.manual).toBe(7);
    expect(report.proposedProfile).toEqual({});
    for (const c of report.clauses.filter(
      (c) =>
        c.result === 'pass' &&
        !c.id.startsWith('fields') &&
        c.id !== 'orders.statuses' &&
        c.id !== 'limits.rate' &&
        c.id !== 'cancel.fee',
    )) {
      expect(c.requests.length).toBeGreaterThan(0);
    }
    // Book twice with one reference, still one order; every order the kit made is named in the report.
    const refs = sandbox.orders().map((o) => o.customerReferenceNo);
    expect(new Set(refs).size).toBe(refs.length);
    expect([...report.orders].sort()).toEqual([...refs].sort());
    expect(report.requests.sent).toBeLessThanOrEqual(report.requests.budget);
  });

  test('drift mode: the fields of another type are named, every decision still passes', async () => {
    const report = await runAgainst({ drift: true });
    expect(notPassing(report)).toEqual(['fields.types: differs']);
    const types = clause(report, 'fields.types').observed;
    for (const path of ['data.orders[].hotelConfirmNo', 'data.orders[].nightCount', 'data.roomRatePkg.rateComment']) {
      expect(types).toContain(path);
    }
    expect(report.proposedProfile).toEqual({});
  });

  test('a supplier numbering statuses and codes its own way: each clause names it, the proposal absorbs it', async () => {
    const theirs = SupplierProfile.parse({
      orderStatus: { unknown: 10, confirming: 11, confirmed: 12, cancelled: 13, failed: 14, cancelFailed: 15 },
      checkAvailStatus: { available: 7, unavailable: 8 },
      codes: { ariChanged: 4242 },
    });
    const report = await runAgainst({ profile: theirs });
    expect(clause(report, 'checkAvail.available').proposal).toEqual({ checkAvailStatus: { available: 7 } });
    expect(clause(report, 'checkAvail.unavailable').proposal).toEqual({ checkAvailStatus: { unavailable: 8 } });
    expect(clause(report, 'checkAvail.priceChanged').proposal).toEqual({ codes: { ariChanged: 4242 } });
    expect(clause(report, 'orders.statuses').result).toBe('differs');
    expect(report.proposedProfile).toEqual({
      codes: { ariChanged: 4242 },
      orderStatus: { confirming: 11, confirmed: 12, cancelled: 13, failed: 14 },
      checkAvailStatus: { available: 7, unavailable: 8 },
    });
    expect(asWorkerProfile(report).orderStatus.confirmed).toBe(12);
  });

  test('run again with the proposed profile, the same supplier passes every clause it could observe', async () => {
    const theirs = SupplierProfile.parse({
      orderStatus: { unknown: 10, confirming: 11, confirmed: 12, cancelled: 13, failed: 14, cancelFailed: 15 },
      checkAvailStatus: { available: 7, unavailable: 8 },
    });
    const sandbox = await resources.sandbox({ profile: theirs });
    const first = await runConformance(options(sandbox.url));
    const again = await runConformance(options(sandbox.url, { profile: asWorkerProfile(first) }));
    expect(notPassing(again)).toEqual([]);
  });

  // Every fault the sandbox's Test header offers the kit's requests, as the clause that owns it reports it.
  const faults: Array<[string, string, ClauseReport['result'], RegExp]> = [
    ['checkAvail=500', 'checkAvail.available', 'differs', /SupplierServerError \(HTTP 500/],
    [
      'checkAvail=malformed',
      'checkAvail.available',
      'differs',
      /SupplierInvalidResponse \(HTTP 200, unreadable: \(body\): not JSON/,
    ],
    ['checkAvail=403', 'checkAvail.available', 'differs', /SupplierForbidden \(HTTP 403/],
    ['scenario=unknownInternalError', 'checkAvail.available', 'differs', /SupplierServerError \(HTTP 500/],
    [
      'book=creditLimit&bookTimes=1',
      'book.answered',
      'differs',
      /SupplierCreditLimit .* reads it as rejected: no order/,
    ],
    ['book=403&bookTimes=1', 'book.answered', 'differs', /SupplierForbidden \(HTTP 403.*rejected: no order/],
    [
      'book=unknownCodeAfterCreate&bookTimes=1',
      'book.answered',
      'differs',
      /code 100009999\), a code the profile does not list/,
    ],
    [
      'book=504AfterCreate&bookTimes=1',
      'book.answered',
      'differs',
      /SupplierGatewayTimeout \(HTTP 504.*may have made an order/,
    ],
    [
      'book=504BeforeCreate&bookTimes=1',
      'book.answered',
      'differs',
      /SupplierGatewayTimeout \(HTTP 504.*may have made an order/,
    ],
    [
      'book=500AfterCreate&bookTimes=1',
      'book.answered',
      'differs',
      /SupplierServerError \(HTTP 500.*may have made an order/,
    ],
    [
      'book=resetAfterCreate&bookTimes=1',
      'book.answered',
      'differs',
      /SupplierNetworkAfterSend.*may have made an order/,
    ],
    ['book=malformedAfterCreate&bookTimes=1', 'book.answered', 'differs', /not JSON.*may have made an order/],
    ['scenario=serviceUnavailable', 'queryOrders.listed', 'differs', /Book answered an error and no order was listed/],
    ['resend=400', 'book.idempotent', 'differs', /repeat answered SupplierBadRequest \(HTTP 400/],
    [
      'resend=unknownCode',
      'book.idempotent',
      'differs',
      /repeat answered SupplierBusinessError \(HTTP 200, code 100009998/,
    ],
    ['resend=429', 'book.idempotent', 'skipped', /stopped: the supplier rate limited book/],
    ['outcome=pending', 'queryOrders.listed', 'differs', /not settled within the settle timeout/],
    [
      'lagAfterConfirmedMs=600',
      'queryOrders.consistent',
      'differs',
      /read in status 2, the listing showed not listed for \d+ ms/,
    ],
    [
      'lagAfterConfirmedMs=600&relistAs=pending',
      'queryOrders.consistent',
      'differs',
      /read in status 2, the listing showed status 1 for \d+ ms/,
    ],
    ['outcome=failed', 'queryOrders.listed', 'differs', /it ended Failed, not confirmed/],
    [
      'cancel=unknownCode&cancelTimes=2',
      'cancel.confirmed',
      'differs',
      /code 100009997\), yet the order then in status 3/,
    ],
    ['cancel=504AfterAccept&cancelTimes=2', 'cancel.confirmed', 'differs', /HTTP 504.*yet the order then in status 3/],
    ['cancel=refuse&cancelTimes=2', 'cancel.confirmed', 'differs', /SupplierBadRequest \(HTTP 400.*refused/],
    ['cancel=lost&cancelTimes=2', 'cancel.confirmed', 'differs', /in status 2, not settled within the settle timeout/],
    ['cancel=pending', 'cancel.confirmed', 'differs', /answered status 2; the order then in status 2, not settled/],
    [
      'cancel=failed',
      'cancel.confirmed',
      'differs',
      /in status 5: the hotel refused the cancellation \(CancelFailed\)/,
    ],
  ];
  test.each(faults)('Test: %s is reported by %s (%s)', async (testFlags, id, result, observed) => {
    const report = await runAgainst(
      {},
      { testFlags, polling: { firstIntervalMs: 50, maxIntervalMs: 200, settleTimeoutMs: 1_500, stableAfterMs: 400 } },
    );
    const c = clause(report, id);
    expect({ result: c.result, observed: c.observed }).toEqual({ result, observed: expect.stringMatching(observed) });
    // Nothing else is blamed on the supplier: no blocker comes of a fault the product tolerates.
    expect(report.clauses.filter((c) => c.result === 'blocker').map((c) => `${c.id}: ${c.observed}`)).toEqual([]);
  });

  test.each(['confirmAfterQueries=3', 'bookDelayMs=300', 'listAfterQueries=2', 'freeCancel=0', 'cancelRepeat=refuse'])(
    'Test: %s is within the profile: every automatic clause passes',
    async (testFlags) => {
      const report = await runAgainst({}, { testFlags });
      expect(notPassing(report)).toEqual([]);
    },
  );

  test.each(['500', 'malformed'] as const)(
    'a QueryOrders answered %s once while the order is followed: asked again, and said',
    async (fault) => {
      const sandbox = await resources.sandbox();
      // The fault is queued as the main order's follow-up starts, so the first QueryOrders of it meets the fault.
      const faulted = scenarios.map((s): Scenario =>
        s.id !== 'queryOrders.listed'
          ? s
          : {
              ...s,
              run: (ctx) => {
                sandbox.configure({ queryOrders: { fault, times: 1 } });
                return s.run(ctx);
              },
            },
      );
      const report = await runConformance(options(sandbox.url), faulted);
      const listed = clause(report, 'queryOrders.listed');
      expect(listed.result).toBe('differs');
      expect(listed.observed).toMatch(/1 failed and asked again/);
      expect(notPassing(report)).toEqual(['queryOrders.listed: differs']);
    },
  );

  test('an order listed late: the delay is measured, and the refused Book is looked up only after it', async () => {
    const report = await runAgainst({}, { testFlags: 'listAfterMs=800' });
    const listed = clause(report, 'queryOrders.listed');
    expect(listed.result).toBe('pass');
    const ms = Number(/listed after (\d+) ms/.exec(listed.observed)?.[1]);
    // Measured from Book's answer; the order was made a moment before it.
    expect(ms).toBeGreaterThanOrEqual(750);
    expect(notPassing(report)).toEqual([]);
  });

  test('a Cancel repeated for a cancelled order is refused (cancelRepeat=refuse): a refusal the product settles by reading back', async () => {
    const report = await runAgainst({}, { testFlags: 'cancelRepeat=refuse' });
    const repeat = clause(report, 'cancel.repeat');
    expect(repeat.result).toBe('pass');
    expect(repeat.observed).toMatch(/SupplierBadRequest \(HTTP 400.*the order still cancelled/);
  });

  test('a fee deadline already past (freeCancel=0): the fee charged is the one the policy lists', async () => {
    const report = await runAgainst({}, { testFlags: 'freeCancel=0' });
    const fee = clause(report, 'cancel.fee');
    expect(fee.result).toBe('pass');
    expect(fee.observed).toMatch(/charged [1-9][\d.]* USD, as quoted/);
  });

  test('the first rate limit stops the run: later clauses skipped, the reason named, nothing sent after it', async () => {
    const sandbox = await resources.sandbox();
    sandbox.configure({ queryOrders: { fault: '429', times: 1 } });
    const report = await runConformance(options(sandbox.url));
    expect(report.stoppedEarly).toMatch(/rate limited queryOrders/);
    expect(clause(report, 'queryOrders.listed').result).toBe('skipped');
    expect(clause(report, 'cancel.confirmed').result).toBe('skipped');
    expect(clause(report, 'limits.rate').result).toBe('differs');
    const sent = sandbox.calls().filter((c) => c.op !== 'ticket');
    expect(sent[sent.length - 1]!.httpStatus).toBe(429);
    expect(report.requests.sent).toBe(sent.length);
  });

  test("a supplier limiting below the kit's rate: the first 429 ends the run, and limits.rate says so", async () => {
    const sandbox = await resources.sandbox({ rateLimits: { overall: 3, checkAvail: 3, book: 3, queryOrders: 3 } });
    const report = await runConformance(options(sandbox.url));
    expect(report.stoppedEarly).toMatch(/the supplier rate limited \w+ \(SupplierRateLimited \(HTTP 429/);
    expect(clause(report, 'limits.rate')).toMatchObject({
      result: 'differs',
      observed: expect.stringMatching(/lower --rate/),
    });
    const calls = sandbox.calls().filter((c) => c.op !== 'ticket');
    expect(calls.filter((c) => c.httpStatus === 429)).toHaveLength(1);
    expect(calls[calls.length - 1]!.httpStatus).toBe(429);
  });

  test('the budget is kept: the run stops when it is spent', async () => {
    const sandbox = await resources.sandbox();
    const report = await runConformance(options(sandbox.url, { budget: 6 }));
    expect(report.requests.sent).toBe(6);
    expect(sandbox.calls().filter((c) => c.op !== 'ticket')).toHaveLength(6);
    expect(report.stoppedEarly).toMatch(/budget \(6\)/);
  });

  test('the Markdown summary and the JUnit XML say the same as report.json', async () => {
    const report = await runAgainst({ drift: true });
    const md = renderMarkdown(report);
    expect(md).toContain('**27 pass, 1 differ, 0 blocker, 7 manual, 0 skipped.**');
    expect(md).toContain('## Differences');
    const junit = renderJUnit(report);
    expect(junit).toContain(`tests="${report.clauses.length}" failures="1" skipped="7"`);
    expect(junit).toMatch(/<failure type="differs"[^>]*>/);
  });
});

describe('npm run conformance', () => {
  test('refuses to start without --test-environment, before sending anything', async () => {
    const sandbox = await resources.sandbox();
    const errors: string[] = [];
    const spy = jest.spyOn(console, 'error').mockImplementation((text: string) => void errors.push(text));
    try {
      const code = await main(['--base-url', sandbox.url, '--rate-pkg', 'pkg-1'], { SUPPLIER_TOKEN: 't' });
      expect(code).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(errors.join('\n')).toMatch(/--test-environment/);
    expect(sandbox.calls()).toHaveLength(0);
  });

  test("runs from the worker's credential variables: the plan first, then report.json, report.md and junit.xml", async () => {
    const sandbox = await resources.sandbox();
    const out = mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
    resources.add(async () => rmSync(out, { recursive: true, force: true }));
    const lines: string[] = [];
    const spy = jest.spyOn(console, 'log').mockImplementation((text: string) => void lines.push(text));
    let code: number;
    try {
      code = await main(
        ['--base-url', sandbox.url, '--rate-pkg', 'pkg-1', 'pkg-2', '--test-environment', '--out', out],
        { SUPPLIER_APP_KEY: APP_KEY, SUPPLIER_APP_SECRET: APP_SECRET },
        { rate: 50, polling: { firstIntervalMs: 50, maxIntervalMs: 200, settleTimeoutMs: 5_000, stableAfterMs: 400 } },
      );
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(0);
    expect(lines[0]).toMatch(/^Conformance plan against http:\/\/127\.0\.0\.1:\d+/);
    expect(lines[0]).toMatch(/pkg-2: a Book with Test: scenario=soldOut/);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    expect(report.clauses).toHaveLength(35);
    expect(report.clauses[0]).toEqual(
      expect.objectContaining({
        id: 'checkAvail.available',
        result: 'pass',
        expected: expect.any(String),
        observed: expect.any(String),
      }),
    );
    expect(report.proposedProfile).toEqual({});
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toMatch(/^# Supplier conformance: /);
    expect(readFileSync(path.join(out, 'junit.xml'), 'utf8')).toMatch(
      /<testsuites name="supplier-conformance" tests="35" failures="0"/,
    );
  });
});
