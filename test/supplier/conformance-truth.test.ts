/**
 * The conformance kit tells the truth where it matters most: each test runs it against a supplier written from the
 * spec's text (test/fixtures/conformance-supplier.ts, test/fixtures/spec-supplier.ts) with one deviation, and checks
 * the report names it instead of passing over it.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/runtime/config/index';
import { main } from '../../src/operators/conformance/main';
import { runConformance, type ConformanceOptions, type ConformanceReport } from '../../src/operators/conformance/run';
import type { ClauseReport } from '../../src/operators/conformance/types';
import { renderMarkdown } from '../../src/operators/conformance/report/markdown';
import { defaultSupplierProfile, SupplierProfile } from '../../src/runtime/config/supplier-profile';
import { OWN_PROFILE, startConformanceSupplier, kitOptions } from '../fixtures/conformance-supplier';
import {
  askedReferences,
  bookAnswer,
  ordersAnswer,
  specOrder,
  startSpecSupplier,
  type SpecSupplier,
} from '../fixtures/spec-supplier';

let supplier: SpecSupplier | undefined;
afterEach(async () => {
  await supplier?.close();
  supplier = undefined;
});

/** The own-numbers supplier's profile, so its clauses pass and only the deviation under test shows. */
const ownProfile = SupplierProfile.parse(OWN_PROFILE);

function options(baseUrl: string, more: Partial<ConformanceOptions> = {}): ConformanceOptions {
  const polling = { firstIntervalMs: 10, maxIntervalMs: 50, settleTimeoutMs: 1_000, stableAfterMs: 100 };
  return kitOptions(baseUrl, { profile: ownProfile, ratePerSecond: 200, polling, ...more });
}

const clause = (report: ConformanceReport, id: string): ClauseReport => report.clauses.find((c) => c.id === id)!;
const WINDOWS = [
  'queryOrders.byBookingTime',
  'queryOrders.byCheckInTime',
  'queryOrders.byCheckOutTime',
  'queryOrders.byFreeCancelTime',
  'queryOrders.byCancelledTime',
];

describe('window filters are checked against the orders returned', () => {
  test('a supplier that answers every order whatever the window fails each window clause, and no page size is proposed', async () => {
    supplier = await startConformanceSupplier({ ignoreWindows: true });
    const report = await runConformance(options(supplier.url));
    for (const id of WINDOWS) {
      expect([id, clause(report, id).result]).toEqual([id, expect.stringMatching(/^(blocker|differs)$/)]);
      expect(clause(report, id).observed).toMatch(/window a year earlier .*the window is not applied/);
    }
    expect(clause(report, 'queryOrders.byBookingTime').result).toBe('blocker');
    expect(clause(report, 'queryOrders.pageSize')).toMatchObject({ result: 'differs' });
    expect(clause(report, 'queryOrders.pageSize').proposal).toBeUndefined();
    expect(clause(report, 'queryOrders.pageSize').observed).toMatch(/not filtered.*none is proposed/);
    expect(report.proposedProfile).not.toHaveProperty('queryOrders');
  });

  test('the same supplier applying its windows passes them', async () => {
    supplier = await startConformanceSupplier();
    const report = await runConformance(options(supplier.url));
    for (const id of WINDOWS) expect([id, clause(report, id).result]).toEqual([id, 'pass']);
    expect(clause(report, 'queryOrders.pageSize').result).toBe('pass');
  });
});

describe('an order the kit cannot read is an order that may exist', () => {
  test('the order status sent as text: found with its status as sent, never "nothing made", and cancelled', async () => {
    // Section 2.2 types the status as a number; this supplier sends it as text, in Book's answer and every listing.
    const booked = new Set<string>();
    supplier = await startSpecSupplier({
      book: (body) => {
        const ref = String(body.customerReferenceNo);
        if (!body.holder) return { status: 400, body: { code: 100000400, msg: 'parameter error' } };
        booked.add(ref);
        return bookAnswer(specOrder(ref, { status: '2' }));
      },
      queryOrders: (body) =>
        ordersAnswer(
          ...askedReferences(body)
            .filter((r) => booked.has(r))
            .map((r) => specOrder(r, { status: '2' })),
        ),
    });
    const report = await runConformance(options(supplier.url, { profile: defaultSupplierProfile }));
    const listed = clause(report, 'queryOrders.listed');
    expect(listed.result).toBe('blocker');
    expect(listed.observed).toMatch(/listed under its reference, status as sent "2", but unreadable/);
    expect(listed.observed).not.toMatch(/nothing made/);
    const main = report.orders[0]!;
    expect(report.ordersMade).toContainEqual(
      expect.objectContaining({
        customerReferenceNo: main,
        state: 'cancelled',
        note: expect.stringMatching(/from status "2"/),
      }),
    );
    expect(supplier.callsOf('cancel').map((c) => c.body.customerReferenceNo)).toContain(main);
  });

  test('an order the kit cannot cancel is flagged as left at the supplier', async () => {
    supplier = await startConformanceSupplier();
    supplier.script({ cancel: () => ({ status: 400, body: { code: 100000400, msg: 'not allowed in test' } }) });
    const report = await runConformance(options(supplier.url));
    expect(report.ordersMade.length).toBe(new Set(report.orders).size);
    expect(report.ordersMade.length).toBeGreaterThan(0);
    for (const o of report.ordersMade) {
      expect(o).toMatchObject({
        state: 'left',
        lastStatus: '6',
        note: expect.stringMatching(/^left at the supplier: Cancel answered/),
      });
    }
    const md = renderMarkdown(report);
    expect(md).toContain(`**${report.ordersMade.length} left at the supplier**`);
  });
});

describe('an unfinished run is not a pass', () => {
  test('a run that spent its budget exits non-zero, names the clauses not run, and JUnit counts them as errors', async () => {
    supplier = await startConformanceSupplier();
    const dir = await mkdtemp(path.join(tmpdir(), 'conformance-'));
    const profileFile = path.join(dir, 'profile.json');
    await writeFile(profileFile, JSON.stringify(OWN_PROFILE));
    const out = path.join(dir, 'report');
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      // One request: CheckAvail passes, and the budget is spent before anything else is sent.
      const argv = ['--base-url', supplier.url, '--rate-pkg', 'pkg-standard-double', '--test-environment'];
      const code = await main([...argv, '--profile', profileFile, '--out', out, '--max-requests', '1'], {
        SUPPLIER_TOKEN: 'conformance-test-token',
      });
      const report = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8')) as ConformanceReport;
      expect(report.summary.blocker + report.summary.differs).toBe(0);
      expect(code).toBe(3);
      expect(report.notRun).toEqual(
        expect.arrayContaining(['book.answered', 'queryOrders.listed', 'cancel.confirmed']),
      );
      const junit = await readFile(path.join(out, 'junit.xml'), 'utf8');
      expect(junit).toContain(`errors="${report.notRun.length}"`);
      expect(junit).toMatch(/<error type="not-run" message="not run: the request budget \(1\) was spent"/);
      const md = await readFile(path.join(out, 'report.md'), 'utf8');
      expect(md).toMatch(/\*\*Unfinished, not a pass:\*\* the request budget \(1\) was spent\. \d+ clauses not run: /);
      expect(md).not.toContain('None needed beyond the defaults');
      expect(log.mock.calls.flat().join('\n')).toMatch(/Unfinished, not a pass/);
    } finally {
      log.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a run sized for a supplier that confirms at once', () => {
  test('an order confirmed at Book settles after three reads, without the --stable-after wait', async () => {
    supplier = await startConformanceSupplier({ pendingQueries: 0 });
    const started = Date.now();
    // A stable-after far beyond the settle timeout: only an order that settles without it can pass.
    const polling = { firstIntervalMs: 10, maxIntervalMs: 50, settleTimeoutMs: 5_000, stableAfterMs: 600_000 };
    const report = await runConformance(options(supplier.url, { polling }));
    expect(clause(report, 'queryOrders.listed')).toMatchObject({ result: 'pass' });
    expect(clause(report, 'queryOrders.listed').observed).toMatch(/statuses 6, 3 queries/);
    expect(clause(report, 'book.rejected').result).toBe('manual');
    expect(clause(report, 'cancel.confirmed').result).toBe('pass');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('--write-profile', () => {
  test('writes the proposed profile as a file the worker takes as SUPPLIER_PROFILE', async () => {
    supplier = await startConformanceSupplier();
    const dir = await mkdtemp(path.join(tmpdir(), 'conformance-'));
    const file = path.join(dir, 'supplier-profile.json');
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const argv = ['--base-url', supplier.url, '--rate-pkg', 'pkg-standard-double', '--test-environment'];
      await main(
        [...argv, '--out', path.join(dir, 'out'), '--write-profile', file],
        { SUPPLIER_TOKEN: 't' },
        {
          rate: 200,
          polling: { firstIntervalMs: 10, maxIntervalMs: 50, settleTimeoutMs: 1_000, stableAfterMs: 100 },
        },
      );
      const written = JSON.parse(await readFile(file, 'utf8')) as unknown;
      expect(written).toEqual(OWN_PROFILE);
      const profile = loadConfig({ SUPPLIER_TOKEN: 't', SUPPLIER_PROFILE: JSON.stringify(written) }).supplier.profile;
      expect(profile.orderStatus).toMatchObject({ confirming: 3, confirmed: 6, cancelled: 7 });
    } finally {
      log.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a report the supplier can read', () => {
  test("each clause's requests with their Request-Id, Session-Id and time, in the interface's words", async () => {
    supplier = await startConformanceSupplier({ ignoreWindows: true });
    const report = await runConformance(options(supplier.url));
    const md = renderMarkdown(report);
    expect(md).not.toMatch(/\bSupplier[A-Z]\w+|\bsweep\b/);
    expect(md).toContain('## Requests behind each clause');
    // Every id the supplier received is in the report, with the Session-Id it came with.
    const book = supplier.callsOf('book')[0]!;
    const requestId = String(book.headers['request-id']);
    const sessionId = String(book.headers['session-id']);
    expect(md).toMatch(
      new RegExp(`\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z Book .*\\(Request-Id ${requestId}, Session-Id ${sessionId}\\)`),
    );
    for (const call of supplier.calls) expect(md).toContain(String(call.headers['request-id']));
    const byBooking = clause(report, 'queryOrders.byBookingTime');
    expect(byBooking.requests).toHaveLength(2);
    expect(byBooking.requests[1]).toMatchObject({ at: expect.any(String), requestIds: [expect.any(String)] });
  });
});

describe('accepted differences', () => {
  test('a difference accepted in the file --accept reads no longer fails the next run; the others still do', async () => {
    supplier = await startConformanceSupplier();
    const dir = await mkdtemp(path.join(tmpdir(), 'conformance-'));
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    const run = (out: string, more: string[] = []) =>
      main(
        ['--base-url', supplier!.url, '--rate-pkg', 'pkg-standard-double', '--test-environment', '--out', out, ...more],
        { SUPPLIER_TOKEN: 't' },
        { rate: 200, polling: { firstIntervalMs: 10, maxIntervalMs: 50, settleTimeoutMs: 1_000, stableAfterMs: 100 } },
      );
    const reportIn = async (out: string) =>
      JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8')) as ConformanceReport;
    try {
      expect(await run(path.join(dir, 'first'))).toBe(1);
      const differences = (await reportIn(path.join(dir, 'first'))).clauses.filter((c) => c.result === 'differs');
      expect(differences.length).toBeGreaterThan(1);
      const [kept, ...accepted] = differences.map((c) => c.id);
      const acceptFile = path.join(dir, 'accepted.json');
      await writeFile(
        acceptFile,
        JSON.stringify(Object.fromEntries(accepted.map((id) => [id, 'tolerated: see ticket 12']))),
      );

      expect(await run(path.join(dir, 'second'), ['--accept', acceptFile])).toBe(1);
      const second = await reportIn(path.join(dir, 'second'));
      expect(second.accepted.sort()).toEqual([...accepted].sort());
      const junit = await readFile(path.join(dir, 'second', 'junit.xml'), 'utf8');
      expect(junit).toContain('failures="1"');
      expect(junit).toMatch(new RegExp(`name="${kept!.replace('.', '\\.')}[^"]*">\\s*<failure`));

      await writeFile(acceptFile, JSON.stringify(Object.fromEntries(differences.map((c) => [c.id, 'tolerated']))));
      expect(await run(path.join(dir, 'third'), ['--accept', acceptFile])).toBe(0);
      expect(await readFile(path.join(dir, 'third', 'report.md'), 'utf8')).toContain('**Accepted:** tolerated.');
    } finally {
      log.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('nulls are type-checked before they are dropped', () => {
  test('fields sent as null are named by the type clause', async () => {
    supplier = await startConformanceSupplier({ nulls: true });
    const report = await runConformance(options(supplier.url));
    const types = clause(report, 'fields.types');
    expect(types.result).toBe('differs');
    expect(types.observed).toMatch(/sent as null.*queryOrders data\.orders\[\]\.hotelConfirmNo/);
    expect(types.observed).toMatch(/queryOrders data\.orders\[\]\.statusRemark/);
    // The product reads them as absent: nothing else changes.
    expect(clause(report, 'queryOrders.listed').result).toBe('pass');
  });
});
