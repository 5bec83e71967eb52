/** The wire schemas take every field of spec section 2, tolerate unknown ones, and reject bad ones naming the JSON path. */
import {
  BookData,
  BookRequest,
  CheckAvailData,
  Envelope,
  HotelOrder,
  OrderDecision,
  QueryOrdersData,
  QueryOrdersRequest,
  RoomRatePkg,
} from '../../src/runtime/supplier/schemas';
import { describeIssues } from '../../src/api/values/index';

const money = (amount: number, currency = 'USD') => ({ currency, amount });
const text = (en: string) => ({ en, zh: `${en} (zh)`, ar: `${en} (ar)` });
const rateBlock = (amount: number) => ({
  commissionableRate: money(amount),
  netRate: money(amount * 0.9),
  grossRate: money(amount),
  respectGrossRate: true,
});

/** A RoomRatePkg with every field of spec 2.2. */
const fullRatePkg = {
  ratePkgId: 'PKG-FULL-1',
  refundableMode: 'full',
  refundableUntil: '2030-05-30T12:00:00Z',
  cancelFees: [
    { until: '2030-05-30T12:00:00Z', fee: money(0) },
    { until: '2030-06-01T00:00:00Z', fee: money(120) },
  ],
  originalRoomNaming: { id: 'DBL-STD', name: 'Standard Double', supplier: 7 },
  rate: rateBlock(120),
  totalRate: rateBlock(240),
  rateComment: 'Non-smoking on request',
  includesPackaging: false,
  checkIn: '2030-06-01',
  checkOut: '2030-06-03',
  board: { boardId: 'BB', boardName: text('Bed and breakfast'), boardDesc: text('Breakfast for two') },
  tax: {
    total: money(24),
    items: [{ taxType: 'VAT', taxName: 'Value added tax', amount: money(24), desc: '10 percent' }],
  },
};

const guest = { roomIndex: 0, firstName: 'Ada', lastName: 'Lovelace', nationalityCode: 'GB', age: 36, isChild: false };

/** A HotelOrder with every field of spec 2.2, its rooms carrying every RoomRatePkg field plus their own. */
const fullOrder = {
  status: 2,
  statusRemark: 'Confirmed',
  checkIn: '2030-06-01',
  checkOut: '2030-06-03',
  nightCount: 2,
  roomCount: 1,
  bookingTime: '2030-05-01T09:30:00Z',
  hotelConfirmNo: 'HCN-123',
  holder: {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    phone: { countryCode: 'GB', number: '2079460000' },
  },
  platformReferenceNo: 'PRN00000001',
  customerReferenceNo: '6f1c1a2e-8f0e-4c1e-9d7a-2f6b1c3d4e5f',
  commissionableRate: money(240),
  netRate: money(216),
  grossRate: money(240),
  respectGrossRate: true,
  cancelTime: '2030-05-02T10:00:00Z',
  cancelReason: 'none',
  refundedPrice: money(0),
  supplier: 7,
  supplierReferenceNo: 'SRN00000001',
  hotel: {
    hotelId: 'H-1',
    destinationId: 'D-9',
    name: text('Grand Hotel'),
    rating: 4.5,
    address: text('1 Main Street'),
    latlngCoordinator: { google: { lat: 51.5, lng: -0.12 }, gaode: { lat: 51.5001, lng: -0.1201 } },
    logoURL: 'https://example.com/logo.png',
  },
  rooms: [
    {
      ...fullRatePkg,
      roomTypeId: 'DBL',
      roomTypeName: text('Double room'),
      hotelId: 'H-1',
      rates: [fullRatePkg],
      roomIndex: 0,
      guests: [guest],
      refundInfo: [{ date: '2030-05-02', refunded: false, refundedMoney: money(0) }],
    },
  ],
};

const issuesOf = (result: { success: boolean; error?: Parameters<typeof describeIssues>[0] }, root = '') =>
  result.success ? [] : describeIssues(result.error!, root);

describe('every field of spec section 2', () => {
  test('RoomRatePkg keeps every field', () => {
    expect(RoomRatePkg.parse(fullRatePkg)).toEqual(fullRatePkg);
  });

  test('HotelOrder keeps every field, nested hotel and rooms included', () => {
    expect(HotelOrder.parse(fullOrder)).toEqual(fullOrder);
  });

  test('CheckAvail data: status, current package and exchange-rate snapshot', () => {
    const data = {
      status: 1,
      roomRatePkg: fullRatePkg,
      exchangeRateSnapshot: { date: '2030-05-01', usd: { EUR: 0.92, GBP: 0.79 } },
    };
    expect(CheckAvailData.parse(data)).toEqual(data);
    // An unavailable answer carries the status alone.
    expect(CheckAvailData.parse({ status: 2 })).toEqual({ status: 2 });
  });

  test('Book data and QueryOrders data wrap the order', () => {
    expect(BookData.parse({ hotelOrder: fullOrder })).toEqual({ hotelOrder: fullOrder });
    expect(QueryOrdersData.parse({ orders: [fullOrder, fullOrder] })).toEqual({ orders: [fullOrder, fullOrder] });
    expect(QueryOrdersData.parse({ orders: [] })).toEqual({ orders: [] });
  });

  test('QueryOrders request with every filter', () => {
    const w = { start: '2030-01-01T00:00:00Z', end: '2030-12-31T23:59:59Z' };
    const request = {
      customerReferenceNos: ['a'],
      platformReferenceNos: ['b'],
      supplierReferenceNos: ['c'],
      statusList: [1, 2],
      checkInTimeWindow: w,
      checkOutTimeWindow: w,
      bookingTimeWindow: w,
      freeCancelTimeWindow: w,
      cancelledTimeWindow: w,
    };
    expect(QueryOrdersRequest.parse(request)).toEqual(request);
  });

  test('Book request: phone with countryNumber (request only)', () => {
    const request = {
      customerReferenceNo: '6f1c1a2e-8f0e-4c1e-9d7a-2f6b1c3d4e5f',
      ratePkgId: 'PKG-FULL-1',
      holder: { ...fullOrder.holder, phone: { countryCode: 'GB', countryNumber: 44, number: '2079460000' } },
      guests: [guest, { ...guest, firstName: 'Byron', age: 8, isChild: true }],
    };
    expect(BookRequest.parse(request)).toEqual(request);
  });

  test('the envelope: success with data, error without', () => {
    expect(Envelope.parse({ code: 0, msg: 'Success', data: { orders: [] } })).toEqual({
      code: 0,
      msg: 'Success',
      data: { orders: [] },
    });
    expect(Envelope.parse({ code: 100001111, msg: 'ARI changed' })).toEqual({ code: 100001111, msg: 'ARI changed' });
  });
});

describe('tolerance', () => {
  test('unknown fields anywhere are accepted (a supplier adds fields without notice)', () => {
    const extended = {
      ...fullOrder,
      loyaltyTier: 'gold',
      hotel: { ...fullOrder.hotel, starsV2: { value: 5 } },
      rooms: [{ ...fullOrder.rooms[0], bedding: ['king'], guests: [{ ...guest, passportNo: 'X1' }] }],
    };
    const parsed = HotelOrder.safeParse(extended);
    expect(parsed.success).toBe(true);
    expect(parsed.data?.customerReferenceNo).toBe(fullOrder.customerReferenceNo);
    expect(QueryOrdersData.safeParse({ orders: [extended], page: { next: null } }).success).toBe(true);
    expect(CheckAvailData.safeParse({ status: 1, roomRatePkg: { ...fullRatePkg, promo: true }, r2: [] }).success).toBe(
      true,
    );
  });

  test('an order with only status and customerReferenceNo is enough', () => {
    expect(HotelOrder.parse({ status: 1, customerReferenceNo: 'ref' })).toEqual({
      status: 1,
      customerReferenceNo: 'ref',
    });
  });
});

describe('rejections name the JSON path', () => {
  test('missing customerReferenceNo (each order of a list is read on its own, see test/supplier/drift.test.ts)', () => {
    const { customerReferenceNo: _omitted, ...order } = fullOrder;
    const issues = issuesOf(OrderDecision.safeParse(order), 'data.orders.1');
    expect(issues).toEqual([expect.stringMatching(/^data\.orders\.1\.customerReferenceNo: /)]);
  });

  test('status as a string', () => {
    const issues = issuesOf(BookData.safeParse({ hotelOrder: { ...fullOrder, status: '2' } }), 'data');
    expect(issues).toEqual([expect.stringMatching(/^data\.hotelOrder\.status: .*number/)]);
  });

  test('status as a fraction', () => {
    expect(issuesOf(HotelOrder.safeParse({ ...fullOrder, status: 1.5 }))).toEqual([expect.stringMatching(/^status: /)]);
  });

  test('a nested mistyped amount deep in a room', () => {
    const bad = {
      ...fullOrder,
      rooms: [{ ...fullOrder.rooms[0], totalRate: { netRate: { currency: 'USD', amount: '216' } } }],
    };
    expect(issuesOf(HotelOrder.safeParse(bad))).toEqual([
      expect.stringMatching(/^rooms\.0\.totalRate\.netRate\.amount: /),
    ]);
  });

  test('CheckAvail without status, and several problems at once', () => {
    expect(issuesOf(CheckAvailData.safeParse({ roomRatePkg: fullRatePkg }), 'data')).toEqual([
      expect.stringMatching(/^data\.status: /),
    ]);
    const issues = issuesOf(HotelOrder.safeParse({ status: 'x' }));
    expect(issues).toHaveLength(2);
    expect(issues.join('\n')).toMatch(/^status: /m);
    expect(issues.join('\n')).toMatch(/^customerReferenceNo: /m);
  });

  test('a non-object body is reported at the root', () => {
    expect(issuesOf(Envelope.safeParse('oops'))).toEqual([expect.stringMatching(/^\(root\): /)]);
  });

  test('Book request: customerReferenceNo must be a uuid, guests not empty', () => {
    const issues = issuesOf(
      BookRequest.safeParse({ customerReferenceNo: 'ref-1', ratePkgId: 'P', holder: fullOrder.holder, guests: [] }),
    );
    expect(issues.map((i) => i.split(':')[0]).sort()).toEqual(['customerReferenceNo', 'guests']);
  });
});
