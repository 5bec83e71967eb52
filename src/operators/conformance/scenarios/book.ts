/**
 * Book: the order answered for a new reference, the same reference sent again (the spec's idempotency rule, on
 * which "never booked twice" rests), and the codes of a request refused and of one rejected.
 */
import { classifyBookFailure } from '../../../runtime/rules/book';
import type { SupplierError } from '../../../runtime/supplier/errors';
import type { SupplierProfile } from '../../../runtime/config/supplier-profile';
import type { BookRequest, HotelOrder } from '../../../runtime/supplier/schemas';
import { followOrder, sleep } from '../facts';
import { describeError } from '../session';
import type { Outcome, RunContext, Scenario } from '../types';
import { attempt, bookRequest, newReference, unknownCodeOn200 } from './common';

const mainPackage = (ctx: Pick<RunContext, 'ratePkgIds'>) => ctx.ratePkgIds[0]!;
/** The rejected Book uses the second package when one is given, so the main package's inventory is not touched twice. */
const rejectPackage = (ctx: Pick<RunContext, 'ratePkgIds'>) => ctx.ratePkgIds[1] ?? ctx.ratePkgIds[0]!;

export const bookAnswered: Scenario = {
  id: 'book.answered',
  title: 'Book: a new reference is answered with its order',
  plan: (ctx) => [`Book ${mainPackage(ctx)} with a new reference (the main order: followed, then cancelled)`],
  expected: (p) =>
    `code ${p.codes.success} with data.hotelOrder under the reference sent, its status and supplierReferenceNo ` +
    `(Cancel sends it back)`,
  async run(ctx) {
    const ref = newReference();
    ctx.facts.references.push(ref);
    const got = await attempt(() =>
      ctx.session.supplier.book(bookRequest(ref, mainPackage(ctx)), ctx.session.context()),
    );
    const main = { customerReferenceNo: ref, ratePkgId: mainPackage(ctx), bookedAtMs: Date.now(), statuses: [] };
    if (!got.ok) {
      // An answer the product reads as "no order" leaves nothing to follow; any other may have made one.
      if (classifyBookFailure(got.error, ctx.profile).kind === 'ambiguous') ctx.facts.main = main;
      return bookError(got.error, ctx.profile);
    }
    ctx.facts.main = main;
    const order = got.value;
    ctx.facts.main.booked = order;
    ctx.facts.main.statuses.push(order.status);
    ctx.facts.orders.push(order);
    return judgeBooked(order, ref);
  },
};

/** Book answered an error for a bookable package: the order may still exist, and the listing clause looks. */
function bookError(error: SupplierError, profile: SupplierProfile): Outcome {
  const reading = classifyBookFailure(error, profile).kind;
  // A body that is not JSON at all is a broken answer (looked up like a timeout); a decision field unreadable is not.
  const notJson = error.details.issues?.every((issue) => issue.startsWith('(body)')) ?? true;
  if (error.type === 'SupplierInvalidResponse' && !notJson) {
    return {
      result: 'blocker',
      observed: `${describeError(error)}: a field an outcome is decided on cannot be read, and no profile changes how it is read`,
    };
  }
  const code = unknownCodeOn200(error);
  const why =
    reading === 'ambiguous'
      ? 'the product reads it as "may have made an order" and looks the order up (see queryOrders.listed)'
      : `the product reads it as ${reading}: no order, and the clauses that follow the main order are skipped`;
  return {
    result: 'differs',
    observed: `${describeError(error)}${code !== undefined ? ', a code the profile does not list' : ''}; ${why}`,
  };
}

function judgeBooked(order: HotelOrder, ref: string): Outcome {
  const refs = `platformReferenceNo ${order.platformReferenceNo ?? '(none)'}, supplierReferenceNo ${order.supplierReferenceNo ?? '(none)'}`;
  if (order.customerReferenceNo !== ref) {
    return {
      result: 'blocker',
      observed: `the order came under reference ${order.customerReferenceNo}, not the one sent: the product finds orders by the caller's reference`,
    };
  }
  if (!order.supplierReferenceNo) {
    return {
      result: 'differs',
      observed: `status ${order.status}, ${refs}: without a supplier reference Cancel cannot be sent`,
    };
  }
  return { result: 'pass', observed: `status ${order.status}, ${refs}` };
}

export const bookIdempotent: Scenario = {
  id: 'book.idempotent',
  title: 'Book: the same reference sent again returns the same order',
  plan: (ctx) => [`Book ${mainPackage(ctx)} again with the main order's reference`],
  expected: () => 'the existing order (the same platform and supplier references), never a second one',
  async run(ctx) {
    const main = ctx.facts.main;
    if (!main) return { result: 'skipped', observed: 'no main order (book.answered did not run)' };
    const request = bookRequest(main.customerReferenceNo, main.ratePkgId);
    const got = await attempt(() => ctx.session.supplier.book(request, ctx.session.context()));
    if (!got.ok) {
      return {
        result: 'differs',
        observed:
          `the repeat answered ${describeError(got.error)}; whether a second order was made shows in queryOrders.listed. ` +
          'Tolerated when none was: the product re-sends Book only while no order was seen, and a refused re-send decides nothing',
      };
    }
    ctx.facts.orders.push(got.value);
    return judgeRepeat(main.booked, got.value);
  },
};

function judgeRepeat(first: HotelOrder | undefined, again: HotelOrder): Outcome {
  const same = (a?: string, b?: string) => a === undefined || b === undefined || a === b;
  const refs = (o: HotelOrder) => `${o.platformReferenceNo ?? '?'} / ${o.supplierReferenceNo ?? '?'}`;
  if (!first)
    return { result: 'pass', observed: `answered the order ${refs(again)} (the first Book answered an error)` };
  if (
    same(first.platformReferenceNo, again.platformReferenceNo) &&
    same(first.supplierReferenceNo, again.supplierReferenceNo)
  ) {
    return { result: 'pass', observed: `the same order ${refs(again)}, status ${again.status}` };
  }
  return {
    result: 'blocker',
    observed: `a second order ${refs(again)} beside ${refs(first)}: Book is not idempotent by reference, and "never booked twice" rests on it`,
  };
}

export const bookRefused: Scenario = {
  id: 'book.refused',
  title: 'Book: the answer to a request the supplier must refuse, and that it made nothing',
  plan: (ctx) => [
    `Book ${mainPackage(ctx)} with a new reference and no holder or guests (required by the spec)`,
    'QueryOrders by that reference, once the listing delay measured has passed',
  ],
  expected: (p) =>
    `HTTP ${p.book.surelyNotMadeStatuses.join('/')} or code ${p.book.surelyNotMadeCodes.map((n) => `${n} (${p.codes[n]})`).join(', ')}` +
    ', and no order under the reference',
  async run(ctx) {
    const ref = newReference();
    const invalid = { customerReferenceNo: ref, ratePkgId: mainPackage(ctx) } as unknown as BookRequest;
    const got = await attempt(() => ctx.session.supplier.book(invalid, ctx.session.context()));
    const made = await orderMade(ctx, ref);
    if (got.ok || made) ctx.facts.references.push(ref);
    if (got.ok)
      return {
        result: 'differs',
        observed: `accepted (order in status ${got.value.status}): the product never sends such a request`,
      };
    return judgeRefusal(ctx.profile, got.error, made);
  },
};

/** Whether an order is listed under `ref`, asked once the main order's listing delay has passed. */
async function orderMade(ctx: RunContext, ref: string): Promise<boolean> {
  const delay = Math.min(ctx.facts.main?.listedAfterMs ?? 0, ctx.polling.settleTimeoutMs);
  if (delay > 0) await sleep(delay);
  const listing = await ctx.session.supplier.queryOrders({ customerReferenceNos: [ref] }, { traceId: ref });
  return listing.orders.some((o) => o.customerReferenceNo === ref) || listing.unreadable.length > 0;
}

function judgeRefusal(profile: SupplierProfile, error: SupplierError, made: boolean): Outcome {
  const reading = classifyBookFailure(error, profile).kind;
  const { httpStatus, code } = error.details;
  const answer = describeError(error);
  if (reading === 'rejected' && !made) return { result: 'pass', observed: `${answer}, no order` };
  if (reading === 'rejected' && made) {
    // The product would end a booking `failed` on this answer while an order stands: the profile must stop believing it.
    return {
      result: 'differs',
      observed: `${answer} and yet an order was made: the product would end a booking failed beside a live order`,
      proposal: notBelieved(profile, httpStatus, code),
    };
  }
  if (made)
    return {
      result: 'differs',
      observed: `${answer} and an order was made: the product looks such answers up (tolerated)`,
    };
  const unknown = unknownCodeOn200(error);
  if (unknown !== undefined) {
    return {
      result: 'differs',
      observed: `HTTP 200 with code ${unknown} and no order: the product looks the order up before it gives up (slower, safe)`,
      proposal: { codes: { badRequest: unknown } },
    };
  }
  return {
    result: 'differs',
    observed: `${answer}, no order: the product reads it as "may have made an order" and looks it up (slower, safe)`,
  };
}

/** The book clause without the status or code that proved wrong. */
function notBelieved(profile: SupplierProfile, httpStatus: number | undefined, code: number | undefined) {
  const b = profile.book;
  if (httpStatus !== undefined && b.surelyNotMadeStatuses.includes(httpStatus)) {
    return { book: { surelyNotMadeStatuses: b.surelyNotMadeStatuses.filter((s) => s !== httpStatus) } };
  }
  return { book: { surelyNotMadeCodes: b.surelyNotMadeCodes.filter((n) => profile.codes[n] !== code) } };
}

export const bookRejected: Scenario = {
  id: 'book.rejected',
  title: 'Book: the answer when the supplier rejects a booking (sold out at Book)',
  plan: (ctx) => [
    `Book ${rejectPackage(ctx)} with a new reference and Test: scenario=soldOut`,
    'QueryOrders by that reference until it settles',
  ],
  expected: (p) =>
    `an order that ends in status ${p.orderStatus.failed} (Failed), or a code the profile lists as surely not made ` +
    `(${p.book.surelyNotMadeCodes.join(', ')})`,
  async run(ctx) {
    const ref = newReference();
    const got = await attempt(() =>
      ctx.session.supplier.book(bookRequest(ref, rejectPackage(ctx)), ctx.session.context('scenario=soldOut')),
    );
    if (!got.ok) return judgeRejectedError(ctx, got.error, ref);
    ctx.facts.references.push(ref);
    ctx.facts.orders.push(got.value);
    const followed = await followOrder(ctx, ref, { status: got.value.status, mayStay: true });
    const status = followed.order?.status ?? got.value.status;
    if (!followed.settled) {
      // An order still on its way says nothing yet about how a rejection ends.
      return {
        result: 'differs',
        observed: `an order was made (status ${status}) and did not settle within the settle timeout`,
      };
    }
    return judgeRejectedOrder(ctx, status);
  },
};

function judgeRejectedError(ctx: RunContext, error: SupplierError, ref: string): Outcome {
  const reading = classifyBookFailure(error, ctx.profile).kind;
  if (reading === 'rejected') return { result: 'pass', observed: `${describeError(error)}: read as surely not made` };
  ctx.facts.references.push(ref);
  return {
    result: 'differs',
    observed: `${describeError(error)}: the product reads it as "may have made an order" and looks it up until its deadline (safe; slower to tell the caller)`,
  };
}

function judgeRejectedOrder(ctx: RunContext, status: number): Outcome {
  const confirmed = ctx.facts.main?.settled?.status ?? ctx.profile.orderStatus.confirmed;
  if (status === confirmed) {
    return {
      result: 'manual',
      observed: `the order was confirmed (status ${status}): the test environment does not take Test: scenario=soldOut. Its reference is listed for clean-up`,
      steps: [
        'Ask the supplier (or a test hotel) to reject one booking, or for the test flag that does.',
        'Book it; note the Book answer (HTTP status, code) and the status the order ends in.',
        'The profile expects an order in orderStatus.failed, or a code in book.surelyNotMadeCodes.',
      ],
    };
  }
  ctx.facts.rejectedStatus = status;
  if (status === ctx.profile.orderStatus.failed)
    return { result: 'pass', observed: `the order ended in status ${status}` };
  return { result: 'differs', observed: `the order ended in status ${status} (see orders.statuses)` };
}
