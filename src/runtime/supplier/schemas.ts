/**
 * The supplier's wire model (spec sections 2 and 4), as zod schemas beside their types.
 *
 * Requests are what we send: strict. Responses are read in two passes (./read.ts):
 *  - a *decision* schema, strict, holding only the fields an outcome is decided on: the envelope `code`,
 *    an order's `status` and `customerReferenceNo`, CheckAvail's `status` and the price the price rule
 *    compares. If one of those cannot be read, the answer is unreadable and the caller treats it as such
 *    (for Book: the order may exist). Only the price may be a decimal in a string (DecisionMoney); a status
 *    or a code in a string is unreadable: what it would decide is a guess;
 *  - a *full* schema, the shape the spec gives every other field, read tolerantly: every such field is
 *    optional and may be null, unknown fields are dropped, a plain value of another JSON type is taken
 *    (a whole number as text, a decimal string as a number), and anything else of another shape is pruned;
 *    both are reported as drift (./drift.ts). Drift never changes an outcome. An order's references and
 *    price are here: they are shown and sent back (Cancel), never decided on.
 * The spec says nothing about which response fields are optional, and live suppliers send nulls, omit
 * empty fields and add fields without notice: only what a decision reads is required.
 */
import { z } from 'zod';
import { Guest, Holder, Money, Phone, type FallbackCandidate } from '../../api/values/index';
import { plainNumber } from './read';

export { Guest, Holder, Money, Phone };

/**
 * Timestamps travel as ISO 8601 / RFC 3339 strings; they are kept as strings (payloads stay JSON). A number
 * is never taken as one (unix seconds or milliseconds, or a yyyymmdd date, cannot be told apart): being no
 * plain `string` schema, the reader does not turn it into text, and it is pruned as drift.
 */
const Timestamp = z.custom<string>((v) => typeof v === 'string' && v.length > 0, 'expected a timestamp string');

/**
 * Text keyed by language code (`en`, `zh`, `ar` occur). Informational only, and its keys are data, not
 * field names: an entry that is not text is dropped here, without a drift path (a key may be anything).
 */
export const LocalizedText = z
  .record(z.string(), z.unknown())
  .transform((texts) =>
    Object.fromEntries(Object.entries(texts).filter((e): e is [string, string] => typeof e[1] === 'string')),
  );
export type LocalizedText = z.infer<typeof LocalizedText>;

export const TimeWindow = z.object({ start: Timestamp, end: Timestamp });
export type TimeWindow = z.infer<typeof TimeWindow>;

// --- Response shapes (read tolerantly, see the header) ------------------------------------------

export const RateBlock = z.object({
  commissionableRate: Money.optional(),
  netRate: Money.optional(),
  grossRate: Money.optional(),
  respectGrossRate: z.boolean().optional(),
});
export type RateBlock = z.infer<typeof RateBlock>;

export const Board = z.object({
  boardId: z.string().optional(),
  boardName: LocalizedText.optional(),
  boardDesc: LocalizedText.optional(),
});
export type Board = z.infer<typeof Board>;

export const TaxItem = z.object({
  taxType: z.string().optional(),
  taxName: z.string().optional(),
  amount: Money.optional(),
  desc: z.string().optional(),
});
export const Tax = z.object({
  total: Money.optional(),
  items: z.array(TaxItem).optional(),
});
export type Tax = z.infer<typeof Tax>;

export const CancelFee = z.object({ until: Timestamp.optional(), fee: Money.optional() });
export type CancelFee = z.infer<typeof CancelFee>;

export const OriginalRoomNaming = z.object({
  id: z.string().optional(),
  name: z.string().optional(),
  supplier: z.number().int().optional(),
});
export type OriginalRoomNaming = z.infer<typeof OriginalRoomNaming>;

/** The formats of checkIn/checkOut are not shown in the spec: a date or a date-time string (never a number, as Timestamp). */
const DateValue = Timestamp;

const roomRatePkgShape = {
  refundableMode: z.string().optional(),
  refundableUntil: Timestamp.optional(),
  cancelFees: z.array(CancelFee).optional(),
  originalRoomNaming: OriginalRoomNaming.optional(),
  rate: RateBlock.optional(),
  totalRate: RateBlock.optional(),
  rateComment: z.string().optional(),
  includesPackaging: z.boolean().optional(),
  checkIn: DateValue.optional(),
  checkOut: DateValue.optional(),
  board: Board.optional(),
  tax: Tax.optional(),
};

/** A rate package as the supplier reports it. */
export const RoomRatePkg = z.object({ ratePkgId: z.string().min(1).optional(), ...roomRatePkgShape });
export type RoomRatePkg = z.infer<typeof RoomRatePkg>;

export const LatLng = z.object({ lat: z.number(), lng: z.number() });
export const Hotel = z.object({
  hotelId: z.string().optional(),
  destinationId: z.string().optional(),
  name: LocalizedText.optional(),
  rating: z.number().optional(),
  address: LocalizedText.optional(),
  latlngCoordinator: z.object({ google: LatLng.optional(), gaode: LatLng.optional() }).optional(),
  logoURL: z.string().optional(),
});
export type Hotel = z.infer<typeof Hotel>;

export const RefundInfo = z.object({
  date: z.string().optional(),
  refunded: z.boolean().optional(),
  refundedMoney: Money.optional(),
});

/** An order room carries every RoomRatePkg field directly, plus its own. */
export const OrderRoom = z.object({
  ratePkgId: z.string().optional(),
  ...roomRatePkgShape,
  roomTypeId: z.string().optional(),
  roomTypeName: LocalizedText.optional(),
  hotelId: z.string().optional(),
  rates: z.array(RoomRatePkg).optional(),
  roomIndex: z.number().int().optional(),
  guests: z.array(Guest.partial()).optional(),
  refundInfo: z.array(RefundInfo).optional(),
});
export type OrderRoom = z.infer<typeof OrderRoom>;

/** Holder as the supplier echoes it: the phone carries countryCode and number only. */
export const OrderHolder = Holder.partial().extend({ phone: Phone.partial().optional() });

/**
 * What an order's outcome is decided on, read strictly: without `status` and `customerReferenceNo` an
 * order cannot be judged or matched to its booking. A guess here would risk money, so an order failing this
 * is unreadable (for a booking: still unknown, looked up again, and a person told at the deadline).
 */
export const OrderDecision = z.object({
  status: z.number().int(),
  customerReferenceNo: z.string().min(1),
});

/**
 * An order as the supplier reports it: the decision fields, and every other spec field, tolerantly. The
 * references and price are reported and shown (the supplier reference is sent back with Cancel) but decide
 * nothing, so a supplier sending `"hotelConfirmNo": 12345678` or an amount as `"120.50"` is read, not refused.
 */
export const HotelOrder = OrderDecision.extend({
  platformReferenceNo: z.string().optional(),
  supplierReferenceNo: z.string().optional(),
  hotelConfirmNo: z.string().optional(),
  grossRate: Money.optional(),
  netRate: Money.optional(),
  statusRemark: z.string().optional(),
  checkIn: DateValue.optional(),
  checkOut: DateValue.optional(),
  nightCount: z.number().int().optional(),
  roomCount: z.number().int().optional(),
  bookingTime: Timestamp.optional(),
  holder: OrderHolder.optional(),
  commissionableRate: Money.optional(),
  respectGrossRate: z.boolean().optional(),
  cancelTime: Timestamp.optional(),
  cancelReason: z.string().optional(),
  refundedPrice: Money.optional(),
  supplier: z.number().int().optional(),
  hotel: Hotel.optional(),
  rooms: z.array(OrderRoom).optional(),
});
export type HotelOrder = z.infer<typeof HotelOrder>;

/** Keys inside `usd` are not shown in the spec. */
export const ExchangeRateSnapshot = z.object({
  date: z.string().optional(),
  usd: z.record(z.string(), z.unknown()).optional(),
});
export type ExchangeRateSnapshot = z.infer<typeof ExchangeRateSnapshot>;

/** The response envelope of every operation. Error bodies are `{code, msg}` with no `data`. */
export const EnvelopeDecision = z.object({ code: z.number().int(), data: z.unknown().optional() });
export const Envelope = EnvelopeDecision.extend({ msg: z.string().optional() });
export type Envelope = z.infer<typeof Envelope>;

// --- CheckAvail -------------------------------------------------------------------------------

export const CheckAvailRequest = z.object({ ratePkgId: z.string().min(1) });
export type CheckAvailRequest = z.infer<typeof CheckAvailRequest>;

/**
 * Money a decision reads: its amount may come as a plain decimal in a string ("120.50"), which means one
 * number only. Anything else is unreadable, never pruned: a gross rate left out would let the price check
 * compare the net rate instead (see priceOf).
 */
const DecisionMoney = z.object({
  currency: z.string().min(1),
  amount: z.union([
    z.number().finite(),
    z
      .string()
      .refine((text) => plainNumber(text) !== undefined, 'expected a number')
      .transform((text) => plainNumber(text)!),
  ]),
});

/** CheckAvail's decision: its status, and the price the price check compares (see priceOf). */
export const CheckAvailDecision = z.object({
  status: z.number().int(),
  roomRatePkg: z
    .object({
      totalRate: z.object({ grossRate: DecisionMoney.optional(), netRate: DecisionMoney.optional() }).optional(),
    })
    .optional(),
});

export const CheckAvailData = CheckAvailDecision.extend({
  roomRatePkg: RoomRatePkg.optional(),
  exchangeRateSnapshot: ExchangeRateSnapshot.optional(),
});
export type CheckAvailData = z.infer<typeof CheckAvailData>;
/** CheckAvail as the client answers it: its data, and the fallback candidates read beside it (./candidates). */
export type CheckAvailAnswer = CheckAvailData & { candidates?: FallbackCandidate[] };

// --- Book -------------------------------------------------------------------------------------

export const BookRequest = z.object({
  customerReferenceNo: z.uuid(),
  ratePkgId: z.string().min(1),
  holder: Holder,
  guests: z.array(Guest).min(1),
  /**
   * Where the supplier sends order-status callbacks (supplier-facts: field name inferred). The client sends
   * it under the profile's `callbacks.urlField`.
   */
  callbackUrl: z.url().optional(),
});
export type BookRequest = z.infer<typeof BookRequest>;

export const BookDecision = z.object({ hotelOrder: OrderDecision });
export const BookData = z.object({ hotelOrder: HotelOrder });
export type BookData = z.infer<typeof BookData>;

// --- QueryOrders ------------------------------------------------------------------------------

export const QueryOrdersRequest = z.object({
  customerReferenceNos: z.array(z.string().min(1)).optional(),
  platformReferenceNos: z.array(z.string().min(1)).optional(),
  supplierReferenceNos: z.array(z.string().min(1)).optional(),
  statusList: z.array(z.number().int()).optional(),
  checkInTimeWindow: TimeWindow.optional(),
  checkOutTimeWindow: TimeWindow.optional(),
  bookingTimeWindow: TimeWindow.optional(),
  freeCancelTimeWindow: TimeWindow.optional(),
  cancelledTimeWindow: TimeWindow.optional(),
});
export type QueryOrdersRequest = z.infer<typeof QueryOrdersRequest>;

/**
 * The list itself; each order in it is read on its own (a malformed order fails only its own booking).
 * An absent or null list is an empty one: suppliers omit empty fields.
 */
export const QueryOrdersData = z.object({ orders: z.array(z.unknown()).optional() });
export type QueryOrdersData = z.infer<typeof QueryOrdersData>;

/** An order whose decision fields could not be read, with its reference when that much was readable. */
export interface UnreadableOrder {
  customerReferenceNo?: string;
  /** JSON paths and what is wrong there (never the values). */
  issues: string[];
}

/** A QueryOrders answer: the orders read, and those that could not be. */
export interface OrderListing {
  orders: HotelOrder[];
  unreadable: UnreadableOrder[];
}

// --- Cancel (supplier-facts: asynchronous; the order's fate is then followed with QueryOrders) -------

export const CancelRequest = z.object({
  customerReferenceNo: z.string().min(1),
  supplierReferenceNo: z.string().min(1),
  reason: z.string().min(1).max(500),
});
export type CancelRequest = z.infer<typeof CancelRequest>;

/** Cancel's decision: the status the supplier reports at once (usually not final yet). */
export const CancelDecision = z.object({ status: z.number().int() });
/** Cancel's answer: the service fee it charges, and the order status at the time of the answer. */
export const CancelData = CancelDecision.extend({ serviceFee: Money.optional() });
export type CancelData = z.infer<typeof CancelData>;

// --- Ticket (authentication; path and fields from the supplier profile) -----------------------

export const TicketRequest = z.object({
  appKey: z.string().min(1),
  appSecret: z.string().min(1),
  ttl: z.number().int().positive().optional(),
});
export type TicketRequest = z.infer<typeof TicketRequest>;

export const TicketData = z.object({ ticket: z.string().min(1) });
export type TicketData = z.infer<typeof TicketData>;
