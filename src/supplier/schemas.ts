/**
 * The supplier's wire model (spec sections 2 and 4), as zod schemas beside their types.
 *
 * Responses are parsed tolerantly: unknown fields are allowed (a supplier adds fields without notice),
 * and only the fields this project acts on are required. A missing or mistyped required field fails
 * with the JSON path of the field. Requests are what we send, so their required fields are strict.
 */
import { z } from 'zod';

/** Timestamps travel as ISO 8601 / RFC 3339 strings; they are kept as strings (payloads stay JSON). */
const Timestamp = z.string().min(1);

export const Money = z.object({
  currency: z.string().min(1),
  amount: z.number().finite(),
});
export type Money = z.infer<typeof Money>;

/** Text keyed by language code (`en`, `zh`, `ar` occur). */
export const LocalizedText = z.record(z.string(), z.string());
export type LocalizedText = z.infer<typeof LocalizedText>;

export const TimeWindow = z.object({ start: Timestamp, end: Timestamp });
export type TimeWindow = z.infer<typeof TimeWindow>;

/** `countryNumber` is sent in requests only; responses carry `countryCode` and `number`. */
export const Phone = z.object({
  countryCode: z.string().min(1),
  countryNumber: z.number().int().optional(),
  number: z.string().min(1),
});
export type Phone = z.infer<typeof Phone>;

export const Holder = z.object({
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  email: z.email(),
  phone: Phone,
});
export type Holder = z.infer<typeof Holder>;

export const Guest = z.object({
  roomIndex: z.number().int().nonnegative(),
  firstName: z.string().min(1),
  lastName: z.string().min(1),
  nationalityCode: z.string().min(1),
  age: z.number().int().nonnegative(),
  isChild: z.boolean(),
});
export type Guest = z.infer<typeof Guest>;

export const RateBlock = z.object({
  commissionableRate: Money.optional(),
  netRate: Money.optional(),
  grossRate: Money.optional(),
  respectGrossRate: z.boolean().optional(),
});
export type RateBlock = z.infer<typeof RateBlock>;

export const Board = z.object({
  boardId: z.string(),
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

export const CancelFee = z.object({ until: Timestamp, fee: Money });
export type CancelFee = z.infer<typeof CancelFee>;

export const OriginalRoomNaming = z.object({
  id: z.string().optional(),
  name: z.string().optional(),
  supplier: z.number().int().optional(),
});
export type OriginalRoomNaming = z.infer<typeof OriginalRoomNaming>;

/** The formats of checkIn/checkOut are not shown in the spec: a date or a date-time string. */
const DateValue = z.string().min(1);

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

/** A rate package. `totalRate` is what the price check compares, so CheckAvail requires it (see checkAvail). */
export const RoomRatePkg = z.object({ ratePkgId: z.string().min(1), ...roomRatePkgShape });
export type RoomRatePkg = z.infer<typeof RoomRatePkg>;

export const LatLng = z.object({ lat: z.number(), lng: z.number() });
export const Hotel = z.object({
  hotelId: z.string(),
  destinationId: z.string().optional(),
  name: LocalizedText.optional(),
  rating: z.number().optional(),
  address: LocalizedText.optional(),
  latlngCoordinator: z.object({ google: LatLng.optional(), gaode: LatLng.optional() }).optional(),
  logoURL: z.string().optional(),
});
export type Hotel = z.infer<typeof Hotel>;

export const RefundInfo = z.object({
  date: z.string(),
  refunded: z.boolean(),
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
 * An order as the supplier reports it. `status` and `customerReferenceNo` are required: without them
 * an order cannot be matched to its booking or judged, and a guess would risk money.
 */
export const HotelOrder = z.object({
  status: z.number().int(),
  statusRemark: z.string().optional(),
  customerReferenceNo: z.string().min(1),
  platformReferenceNo: z.string().optional(),
  supplierReferenceNo: z.string().optional(),
  hotelConfirmNo: z.string().optional(),
  checkIn: DateValue.optional(),
  checkOut: DateValue.optional(),
  nightCount: z.number().int().optional(),
  roomCount: z.number().int().optional(),
  bookingTime: Timestamp.optional(),
  holder: OrderHolder.optional(),
  commissionableRate: Money.optional(),
  netRate: Money.optional(),
  grossRate: Money.optional(),
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
export const ExchangeRateSnapshot = z.object({ date: z.string(), usd: z.record(z.string(), z.unknown()) });
export type ExchangeRateSnapshot = z.infer<typeof ExchangeRateSnapshot>;

/** The response envelope of every operation. Error bodies are `{code, msg}` with no `data`. */
export const Envelope = z.object({
  code: z.number().int(),
  msg: z.string().optional(),
  data: z.unknown().optional(),
});
export type Envelope = z.infer<typeof Envelope>;

// --- CheckAvail -------------------------------------------------------------------------------

export const CheckAvailRequest = z.object({ ratePkgId: z.string().min(1) });
export type CheckAvailRequest = z.infer<typeof CheckAvailRequest>;

export const CheckAvailData = z.object({
  status: z.number().int(),
  roomRatePkg: RoomRatePkg.optional(),
  exchangeRateSnapshot: ExchangeRateSnapshot.optional(),
});
export type CheckAvailData = z.infer<typeof CheckAvailData>;

// --- Book -------------------------------------------------------------------------------------

export const BookRequest = z.object({
  customerReferenceNo: z.uuid(),
  ratePkgId: z.string().min(1),
  holder: Holder,
  guests: z.array(Guest).min(1),
});
export type BookRequest = z.infer<typeof BookRequest>;

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

export const QueryOrdersData = z.object({ orders: z.array(HotelOrder) });
export type QueryOrdersData = z.infer<typeof QueryOrdersData>;

// --- Ticket (authentication; path and fields from the supplier profile) -----------------------

export const TicketRequest = z.object({
  appKey: z.string().min(1),
  appSecret: z.string().min(1),
  ttl: z.number().int().positive().optional(),
});
export type TicketRequest = z.infer<typeof TicketRequest>;

export const TicketData = z.object({ ticket: z.string().min(1) });
export type TicketData = z.infer<typeof TicketData>;

export { describeIssues } from '../contract/issues';
