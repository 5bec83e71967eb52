/**
 * A supplier written only from the spec's text (hotel-booking-interface.md) and supplier-facts.md, by someone who has
 * not read the product's code, its sandbox or its fixtures. Where the spec says "not shown" it takes its own values
 * (`SupplierValues`), so a check can tell whether the product reads them from configuration. Its answers can be
 * scripted per operation (a 429 with a Retry-After, say) and its deviations switched on, and it records every request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/** The values the spec leaves "not shown"; supplier-facts' defaults where a check wants them. */
export interface SupplierValues {
  orderStatus: {
    unknown: number;
    confirming: number;
    confirmed: number;
    cancelled: number;
    failed: number;
    cancelFailed: number;
  };
  checkAvailStatus: { available: number; unavailable: number };
  /** Orders one QueryOrders answer lists at most. */
  pageSize: number;
  /** How long a new order stays Confirming before it is Confirmed; 0: Book answers Confirmed. */
  confirmAfterMs: number;
}

/** supplier-facts.md's documented values (HotelByte). */
export const FACTS_VALUES: SupplierValues = {
  orderStatus: { unknown: 0, confirming: 1, confirmed: 2, cancelled: 3, failed: 4, cancelFailed: 5 },
  checkAvailStatus: { available: 1, unavailable: 2 },
  pageSize: 20,
  confirmAfterMs: 0,
};

/** Values of a platform the project never saw: its own numbering, CheckAvail codes and page size. */
export const OWN_VALUES: SupplierValues = {
  orderStatus: { unknown: 10, confirming: 11, confirmed: 12, cancelled: 13, failed: 14, cancelFailed: 15 },
  checkAvailStatus: { available: 7, unavailable: 8 },
  pageSize: 25,
  // Confirmed in Book's answer: the kit then settles each order after three reads instead of following a change.
  confirmAfterMs: 0,
};

/** supplier-facts.md: envelope codes. */
const CODE = {
  ok: 0,
  badRequest: 100000400,
  unauthorized: 100000401,
  notFound: 100000404,
  rateLimited: 100000429,
  ari: 100001111,
};

/** A scripted answer: the next request of an operation gets it instead of the normal one. */
export interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface RecordedRequest {
  at: number;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  answered: number;
}

interface Order {
  ref: string;
  platformRef: string;
  supplierRef: string;
  ratePkgId: string;
  createdAt: number;
  cancelledAt?: number;
  failed: boolean;
  holder: unknown;
  guests: unknown;
}

export interface SpecSupplier {
  url: string;
  token: string;
  requests: RecordedRequest[];
  /** Per operation (`book`, `cancel`, `checkAvail`, `queryOrders`): answers given in turn before the normal one. */
  script: Record<string, Scripted[]>;
  /** Per operation: answered so for every request while set. */
  always: Record<string, Scripted | undefined>;
  /** The deviation of the QueryOrders that lists every order whatever its time windows say. */
  deviations: { queryOrdersIgnoresWindows?: boolean };
  ordersFor(ref: string): { status: number; supplierRef: string }[];
  close(): Promise<void>;
}

const PRICE = { currency: 'USD', amount: 180 };
const iso = (ms: number): string => new Date(ms).toISOString();

function rateBlock(amount: number): Record<string, unknown> {
  const money = { currency: PRICE.currency, amount };
  return { commissionableRate: money, netRate: money, grossRate: money, respectGrossRate: false };
}

/** A rate package as section 2.2 gives it: free to cancel until 20 days ahead, 50 USD after. */
function ratePkg(id: string, now: number): Record<string, unknown> {
  const checkIn = now + 30 * 86_400_000;
  const refundableUntil = now + 20 * 86_400_000;
  return {
    ratePkgId: id,
    refundableMode: 'full',
    refundableUntil: iso(refundableUntil),
    cancelFees: [
      { until: iso(refundableUntil), fee: { currency: PRICE.currency, amount: 0 } },
      { until: iso(checkIn), fee: { currency: PRICE.currency, amount: 50 } },
    ],
    originalRoomNaming: { id: 'r-1', name: 'Double room', supplier: 7 },
    rate: rateBlock(PRICE.amount),
    totalRate: rateBlock(PRICE.amount),
    rateComment: '',
    includesPackaging: false,
    checkIn: iso(checkIn),
    checkOut: iso(checkIn + 86_400_000),
    board: { boardId: 'RO', boardName: { en: 'Room only' }, boardDesc: { en: 'Room only' } },
    tax: { total: { currency: PRICE.currency, amount: 0 }, items: [] },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString()));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function inWindow(value: number | undefined, window: unknown): boolean {
  if (!window || typeof window !== 'object') return true;
  if (value === undefined) return false;
  const { start, end } = window as { start?: string; end?: string };
  if (start && value < Date.parse(start)) return false;
  if (end && value > Date.parse(end)) return false;
  return true;
}

export async function startIndependentSupplier(values: SupplierValues = FACTS_VALUES): Promise<SpecSupplier> {
  const token = `indep-${randomUUID()}`;
  const tickets = new Set<string>([token]);
  const orders = new Map<string, Order>();
  const requests: RecordedRequest[] = [];
  const script: Record<string, Scripted[]> = {};
  const always: Record<string, Scripted | undefined> = {};
  const deviations: SpecSupplier['deviations'] = {};
  let serial = 0;

  const statusOf = (o: Order, now: number): number => {
    if (o.failed) return values.orderStatus.failed;
    if (o.cancelledAt !== undefined) return values.orderStatus.cancelled;
    return now - o.createdAt >= values.confirmAfterMs ? values.orderStatus.confirmed : values.orderStatus.confirming;
  };

  const hotelOrder = (o: Order, now: number): Record<string, unknown> => {
    const pkg = ratePkg(o.ratePkgId, o.createdAt);
    return {
      status: statusOf(o, now),
      statusRemark: '',
      checkIn: pkg.checkIn,
      checkOut: pkg.checkOut,
      nightCount: 1,
      roomCount: 1,
      bookingTime: iso(o.createdAt),
      hotelConfirmNo: o.cancelledAt === undefined ? `H${o.supplierRef}` : '',
      holder: o.holder,
      platformReferenceNo: o.platformRef,
      customerReferenceNo: o.ref,
      ...rateBlock(PRICE.amount),
      ...(o.cancelledAt !== undefined ? { cancelTime: iso(o.cancelledAt), cancelReason: 'customer' } : {}),
      supplier: 7,
      supplierReferenceNo: o.supplierRef,
      hotel: {
        hotelId: 'h-1',
        destinationId: 'd-1',
        name: { en: 'Independent Hotel' },
        rating: 4,
        address: { en: '1 Spec Street' },
        latlngCoordinator: { google: { lat: 1, lng: 2 }, gaode: { lat: 1, lng: 2 } },
        logoURL: 'https://hotel.example/logo.png',
      },
      rooms: [
        {
          ...pkg,
          roomTypeId: 'rt-1',
          roomTypeName: { en: 'Double' },
          hotelId: 'h-1',
          rates: [pkg],
          roomIndex: 0,
          guests: o.guests,
          refundInfo: [],
        },
      ],
    };
  };

  const handle = async (path: string, req: IncomingMessage, body: Record<string, unknown>): Promise<Scripted> => {
    const now = Date.now();
    const ok = (data: unknown): Scripted => ({ status: 200, body: { code: CODE.ok, msg: 'Success', data } });
    const error = (status: number, code: number, msg: string): Scripted => ({ status, body: { code, msg } });
    if (path === '/api/auth/ticket') {
      if (!body.appKey || !body.appSecret) return error(401, CODE.unauthorized, 'authentication failed');
      const ticket = `t.${randomUUID()}.jwt`;
      tickets.add(ticket);
      return ok({ ticket });
    }
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ') || !tickets.has(auth.slice(7)))
      return error(401, CODE.unauthorized, 'authentication failed');
    const operation = {
      '/api/search/checkAvail': 'checkAvail',
      '/api/trade/book': 'book',
      '/api/trade/queryOrders': 'queryOrders',
      '/api/trade/cancel': 'cancel',
    }[path];
    if (!operation) return error(404, CODE.notFound, 'not found');
    const scripted = script[operation]?.shift() ?? always[operation];
    if (scripted) return scripted;
    const scenario = /(?:^|&)scenario=([^&]*)/.exec(String(req.headers.test ?? ''))?.[1];
    const needsSession = operation !== 'queryOrders';
    if (needsSession && !req.headers['session-id']) return error(400, CODE.badRequest, 'Session-Id required');

    if (operation === 'checkAvail') {
      if (typeof body.ratePkgId !== 'string' || !body.ratePkgId)
        return error(400, CODE.badRequest, 'ratePkgId required');
      if (scenario === 'priceChanged') return { status: 200, body: { code: CODE.ari, msg: 'ARI changed' } };
      const status = scenario === 'soldOut' ? values.checkAvailStatus.unavailable : values.checkAvailStatus.available;
      return ok({
        status,
        roomRatePkg: ratePkg(body.ratePkgId, now),
        exchangeRateSnapshot: { date: iso(now).slice(0, 10), usd: {} },
      });
    }
    if (operation === 'book') {
      const { customerReferenceNo: ref, ratePkgId, holder, guests } = body;
      if (typeof ref !== 'string' || typeof ratePkgId !== 'string' || !holder || !Array.isArray(guests))
        return error(400, CODE.badRequest, 'parameter error');
      // Rule 1: a repeated reference returns the existing order, never a second one.
      let order = orders.get(ref);
      if (!order) {
        serial += 1;
        order = {
          ref,
          platformRef: `P${100000 + serial}`,
          supplierRef: `S${200000 + serial}`,
          ratePkgId,
          createdAt: now,
          failed: scenario === 'soldOut',
          holder,
          guests,
        };
        orders.set(ref, order);
      }
      return ok({ hotelOrder: hotelOrder(order, now) });
    }
    if (operation === 'queryOrders') {
      const list = (key: string): string[] | undefined =>
        Array.isArray(body[key]) ? (body[key] as string[]) : undefined;
      const refs = list('customerReferenceNos');
      const platform = list('platformReferenceNos');
      const supplierRefs = list('supplierReferenceNos');
      const statuses = Array.isArray(body.statusList) ? (body.statusList as number[]) : undefined;
      const windows = !deviations.queryOrdersIgnoresWindows;
      // Filters combine with AND (supplier-facts: inferred); orders come oldest first.
      const found = [...orders.values()].filter((o) => {
        const pkg = ratePkg(o.ratePkgId, o.createdAt);
        if (refs && !refs.includes(o.ref)) return false;
        if (platform && !platform.includes(o.platformRef)) return false;
        if (supplierRefs && !supplierRefs.includes(o.supplierRef)) return false;
        if (statuses && !statuses.includes(statusOf(o, now))) return false;
        if (!windows) return true;
        return (
          inWindow(o.createdAt, body.bookingTimeWindow) &&
          inWindow(Date.parse(String(pkg.checkIn)), body.checkInTimeWindow) &&
          inWindow(Date.parse(String(pkg.checkOut)), body.checkOutTimeWindow) &&
          inWindow(Date.parse(String(pkg.refundableUntil)), body.freeCancelTimeWindow) &&
          inWindow(o.cancelledAt, body.cancelledTimeWindow)
        );
      });
      return ok({ orders: found.slice(0, values.pageSize).map((o) => hotelOrder(o, now)) });
    }
    // Cancel (supplier-facts: {customerReferenceNo, supplierReferenceNo, reason} -> {serviceFee, status}).
    const order = orders.get(String(body.customerReferenceNo));
    if (!order || order.supplierRef !== body.supplierReferenceNo) return error(404, CODE.notFound, 'order not found');
    if (order.failed) return error(400, CODE.badRequest, 'order cannot be cancelled');
    const fee = now <= Date.parse(String(ratePkg(order.ratePkgId, order.createdAt).refundableUntil)) ? 0 : 50;
    order.cancelledAt ??= now;
    return ok({ serviceFee: { currency: PRICE.currency, amount: fee }, status: values.orderStatus.cancelled });
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const text = await readBody(req);
      let body: Record<string, unknown> = {};
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      const path = (req.url ?? '').split('?')[0]!;
      const answer =
        req.method === 'POST'
          ? await handle(path, req, body)
          : { status: 404, body: { code: CODE.notFound, msg: 'not found' } };
      requests.push({ at: Date.now(), path, headers: req.headers, body, answered: answer.status });
      res.writeHead(answer.status, {
        'Content-Type': 'application/json',
        ...(req.headers['request-id'] ? { 'Request-Id': String(req.headers['request-id']) } : {}),
        ...answer.headers,
      });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    script,
    always,
    deviations,
    ordersFor: (ref) => {
      const o = orders.get(ref);
      return o ? [{ status: statusOf(o, Date.now()), supplierRef: o.supplierRef }] : [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A 429 as supplier-facts gives its body, with a Retry-After header. */
export function rateLimited(retryAfter: string): Scripted {
  return {
    status: 429,
    headers: { 'Retry-After': retryAfter },
    body: { code: CODE.rateLimited, msg: 'quota limit exceed' },
  };
}
