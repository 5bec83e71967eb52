/**
 * QueryOrders: how long a new order takes to be listed and the statuses it goes through, the order found by each
 * key (the product finds a booking's order by the caller's reference; the reconciliation sweep lists by booking,
 * check-in and cancellation windows), an unknown reference, and how many orders one answer lists.
 */
import type { HotelOrder, QueryOrdersRequest } from '../../../runtime/supplier/schemas';
import { parseTimestamp } from '../../../api/values/timestamp';
import { followOrder, sleep, type Followed, type MainOrder } from '../facts';
import { describeError } from '../session';
import type { Outcome, RunContext, Scenario } from '../types';
import { attempt, newReference } from './common';

/** The product re-sends a Book whose order it has not found for this long: an order listed later may be booked twice. */
const RESEND_AFTER_MS = 10 * 60_000;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

export const queryOrdersListed: Scenario = {
  id: 'queryOrders.listed',
  title: 'QueryOrders by customer reference: how long a new order takes to be listed, and until it settles',
  plan: () => [
    'QueryOrders by the main reference at once, then after 2 s, 4 s, … until the order settles (settle timeout)',
    'QueryOrders by the main reference once more, read as sent (for the nulls in it)',
  ],
  expected: (p) =>
    `listed by its reference (one order, never two) well within ${RESEND_AFTER_MS / MINUTE} min, settling in status ` +
    `${p.orderStatus.confirmed} (Confirmed)`,
  async run(ctx) {
    const main = ctx.facts.main;
    if (!main) return { result: 'skipped', observed: 'no main order' };
    const followed = await followOrder(ctx, main.customerReferenceNo, { status: main.booked?.status, mayStay: true });
    const ended = followed.settled ? endedBadly(ctx, followed.order!.status) : undefined;
    keep(main, followed, !ended);
    // Once, as sent: the nulls the product's reading drops before its type check (fields.types names them).
    if (followed.order)
      ctx.facts.rawOrders.push(...(await ctx.session.ordersAsSent(main.customerReferenceNo)).map((o) => o.raw));
    return judgeListing(ctx, main, followed, ended);
  },
};

/** What the following taught about the main order, for the clauses after this one. */
function keep(main: MainOrder, followed: Followed, confirmed: boolean): void {
  // From Book's answer, not from the first query: the delay a booking whose answer was lost waits through.
  main.listedAfterMs = followed.listedAtMs !== undefined ? followed.listedAtMs - main.bookedAtMs : undefined;
  for (const s of followed.statuses) if (main.statuses[main.statuses.length - 1] !== s) main.statuses.push(s);
  if (followed.settled && confirmed) main.settled = followed.order;
}

function judgeListing(ctx: RunContext, main: MainOrder, followed: Followed, ended: string | undefined): Outcome {
  const failed = followed.failures.length
    ? `; ${followed.failures.length} failed and asked again (${followed.failures[0]})`
    : '';
  const seen = `statuses ${main.statuses.join(' → ') || '(none)'}, ${followed.queries} queries${failed}`;
  const timeout = `${ctx.polling.settleTimeoutMs / 1000} s`;
  if (followed.mostUnderReference > 1) {
    const n = followed.mostUnderReference;
    return {
      result: 'blocker',
      observed: `${n} orders listed under one reference (${seen}): Book is not idempotent by reference`,
    };
  }
  if (followed.unreadable) {
    const u = followed.unreadable;
    return {
      result: 'blocker',
      observed:
        `listed under its reference, status as sent ${u.statusAsSent ?? '(not read)'}, but unreadable ` +
        `(${u.issues.slice(0, 3).join('; ')}): an order exists that the product cannot read, so it can neither confirm ` +
        'the booking nor know that nothing was made; no profile changes how it is read. The order is cleaned up or ' +
        'flagged under "Orders made"',
    };
  }
  if (main.listedAfterMs === undefined) {
    return main.booked
      ? {
          result: 'blocker',
          observed: `never listed within ${timeout} (${seen}): a booking whose Book answer is lost could never be found`,
        }
      : {
          result: 'differs',
          observed: `Book answered an error and no order was listed within ${timeout} (${seen}): nothing made, as the product concludes before it sends Book again`,
        };
  }
  const listed = `listed after ${main.listedAfterMs} ms`;
  if (ended) {
    return {
      result: 'differs',
      observed: `${listed}; ${seen}: it ended ${ended}, not confirmed; choose a rate package that books (the clauses needing a confirmed order are skipped)`,
    };
  }
  if (!followed.settled) {
    return {
      result: 'differs',
      observed: `${listed}, not settled within the settle timeout (${seen}); run again with a longer --settle-timeout`,
    };
  }
  if (main.listedAfterMs >= RESEND_AFTER_MS) {
    return {
      result: 'differs',
      observed: `${listed}: after the product's ${RESEND_AFTER_MS / MINUTE} min re-send window (${seen}); safe only because Book is idempotent`,
    };
  }
  if (followed.failures.length)
    return { result: 'differs', observed: `${listed}; ${seen}: tolerated, the product asks again` };
  return { result: 'pass', observed: `${listed}; ${seen}` };
}

export const queryOrdersConsistent: Scenario = {
  id: 'queryOrders.consistent',
  title: 'QueryOrders: an order read settled stays listed so',
  plan: () => [
    'QueryOrders by the main reference again, until it lists the order as it settled (when the listing lags)',
  ],
  expected: () => 'the order listed in the status it settled in, on every later read',
  async run(ctx) {
    const order = ctx.facts.main?.settled;
    if (!order) return { result: 'skipped', observed: 'no settled main order' };
    const lag = await untilListedAs(ctx, order);
    const settled = `status ${order.status}`;
    if (lag.shown.length === 0) return { result: 'pass', observed: `listed again in ${settled}` };
    const shown = lag.shown.join(', then ');
    if (lag.caughtUpAfterMs === undefined) {
      return {
        result: 'differs',
        observed: `after it was read in ${settled}, the listing showed ${shown}, and not ${settled} again within the settle timeout`,
      };
    }
    return {
      result: 'differs',
      observed:
        `after it was read in ${settled}, the listing showed ${shown} for ${lag.caughtUpAfterMs} ms: a listing that lags ` +
        'behind a read already made; the product never books again over an order it has seen, and a later read (an ' +
        'order run, the sweep) may meet the older state',
    };
  },
};

/** Reads the order by reference until it is listed as it settled; what each read in between showed. */
async function untilListedAs(
  ctx: RunContext,
  order: HotelOrder,
): Promise<{ shown: string[]; caughtUpAfterMs?: number }> {
  const started = Date.now();
  const shown: string[] = [];
  for (let wait = 0; Date.now() - started + wait <= ctx.polling.settleTimeoutMs; wait = nextWait(wait, ctx)) {
    if (wait > 0) await sleep(wait);
    const ref = order.customerReferenceNo;
    const got = await attempt(() =>
      ctx.session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref }),
    );
    const found = got.ok ? got.value.orders.find((o) => o.customerReferenceNo === ref) : undefined;
    if (found?.status === order.status)
      return { shown, ...(shown.length ? { caughtUpAfterMs: Date.now() - started } : {}) };
    const now = !got.ok ? describeError(got.error) : found ? `status ${found.status}` : 'not listed';
    if (shown[shown.length - 1] !== now) shown.push(now);
  }
  return { shown };
}

const nextWait = (wait: number, ctx: RunContext) =>
  wait === 0 ? ctx.polling.firstIntervalMs : Math.min(wait * 2, ctx.polling.maxIntervalMs);

/** The name the profile gives a final status other than Confirmed, if it is one: the main order did not book. */
function endedBadly(ctx: RunContext, status: number): string | undefined {
  const s = ctx.profile.orderStatus;
  const names: Array<[string, number]> = [
    ['Failed', s.failed],
    ['Cancelled', s.cancelled],
    ['CancelFailed', s.cancelFailed],
  ];
  return names.find(([, v]) => v === status)?.[0];
}

/** A clause finding the main order with one filter. */
function byKey(spec: {
  id: string;
  title: string;
  key: string;
  /** Whether the product reads orders this way: a key it never uses is a difference it tolerates. */
  used: 'sweep' | false;
  filter: (order: HotelOrder, ctx: RunContext) => QueryOrdersRequest | string;
  /**
   * Time windows: the same window moved far from the order. An answer to it that lists the order shows the window
   * is not applied, whatever the first answer listed.
   */
  away?: (filter: QueryOrdersRequest) => QueryOrdersRequest;
  after?: 'cancel';
}): Scenario {
  return {
    id: spec.id,
    title: spec.title,
    plan: () => [
      `QueryOrders by ${spec.key} of the main order${spec.after === 'cancel' ? ', after its Cancel' : ''}`,
      ...(spec.away ? ['QueryOrders by the same window a year earlier (the order must not be listed)'] : []),
    ],
    expected: () =>
      spec.away ? 'the main order listed, and not listed for a window a year earlier' : 'the main order listed',
    async run(ctx) {
      const order = spec.after === 'cancel' ? ctx.facts.cancel?.settled : ctx.facts.main?.settled;
      if (!order)
        return { result: 'skipped', observed: `no ${spec.after === 'cancel' ? 'cancelled' : 'settled'} main order` };
      const filter = spec.filter(order, ctx);
      if (typeof filter === 'string') return { result: 'skipped', observed: filter };
      const got = await attempt(() => ctx.session.supplier.queryOrders(filter, { traceId: order.customerReferenceNo }));
      if (!got.ok) return notListed(spec.used, describeError(got.error));
      const listed = got.value.orders.length + got.value.unreadable.length;
      const found = got.value.orders.some((o) => o.customerReferenceNo === order.customerReferenceNo);
      if (!found) return notListed(spec.used, `not listed (${got.value.orders.length} other orders in the answer)`);
      if (!spec.away) {
        pageSeen(ctx, listed);
        return { result: 'pass', observed: `listed (${listed} orders in the answer)` };
      }
      const away = spec.away(filter);
      const again = await attempt(() => ctx.session.supplier.queryOrders(away, { traceId: order.customerReferenceNo }));
      if (!again.ok)
        return notListed(spec.used, `listed, but a window a year earlier answered ${describeError(again.error)}`);
      const alsoThere = again.value.orders.some((o) => o.customerReferenceNo === order.customerReferenceNo);
      if (!alsoThere) {
        // Only an answer whose window was shown to be applied says anything about the supplier's page.
        pageSeen(ctx, listed);
        return {
          result: 'pass',
          observed: `listed (${listed} orders in the answer), and not for a window a year earlier`,
        };
      }
      ctx.facts.windowsIgnored.push(spec.key.split(' ')[0]!);
      return windowIgnored(spec.used, listed, again.value.orders.length + again.value.unreadable.length);
    },
  };
}

/** The order listed for a window that excludes it: the supplier does not apply that window. */
function windowIgnored(used: 'sweep' | false, listed: number, listedAway: number): Outcome {
  const what =
    `listed for its window (${listed} orders in the answer) and again for a window a year earlier ` +
    `(${listedAway} orders): the window is not applied`;
  if (used === 'sweep') {
    return {
      result: 'blocker',
      observed: `${what}; the reconciliation sweep narrows its listings by this window and would never get a page it can finish; no profile changes that`,
    };
  }
  return { result: 'differs', observed: `${what}; the product never lists orders this way (tolerated)` };
}

function notListed(used: 'sweep' | false, what: string): Outcome {
  if (used === 'sweep') {
    return {
      result: 'blocker',
      observed: `${what}: the reconciliation sweep lists orders this way and would not see it; no profile changes that`,
    };
  }
  return { result: 'differs', observed: `${what}: the product never lists orders this way (tolerated)` };
}

/** The largest number of orders one answer listed, for the page-size clause. */
function pageSeen(ctx: RunContext, n: number): void {
  ctx.facts.largestListing = Math.max(ctx.facts.largestListing ?? 0, n);
}

const iso = (ms: number) => new Date(ms).toISOString();
const around = (ms: number, before: number, after: number) => ({ start: iso(ms - before), end: iso(ms + after) });
const YEAR = 365 * DAY;

/** The request's one time window, moved a year earlier. */
function yearEarlier(filter: QueryOrdersRequest): QueryOrdersRequest {
  const out: Record<string, unknown> = { ...filter };
  for (const [key, value] of Object.entries(filter)) {
    if (key.endsWith('TimeWindow') && value && typeof value === 'object') {
      const w = value as { start: string; end: string };
      out[key] = { start: iso(Date.parse(w.start) - YEAR), end: iso(Date.parse(w.end) - YEAR) };
    }
  }
  return out as QueryOrdersRequest;
}

export const queryOrdersByPlatformReference = byKey({
  id: 'queryOrders.byPlatformReference',
  title: 'QueryOrders by platform reference',
  key: 'platformReferenceNos',
  used: false,
  filter: (o) =>
    o.platformReferenceNo ? { platformReferenceNos: [o.platformReferenceNo] } : 'the order has no platformReferenceNo',
});

export const queryOrdersBySupplierReference = byKey({
  id: 'queryOrders.bySupplierReference',
  title: 'QueryOrders by supplier reference',
  key: 'supplierReferenceNos',
  used: false,
  filter: (o) =>
    o.supplierReferenceNo ? { supplierReferenceNos: [o.supplierReferenceNo] } : 'the order has no supplierReferenceNo',
});

export const queryOrdersByBookingTime = byKey({
  id: 'queryOrders.byBookingTime',
  title: 'QueryOrders by booking time window (the sweep finds orphans so)',
  key: 'bookingTimeWindow (10 min either side of the Book)',
  used: 'sweep',
  away: yearEarlier,
  filter: (_o, ctx) => ({ bookingTimeWindow: around(ctx.facts.main!.bookedAtMs, 10 * MINUTE, 10 * MINUTE) }),
});

export const queryOrdersByCheckInTime = byKey({
  id: 'queryOrders.byCheckInTime',
  title: 'QueryOrders by check-in window (the sweep checks coming stays so)',
  key: "checkInTimeWindow (a day either side of the order's check-in)",
  used: 'sweep',
  away: yearEarlier,
  filter: (o) => {
    const at = o.checkIn ? parseTimestamp(o.checkIn) : NaN;
    return Number.isNaN(at) ? 'the order has no readable checkIn' : { checkInTimeWindow: around(at, DAY, DAY) };
  },
});

export const queryOrdersByStatus = byKey({
  id: 'queryOrders.byStatus',
  title: 'QueryOrders by status (with the reference)',
  key: 'statusList (its status) and customerReferenceNos',
  used: false,
  filter: (o) => ({ customerReferenceNos: [o.customerReferenceNo], statusList: [o.status] }),
});

export const queryOrdersByCheckOutTime = byKey({
  id: 'queryOrders.byCheckOutTime',
  title: 'QueryOrders by check-out window',
  key: "checkOutTimeWindow (a day either side of the order's check-out)",
  used: false,
  away: yearEarlier,
  filter: (o) => {
    const at = o.checkOut ? parseTimestamp(o.checkOut) : NaN;
    return Number.isNaN(at) ? 'the order has no readable checkOut' : { checkOutTimeWindow: around(at, DAY, DAY) };
  },
});

export const queryOrdersByFreeCancelTime = byKey({
  id: 'queryOrders.byFreeCancelTime',
  title: 'QueryOrders by free-cancellation window',
  key: "freeCancelTimeWindow (a day either side of the room's refundableUntil)",
  used: false,
  away: yearEarlier,
  filter: (o) => {
    const until = o.rooms?.[0]?.refundableUntil;
    const at = until ? parseTimestamp(until) : NaN;
    return Number.isNaN(at) ? 'the order states no refundableUntil' : { freeCancelTimeWindow: around(at, DAY, DAY) };
  },
});

export const queryOrdersByCancelledTime = byKey({
  id: 'queryOrders.byCancelledTime',
  title: 'QueryOrders by cancellation window (the sweep finds supplier cancellations so)',
  key: 'cancelledTimeWindow (10 min either side of now)',
  used: 'sweep',
  after: 'cancel',
  away: yearEarlier,
  filter: () => ({ cancelledTimeWindow: around(Date.now(), 10 * MINUTE, 10 * MINUTE) }),
});

export const queryOrdersUnknownReference: Scenario = {
  id: 'queryOrders.unknownReference',
  title: 'QueryOrders for a reference never booked',
  plan: () => ['QueryOrders by a new reference nobody booked'],
  expected: (p) => `code ${p.codes.success} and no orders (how the product learns that a lost Book made nothing)`,
  async run(ctx) {
    const ref = newReference();
    const got = await attempt(() =>
      ctx.session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref }),
    );
    if (!got.ok) {
      return {
        result: 'blocker',
        observed: `${describeError(got.error)}: the product asks again until its deadline instead of reading "none", so a lost Book is never re-sent; no profile maps this answer to an empty list`,
      };
    }
    const { orders, unreadable } = got.value;
    if (orders.length === 0 && unreadable.length === 0) return { result: 'pass', observed: 'code success, no orders' };
    const others = orders.filter((o) => o.customerReferenceNo !== ref).length;
    return {
      result: 'differs',
      observed: `${orders.length + unreadable.length} orders listed, ${others} under other references: the filter is ignored; the product keeps only its reference's orders (tolerated)`,
    };
  },
};

export const queryOrdersPageSize: Scenario = {
  id: 'queryOrders.pageSize',
  title: 'QueryOrders: how many orders one answer lists',
  plan: () => ['QueryOrders by booking time over the last 30 days'],
  expected: (p) =>
    `at most ${p.queryOrders.pageSize - 1} orders in an answer, or code ${p.codes.pageSizeExceeded} (page size exceeded): ` +
    'more means the profile undercounts the page (safe, but every larger listing is split)',
  async run(ctx) {
    const window = { start: iso(Date.now() - 30 * DAY), end: iso(Date.now() + 10 * MINUTE) };
    const got = await attempt(() => ctx.session.supplier.queryOrders({ bookingTimeWindow: window }, {}));
    if (!got.ok) {
      if (got.error.details.code === ctx.profile.codes.pageSizeExceeded) {
        return {
          result: 'pass',
          observed: `${describeError(got.error)}: refused as the profile expects; the sweep lists smaller windows`,
        };
      }
      return { result: 'differs', observed: describeError(got.error) };
    }
    const listed = got.value.orders.length + got.value.unreadable.length;
    const outside = got.value.orders.filter((o) => outsideWindow(o.bookingTime, window)).length;
    if (ctx.facts.windowsIgnored.includes('bookingTimeWindow') || outside > 0) {
      const why =
        outside > 0
          ? `${outside} of the ${listed} orders listed were booked outside the window asked`
          : 'queryOrders.byBookingTime showed the booking window is not applied';
      return {
        result: 'differs',
        observed: `${why}: the answer is not filtered, so its length says nothing of the page size and none is proposed; ask the supplier for its page size`,
      };
    }
    pageSeen(ctx, listed);
    return judgePage(ctx, ctx.facts.largestListing ?? 0);
  },
};

/** A booking time read with its offset and more than a day outside the window (a day covers a local time without one). */
function outsideWindow(bookingTime: string | undefined, window: { start: string; end: string }): boolean {
  const at = bookingTime ? parseTimestamp(bookingTime) : NaN;
  if (Number.isNaN(at)) return false;
  return at < Date.parse(window.start) - DAY || at > Date.parse(window.end) + DAY;
}

function judgePage(ctx: RunContext, largest: number): Outcome {
  const page = ctx.profile.queryOrders.pageSize;
  const statement = "the supplier's stated page size is what the profile should carry (docs/supplier-onboarding.md)";
  if (largest < page)
    return {
      result: 'pass',
      observed: `${largest} orders in the largest answer, below the profile's page (${page}); ${statement}`,
    };
  if (largest === page)
    return {
      result: 'pass',
      observed: `${largest} orders, exactly the profile's page: it may have been cut there; ${statement}`,
    };
  // One answer listed more than the profile's page: the supplier's page is at least that.
  return {
    result: 'differs',
    observed: `${largest} orders in one answer, more than the profile's page (${page})`,
    proposal: { queryOrders: { pageSize: largest } },
  };
}
