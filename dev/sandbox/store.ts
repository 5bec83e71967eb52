/**
 * The sandbox's orders. Status is computed when read, from the order's creation time or the number
 * of QueryOrders answers that included it, so parked orders cost no timers.
 */
import { createHash } from 'node:crypto';
import type { SupplierProfile } from '../../src/runtime/config/supplier-profile';
import type { Guest, Holder, HotelOrder, Money, RoomRatePkg } from '../../src/runtime/supplier/schemas';
import type { ListingLag, OrderOutcome } from './scenario';
import { parseTimestamp } from '../../src/api/values/timestamp';

export interface StoredOrder {
  customerReferenceNo: string;
  platformReferenceNo: string;
  supplierReferenceNo: string;
  ratePkgId: string;
  sessionId: string;
  clientKey: string;
  createdAt: number;
  outcome: OrderOutcome;
  statusRemark?: string;
  /** Real time from creation to the outcome; ignored when confirmAfterQueries is set. */
  confirmAfterMs: number;
  confirmAfterQueries?: number;
  queriesSeen: number;
  /** QueryOrders lists the order only from its Nth query naming it, or this long after it was made. */
  listAfterQueries?: number;
  listAfterMs?: number;
  /** After QueryOrders first answered it Confirmed (`confirmedListedAt`), it lags this long (Test `lagAfterConfirmedMs`). */
  lagAfterConfirmedMs?: number;
  relistAs?: ListingLag;
  confirmedListedAt?: number;
  forcedStatus?: number;
  /** When the status was forced (POST /_sandbox/orders/status): a supplier-side change's time, e.g. its cancelTime. */
  forcedAt?: number;
  price: Money;
  holder: Holder;
  guests: Guest[];
  test: string;
  /** false: free cancellation ended before the order was made (Test `freeCancel=0`). */
  freeCancel?: boolean;
  /** Free cancellation ends this long after the order was made (Test `freeCancelForMs`). */
  freeCancelForMs?: number;
  /** Where order-status callbacks go (Book's callback URL). */
  callbackUrl?: string;
  cancel?: StoredCancel;
}

/** A Cancel the sandbox took: the order shows Confirmed until it settles. */
export interface StoredCancel {
  requestedAt: number;
  reason: string;
  outcome: 'cancelled' | 'cancelFailed' | 'pending';
  afterMs: number;
  afterQueries?: number;
  /** queriesSeen when the Cancel was taken. */
  queriesAtRequest: number;
  serviceFee: Money;
}

/** A deterministic base price per package (100.00 to 499.99 USD), so tests can know it in advance. */
export function basePriceFor(ratePkgId: string): Money {
  const n = createHash('sha256').update(ratePkgId).digest().readUInt32BE(0);
  return { currency: 'USD', amount: round2(100 + (n % 40_000) / 100) };
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

const DAY = 24 * 3600 * 1000;
const dateOnly = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Stay dates derived from the package id, so the same package always means the same stay. */
export function stayFor(ratePkgId: string, now: number): { checkIn: string; checkOut: string; nights: number } {
  const offset = 14 + (basePriceFor(ratePkgId).amount % 30);
  const start = Math.floor(now / DAY) * DAY + Math.floor(offset) * DAY;
  return { checkIn: dateOnly(start), checkOut: dateOnly(start + 2 * DAY), nights: 2 };
}

export function ratePackage(
  ratePkgId: string,
  price: Money,
  now: number,
  freeCancel = true,
  freeCancelForMs?: number,
): RoomRatePkg {
  const stay = stayFor(ratePkgId, now);
  const net = { currency: price.currency, amount: round2(price.amount * 0.9) };
  return {
    ratePkgId,
    refundableMode: 'full',
    // Free until two days before check-in; with freeCancel off, that ended a day before the booking.
    refundableUntil: new Date(
      freeCancelForMs !== undefined
        ? now + freeCancelForMs
        : freeCancel
          ? parseTimestamp(stay.checkIn) - 2 * DAY
          : now - DAY,
    ).toISOString(),
    cancelFees: [
      { until: stay.checkIn + 'T00:00:00Z', fee: { currency: price.currency, amount: round2(price.amount * 0.5) } },
    ],
    originalRoomNaming: { id: 'dbl', name: 'Double Room', supplier: 1 },
    rate: {
      grossRate: { currency: price.currency, amount: round2(price.amount / stay.nights) },
      netRate: { currency: price.currency, amount: round2(net.amount / stay.nights) },
    },
    totalRate: { grossRate: price, netRate: net, commissionableRate: price, respectGrossRate: false },
    rateComment: 'Sandbox rate',
    includesPackaging: false,
    checkIn: stay.checkIn,
    checkOut: stay.checkOut,
    board: { boardId: 'BB', boardName: { en: 'Bed and breakfast' } },
    tax: { total: { currency: price.currency, amount: 0 }, items: [] },
  };
}

export class OrderStore {
  private readonly byRef = new Map<string, StoredOrder>();
  private seq = 0;

  constructor(
    private readonly profile: SupplierProfile,
    private readonly now: () => number = Date.now,
  ) {}

  get(ref: string): StoredOrder | undefined {
    return this.byRef.get(ref);
  }

  all(): StoredOrder[] {
    return [...this.byRef.values()];
  }

  create(
    order: Omit<StoredOrder, 'platformReferenceNo' | 'supplierReferenceNo' | 'createdAt' | 'queriesSeen'>,
  ): StoredOrder {
    const n = ++this.seq;
    const stored: StoredOrder = {
      ...order,
      platformReferenceNo: `PRN${String(n).padStart(8, '0')}`,
      supplierReferenceNo: `SRN${String(n).padStart(8, '0')}`,
      createdAt: this.now(),
      queriesSeen: 0,
    };
    this.byRef.set(order.customerReferenceNo, stored);
    return stored;
  }

  clear(): void {
    this.byRef.clear();
  }

  /** Whether QueryOrders lists the order yet (a lagging index: Test `listAfterQueries`, `listAfterMs`). */
  listed(order: StoredOrder): boolean {
    if (order.listAfterQueries !== undefined && order.queriesSeen < order.listAfterQueries) return false;
    return order.listAfterMs === undefined || this.now() - order.createdAt >= order.listAfterMs;
  }

  /**
   * How QueryOrders shows a listed order now: `as-is`, or lagging behind the Confirmed it already answered
   * (`unlisted`, `pending`). The first answer that shows it Confirmed starts the lag.
   */
  listingNow(order: StoredOrder): 'as-is' | ListingLag {
    if (order.lagAfterConfirmedMs === undefined || this.statusOf(order) !== this.profile.orderStatus.confirmed)
      return 'as-is';
    if (order.confirmedListedAt === undefined) {
      order.confirmedListedAt = this.now();
      return 'as-is';
    }
    return this.now() - order.confirmedListedAt < order.lagAfterConfirmedMs ? (order.relistAs ?? 'unlisted') : 'as-is';
  }

  /** The status now: forced, else the outcome once its delay or query count is reached, else Confirming. */
  statusOf(order: StoredOrder): number {
    const s = this.profile.orderStatus;
    if (order.forcedStatus !== undefined) return order.forcedStatus;
    if (order.outcome === 'pending' || !this.resolved(order)) return s.confirming;
    const settled = { confirmed: s.confirmed, failed: s.failed, cancelled: s.cancelled }[order.outcome];
    const c = order.cancel;
    if (settled !== s.confirmed || !c || c.outcome === 'pending' || !this.cancelSettled(c, order)) return settled;
    return c.outcome === 'cancelled' ? s.cancelled : s.cancelFailed;
  }

  /** When a taken Cancel settles; the time it did (for cancelTime), or undefined. */
  private cancelSettled(c: StoredCancel, order: StoredOrder): boolean {
    if (c.afterQueries !== undefined) return order.queriesSeen - c.queriesAtRequest >= c.afterQueries;
    return this.now() - c.requestedAt >= c.afterMs;
  }

  private resolved(order: StoredOrder): boolean {
    if (order.confirmAfterQueries !== undefined) return order.queriesSeen >= order.confirmAfterQueries;
    return this.now() - order.createdAt >= order.confirmAfterMs;
  }

  /** The order as the interface returns it (HotelOrder); `shownStatus`: as a lagging listing shows it. */
  toHotelOrder(order: StoredOrder, shownStatus?: number): HotelOrder {
    const status = shownStatus ?? this.statusOf(order);
    const s = this.profile.orderStatus;
    const stay = stayFor(order.ratePkgId, order.createdAt);
    const pkg = ratePackage(
      order.ratePkgId,
      order.price,
      order.createdAt,
      order.freeCancel !== false,
      order.freeCancelForMs,
    );
    const remark =
      status === s.confirmed
        ? 'Confirmed'
        : status === s.confirming
          ? 'Awaiting supplier confirmation'
          : (order.statusRemark ?? 'Rejected by the hotel');
    return {
      status,
      statusRemark: remark,
      checkIn: stay.checkIn,
      checkOut: stay.checkOut,
      nightCount: stay.nights,
      roomCount: 1,
      bookingTime: new Date(order.createdAt).toISOString(),
      ...(status === s.confirmed ? { hotelConfirmNo: `HCN-${order.platformReferenceNo.slice(3)}` } : {}),
      holder: {
        firstName: order.holder.firstName,
        lastName: order.holder.lastName,
        email: order.holder.email,
        phone: { countryCode: order.holder.phone.countryCode, number: order.holder.phone.number },
      },
      platformReferenceNo: order.platformReferenceNo,
      customerReferenceNo: order.customerReferenceNo,
      commissionableRate: order.price,
      netRate: pkg.totalRate!.netRate,
      grossRate: order.price,
      respectGrossRate: false,
      ...(status === s.cancelled
        ? {
            cancelTime: new Date(order.cancel?.requestedAt ?? order.forcedAt ?? order.createdAt).toISOString(),
            cancelReason: order.cancel?.reason ?? order.statusRemark ?? 'Cancelled by the hotel',
            ...(order.cancel
              ? {
                  refundedPrice: {
                    currency: order.price.currency,
                    amount: round2(order.price.amount - order.cancel.serviceFee.amount),
                  },
                }
              : {}),
          }
        : {}),
      supplier: 1,
      supplierReferenceNo: order.supplierReferenceNo,
      hotel: { hotelId: 'H-SANDBOX-1', destinationId: 'D-1', name: { en: 'Sandbox Grand Hotel' }, rating: 4 },
      rooms: [
        {
          ...pkg,
          roomTypeId: 'dbl',
          roomTypeName: { en: 'Double Room' },
          hotelId: 'H-SANDBOX-1',
          roomIndex: 0,
          guests: order.guests,
        },
      ],
    };
  }
}
