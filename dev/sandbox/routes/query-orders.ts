/**
 * QueryOrders: the orders a filter names, as far as the (possibly lagging) listing shows them, or the fault the
 * control API queued for the next requests.
 */
import type { ServerResponse } from 'node:http';
import { QueryOrdersRequest, type TimeWindow } from '../../../src/runtime/supplier/schemas';
import { parseTimestamp } from '../../../src/api/values/timestamp';
import { announce } from '../callbacks';
import { envelope, faultAnswer, hang, HttpAnswer, type Handled } from '../http';
import type { CallInProgress, OperationHandler, SandboxState } from '../state';
import type { StoredOrder } from '../store';

/** Answers a QueryOrders: a queued fault first; else each order named counts the query, the listed ones answer. */
export const queryOrders: OperationHandler = async (state, req, res, call) => {
  const { codes, store } = state;
  const principal = state.principalFor(req, 'query');
  const filter = await state.bodyOf(req, QueryOrdersRequest);
  call.customerReferenceNos = filter.customerReferenceNos;
  state.limit(principal, 'queryOrders');
  if (state.queryFault) return queuedFault(state, res, call);
  const named = store.all().filter((o) => matchesFilter(state, o, filter));
  for (const o of named) o.queriesSeen++;
  const listed = named.filter((o) => store.listed(o));
  for (const o of listed) if (o.callbackUrl) announce(state, o);
  // A listing lagging behind a Confirmed it already answered: not listed, or listed Confirming (Test lagAfterConfirmedMs).
  const shown = listed.map((o) => ({ o, lag: store.listingNow(o) }));
  const lagged = shown.filter((x) => x.lag !== 'as-is').map((x) => x.o.customerReferenceNo);
  if (lagged.length > 0) call.lagged = lagged;
  const pending = state.profile.orderStatus.confirming;
  const orders = shown
    .filter(({ o, lag }) => {
      if (lag === 'unlisted') return false;
      const view = store.toHotelOrder(o, lag === 'pending' ? pending : undefined);
      return (
        (!filter.statusList || filter.statusList.includes(view.status)) &&
        (!filter.cancelledTimeWindow || within(view.cancelTime, filter.cancelledTimeWindow))
      );
    })
    .map(({ o, lag }) => state.present(o, lag === 'pending' ? pending : undefined));
  return new HttpAnswer(200, envelope(codes.success, 'Success', { orders }));
};

/** The fault `configure({queryOrders})` queued, taken by whoever asks next, until its count is used up. */
function queuedFault(state: SandboxState, res: ServerResponse, call: CallInProgress): Promise<Handled> | Handled {
  const queued = state.queryFault!;
  const { fault } = queued;
  if (--queued.remaining <= 0) state.queryFault = undefined;
  call.fault = fault;
  if (fault === 'hang') return hang(res);
  if (fault === 'malformed') return { malformed: '{"code":0,"data":{"orders":[' };
  return faultAnswer(state.codes, fault)!;
}

/** Whether the order is one the filter names: by any reference, and inside every time window given. */
function matchesFilter(state: SandboxState, o: StoredOrder, f: QueryOrdersRequest): boolean {
  const view = state.store.toHotelOrder(o);
  const refundableUntil = view.rooms?.[0]?.refundableUntil;
  return (
    (!f.customerReferenceNos || f.customerReferenceNos.includes(o.customerReferenceNo)) &&
    (!f.platformReferenceNos || f.platformReferenceNos.includes(o.platformReferenceNo)) &&
    (!f.supplierReferenceNos || f.supplierReferenceNos.includes(o.supplierReferenceNo)) &&
    (!f.checkInTimeWindow || within(view.checkIn, f.checkInTimeWindow)) &&
    (!f.checkOutTimeWindow || within(view.checkOut, f.checkOutTimeWindow)) &&
    (!f.bookingTimeWindow || within(view.bookingTime, f.bookingTimeWindow)) &&
    (!f.freeCancelTimeWindow || within(refundableUntil, f.freeCancelTimeWindow))
  );
}

/** Whether the timestamp falls inside the window, both ends included; no timestamp is outside every window. */
function within(value: string | undefined, window: TimeWindow): boolean {
  if (!value) return false;
  // A caller's window without an offset is UTC, as the orchestrator reads one (not the machine's zone).
  const t = parseTimestamp(value);
  return t >= parseTimestamp(window.start) && t <= parseTimestamp(window.end);
}
