/**
 * The sandbox's drift mode: answers as a live supplier sends them, not as our schemas describe them.
 * Every decision field (envelope code, an order's status and reference, CheckAvail's status and price) is
 * left as it is; around them, fields no decision reads are null, omitted, of another type (an order's hotel
 * confirmation number as a number, its price's amount as text), or joined by fields the spec does not list. A booking against it must end exactly as against the clean
 * answers, and the worker must log each drifting path once (`SANDBOX_DRIFT=on`, or `drift=1` in the
 * Test header of CheckAvail or Book: an order booked so drifts in every later answer about it).
 */
import type { CheckAvailData, HotelOrder } from '../../src/runtime/supplier/schemas';
import { parseTimestamp } from '../../src/api/values/timestamp';

/** An order as a drifting supplier renders it; `view` is the clean rendering. */
export function driftedOrder(view: HotelOrder): Record<string, unknown> {
  const unixSeconds = view.bookingTime ? Math.floor(parseTimestamp(view.bookingTime) / 1000) : undefined;
  return {
    ...view,
    // Never cancelled: a live supplier sends the empty fields as null rather than leaving them out.
    cancelTime: null,
    cancelReason: null,
    refundedPrice: null,
    statusRemark: view.statusRemark ?? null,
    // Numbers and times in another representation than the spec's; a confirmation number that is all
    // digits comes as a number from many suppliers' serializers.
    nightCount: view.nightCount !== undefined ? String(view.nightCount) : null,
    hotelConfirmNo: view.hotelConfirmNo !== undefined ? Number(view.hotelConfirmNo.replace(/\D/g, '')) : null,
    grossRate: view.grossRate ? { ...view.grossRate, amount: String(view.grossRate.amount) } : null,
    bookingTime: unixSeconds,
    // Omitted empty fields: the commission is not shown to this partner.
    commissionableRate: undefined,
    // Fields the spec does not list.
    orderChannel: 'OPENAPI',
    extensions: { loyalty: null, tags: [] },
    hotel: view.hotel
      ? { ...view.hotel, rating: String(view.hotel.rating ?? ''), latlngCoordinator: null, starRating: { value: 4 } }
      : null,
    rooms: (view.rooms ?? []).map((room) => ({
      ...room,
      roomIndex: String(room.roomIndex ?? 0),
      board: room.board?.boardId ?? 'RO',
      tax: null,
      refundInfo: undefined,
      cancelFees: (room.cancelFees ?? []).map((fee) => ({ ...fee, until: null })),
      guests: (room.guests ?? []).map((guest) => ({ ...guest, age: null, isChild: guest.isChild ? 1 : 0 })),
      bedTypes: [{ code: 'KING', count: 1 }],
    })),
  };
}

/** CheckAvail data as a drifting supplier renders it. */
export function driftedCheckAvail(data: CheckAvailData): Record<string, unknown> {
  const pkg = data.roomRatePkg;
  return {
    ...data,
    exchangeRateSnapshot: null,
    r2Candidates: [],
    roomRatePkg: pkg
      ? {
          ...pkg,
          rateComment: 42,
          board: pkg.board?.boardId ?? null,
          tax: null,
          cancelFees: (pkg.cancelFees ?? []).map((fee) => ({
            until: fee.until,
            fee: fee.fee ? { currency: fee.fee.currency, amount: String(fee.fee.amount) } : null,
          })),
          originalRoomNaming: { ...pkg.originalRoomNaming, supplier: '7' },
          promotion: { code: null },
        }
      : null,
  };
}

/** Whether a Test header asks for drift (`drift=1`, `drift=true` or `drift=on`). */
export function driftRequested(testHeader: string | undefined): boolean {
  const value = new URLSearchParams(testHeader ?? '').get('drift');
  return value === '1' || value === 'true' || value === 'on';
}
