/**
 * What the answers read so far show, without another request: the type of every field the product reads, the
 * timestamps and their offsets, the order statuses seen (and the profile that names them), and the rate the
 * supplier let the kit send at. These run even after the run stopped early: they only read.
 */
import type { SupplierProfile } from '../../../runtime/config/supplier-profile';
import type { RoomRatePkg } from '../../../runtime/supplier/schemas';
import { parseTimestamp } from '../../../api/values/timestamp';
import type { Facts } from '../facts';
import type { RunContext, Scenario } from '../types';

export const fieldTypes: Scenario = {
  id: 'fields.types',
  title: 'The type of every field read (numbers as strings, strings as numbers, nulls)',
  offline: true,
  plan: () => ['(no request: reads every answer above)'],
  expected: () => "every field of the spec's type; decision fields (code, status, reference, price) exactly so",
  async run(ctx) {
    const drift = [...ctx.session.drift.counts().keys()].sort();
    const nulls = [...new Set(ctx.facts.rawOrders.flatMap((o) => nullsIn(o, 'queryOrders data.orders[]')))].sort();
    if (drift.length === 0 && nulls.length === 0)
      return { result: 'pass', observed: "every field read had the spec's type" };
    const parts = [
      ...(drift.length
        ? [
            `${drift.length} informational field(s) of another type or shape: ${drift.join('; ')}. Tolerated: read where ` +
              'the value is plain, else ignored; no decision reads them (a decision field of another type fails its clause instead)',
          ]
        : []),
      ...(nulls.length
        ? [
            `${nulls.length} field(s) sent as null, a type the spec does not give: ${nulls.join('; ')}. Tolerated: read as absent`,
          ]
        : []),
    ];
    return { result: 'differs', observed: parts.join('. ') };
  },
};

/** The paths of the null values in an answer as sent (array elements as `[]`). */
function nullsIn(value: unknown, path: string): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((v) => nullsIn(v, `${path}[]`));
  if (typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => nullsIn(v, `${path}.${k}`));
  return [];
}

/** Where a timestamp was read, and what the product does with it. */
interface Stamp {
  where: string;
  value: string;
  /** An instant (needs an offset) or a date (a stay's day). */
  kind: 'instant' | 'date';
}

const OFFSET = /(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$/;
/** How far an order's booking time may be from the kit's clock when it booked. */
const SKEW_MS = 5 * 60_000;

export const timestamps: Scenario = {
  id: 'fields.timestamps',
  title: 'Timestamps: RFC 3339 with an offset, on a clock near ours',
  offline: true,
  plan: () => ['(no request: reads every order and package above)'],
  expected: () =>
    'bookingTime, cancelTime, refundableUntil and cancelFees[].until as RFC 3339 date-times with an offset; checkIn and ' +
    `checkOut as dates; bookingTime within ${SKEW_MS / 60_000} min of the time of the Book`,
  async run(ctx) {
    const stamps = stampsOf(ctx.facts);
    if (stamps.length === 0) return { result: 'skipped', observed: 'no order or package was read' };
    const problems = [...new Set([...stamps.flatMap(problemOf), ...skew(ctx.facts)])];
    if (problems.length === 0)
      return { result: 'pass', observed: `${stamps.length} timestamps read, each with an offset` };
    return { result: 'differs', observed: problems.join('; ') };
  },
};

function stampsOf(facts: Facts): Stamp[] {
  const out: Stamp[] = [];
  const add = (where: string, value: string | undefined, kind: Stamp['kind']) => {
    if (value !== undefined) out.push({ where, value, kind });
  };
  const pkg = (where: string, p: RoomRatePkg) => {
    add(`${where}.refundableUntil`, p.refundableUntil, 'instant');
    for (const f of p.cancelFees ?? []) add(`${where}.cancelFees[].until`, f.until, 'instant');
    add(`${where}.checkIn`, p.checkIn, 'date');
    add(`${where}.checkOut`, p.checkOut, 'date');
  };
  for (const p of facts.packages) pkg('checkAvail roomRatePkg', p);
  for (const o of facts.orders) {
    add('order.bookingTime', o.bookingTime, 'instant');
    add('order.cancelTime', o.cancelTime, 'instant');
    add('order.checkIn', o.checkIn, 'date');
    add('order.checkOut', o.checkOut, 'date');
    for (const room of o.rooms ?? []) pkg('order.rooms[]', room);
  }
  return out;
}

function problemOf(s: Stamp): string[] {
  if (Number.isNaN(parseTimestamp(s.value)))
    return [`${s.where} "${s.value}" is not an RFC 3339 date or date-time: not read`];
  if (s.kind === 'instant' && !OFFSET.test(s.value.trim())) {
    return [
      `${s.where} "${s.value}" has no offset: read at the earliest instant it can mean (UTC+14), so a free cancellation ` +
        'may be treated as over up to 14 h early (safe, costly)',
    ];
  }
  return [];
}

/** bookingTime far from the kit's clock: a local time with the wrong offset, or a clock that is off. */
function skew(facts: Facts): string[] {
  const main = facts.main;
  const at = main?.booked?.bookingTime ?? main?.settled?.bookingTime;
  if (!main || !at) return [];
  const ms = parseTimestamp(at);
  if (Number.isNaN(ms)) return [];
  const off = ms - main.bookedAtMs;
  if (Math.abs(off) <= SKEW_MS) return [];
  const hours = (off / 3_600_000).toFixed(1);
  return [
    `bookingTime "${at}" is ${hours} h from the time of the Book: a local time under a wrong offset, or a clock that is off; ` +
      'the reconciliation sweep lists by booking time and would look in the wrong window',
  ];
}

export const orderStatuses: Scenario = {
  id: 'orders.statuses',
  title: 'Order statuses seen, and the profile that names them',
  offline: true,
  plan: () => ['(no request: reads the statuses above)'],
  expected: (p) => {
    const s = p.orderStatus;
    return `Confirming ${s.confirming} (or Unknown ${s.unknown}) until settled, Confirmed ${s.confirmed}, Cancelled ${s.cancelled}, Failed ${s.failed}`;
  },
  async run(ctx) {
    const inferred = inferStatuses(ctx);
    const seen = describeSeen(ctx.facts);
    if (Object.keys(inferred).length === 0)
      return { result: 'skipped', observed: `nothing settled to learn from (${seen})` };
    const { names, moved } = withoutCollisions(ctx.profile.orderStatus, inferred);
    const differ = Object.entries(names).filter(([name, v]) => ctx.profile.orderStatus[name as StatusName] !== v);
    if (differ.length === 0) return { result: 'pass', observed: seen };
    const named = differ.filter(([name]) => !moved.includes(name as StatusName)).map(([name, v]) => `${name} is ${v}`);
    const note = moved.length
      ? `; ${moved.join(', ')} not seen, and its number means another status here: set to a number no answer carries until the supplier names it`
      : '';
    return {
      result: 'differs',
      observed: `${seen}: ${named.join(', ')}${note}`,
      proposal: { orderStatus: Object.fromEntries(differ) },
    };
  },
};

type StatusName = keyof SupplierProfile['orderStatus'];

/**
 * The statuses inferred, and every other name kept unless its number now means an inferred status: then it gets a
 * negative number no supplier sends, so one number never means two things (a Confirmed order read as Confirming).
 */
function withoutCollisions(
  profile: SupplierProfile['orderStatus'],
  inferred: Partial<SupplierProfile['orderStatus']>,
): { names: SupplierProfile['orderStatus']; moved: StatusName[] } {
  const taken = new Set(Object.values(inferred));
  const names = { ...profile, ...inferred };
  const moved: StatusName[] = [];
  let unused = -1;
  for (const name of Object.keys(profile) as StatusName[]) {
    if (name in inferred || !taken.has(profile[name])) continue;
    names[name] = unused--;
    moved.push(name);
  }
  return { names, moved };
}

/** What each status must mean, from what the kit did: the main order settled confirmed, its Cancel cancelled it, the rejected Book failed. */
function inferStatuses(ctx: RunContext): Partial<SupplierProfile['orderStatus']> {
  const { facts, profile } = ctx;
  const s = profile.orderStatus;
  const out: Partial<SupplierProfile['orderStatus']> = {};
  const confirmed = facts.main?.settled?.status;
  if (confirmed !== undefined) out.confirmed = confirmed;
  const first = facts.main?.statuses[0];
  // The status before confirmation, once the order was seen to settle: the profile's Unknown or Confirming already
  // read as "wait"; any other is named. Without a settled order there is no "before".
  const pending = first !== undefined && confirmed !== undefined && first !== confirmed;
  if (pending && first !== s.unknown && first !== s.confirming) out.confirming = first;
  const cancelled = facts.cancel?.settled?.status;
  // A Cancel the hotel refused ends in CancelFailed, which names nothing about Cancelled.
  if (cancelled !== undefined && cancelled !== confirmed && cancelled !== s.cancelFailed) out.cancelled = cancelled;
  if (facts.rejectedStatus !== undefined) out.failed = facts.rejectedStatus;
  return out;
}

function describeSeen(facts: Facts): string {
  const parts = [
    facts.main ? `main order ${facts.main.statuses.join(' → ') || '(none)'}` : undefined,
    facts.cancel ? `after Cancel ${facts.cancel.statuses.join(' → ') || '(none)'}` : undefined,
    facts.rejectedStatus !== undefined ? `rejected Book ${facts.rejectedStatus}` : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : 'no statuses';
}

export const rateLimits: Scenario = {
  id: 'limits.rate',
  title: "Rate limits: none met at the kit's gentle rate",
  offline: true,
  plan: () => ['(no request: reads how the run went)'],
  expected: (p) => `no 429 at the kit's rate, far below the profile's limits (overall ${p.rateLimits.overall}/s)`,
  async run(ctx) {
    const stopped = ctx.session.stopped();
    const sent = ctx.session.sent();
    if (stopped && /rate limited/.test(stopped)) {
      return {
        result: 'differs',
        observed: `${stopped} after ${sent} requests; ask the supplier for the test environment's limits and run again with a lower --rate`,
      };
    }
    return { result: 'pass', observed: `${sent} requests, none rate limited` };
  },
};
