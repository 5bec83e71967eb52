/**
 * The supplier profile: every value the interface spec leaves "not shown", in one place.
 *
 * Defaults are what a live supplier with the same interface documents (shared/spec/supplier-facts.md).
 * Another supplier, or a later version, may differ: each value can be overridden by configuration
 * (see src/runtime/config), never by editing code. Every level is strict: an unknown key is an error, not a value
 * silently left at its default (a misspelt status code would otherwise decide bookings on the default).
 */
import { z } from 'zod';

const Code = z.number().int();

export const SupplierProfile = z.strictObject({
  /** Operation paths, relative to the base URL. The Ticket path is not in the spec. */
  paths: z
    .strictObject({
      ticket: z.string().default('/api/auth/ticket'),
      checkAvail: z.string().default('/api/search/checkAvail'),
      book: z.string().default('/api/trade/book'),
      queryOrders: z.string().default('/api/trade/queryOrders'),
      /** Cancel (supplier-facts; the interface spec lists the operation without its path). */
      cancel: z.string().default('/api/trade/cancel'),
    })
    .default({
      ticket: '/api/auth/ticket',
      checkAvail: '/api/search/checkAvail',
      book: '/api/trade/book',
      queryOrders: '/api/trade/queryOrders',
      cancel: '/api/trade/cancel',
    }),
  /** Envelope `code` values. Two business errors arrive with HTTP 200, so `code` is always read. */
  codes: z
    .strictObject({
      success: Code.default(0),
      badRequest: Code.default(100000400),
      unauthorized: Code.default(100000401),
      forbidden: Code.default(100000403),
      notFound: Code.default(100000404),
      rateLimited: Code.default(100000429),
      systemError: Code.default(100000500),
      timeout: Code.default(100000504),
      duplicate: Code.default(100001003),
      dependencyFailure: Code.default(100001004),
      /** QueryOrders asked for more than the supplier lists in one answer: asked again in smaller parts, never "none". */
      pageSizeExceeded: Code.default(100001005),
      ariChanged: Code.default(100001111),
      creditLimitExceeded: Code.default(100001112),
    })
    .default({
      success: 0,
      badRequest: 100000400,
      unauthorized: 100000401,
      forbidden: 100000403,
      notFound: 100000404,
      rateLimited: 100000429,
      systemError: 100000500,
      timeout: 100000504,
      duplicate: 100001003,
      dependencyFailure: 100001004,
      pageSizeExceeded: 100001005,
      ariChanged: 100001111,
      creditLimitExceeded: 100001112,
    }),
  /**
   * Book answers that prove no order was made, so the booking may end `failed` (or Book be sent again)
   * without looking the order up: these HTTP statuses whatever the body says, and these envelope codes
   * (names of `codes` above) on an HTTP 200. Every other ending of Book, an unknown code included, may
   * have made an order and is verified with QueryOrders. Add a code here only when the supplier
   * documents that it rolls the order back.
   */
  book: z
    .strictObject({
      surelyNotMadeStatuses: z.array(z.number().int()).default([400, 401, 403]),
      surelyNotMadeCodes: z
        .array(z.enum(['badRequest', 'unauthorized', 'forbidden', 'creditLimitExceeded', 'notFound', 'duplicate']))
        .default(['badRequest', 'unauthorized', 'forbidden', 'creditLimitExceeded']),
    })
    .default({
      surelyNotMadeStatuses: [400, 401, 403],
      surelyNotMadeCodes: ['badRequest', 'unauthorized', 'forbidden', 'creditLimitExceeded'],
    }),
  /**
   * Cancel answers that prove that send cancelled nothing: these HTTP statuses whatever the body says, and these
   * envelope codes (names of `codes`) on an HTTP 200. Even these count as refusals only while no earlier Cancel of
   * the order may have acted: after one, "cannot be cancelled" may mean "already cancelled", and QueryOrders decides
   * (src/runtime/rules/cancel.ts). Everything else, an unknown code included, may have cancelled.
   */
  cancel: z
    .strictObject({
      surelyNotDoneStatuses: z.array(z.number().int()).default([400, 401, 403, 404]),
      surelyNotDoneCodes: z
        .array(z.enum(['badRequest', 'unauthorized', 'forbidden', 'notFound']))
        .default(['badRequest', 'unauthorized', 'forbidden', 'notFound']),
    })
    .default({
      surelyNotDoneStatuses: [400, 401, 403, 404],
      surelyNotDoneCodes: ['badRequest', 'unauthorized', 'forbidden', 'notFound'],
    }),
  /**
   * QueryOrders answers are capped: supplier-facts lists code 100001005 "page size exceeded", and neither it nor the
   * spec says how many orders one answer lists, or how to ask for the next page. `pageSize` is the most orders we
   * believe one answer lists. An answer listing that many (or more) may have been cut short, so it is never read as
   * complete: the QueryOrders coalescer sends fewer references than this and asks again in smaller batches before it
   * calls a reference not found, and the sweep lists the window again in halves. 20 is conservative on purpose, at
   * the low end of the pages paged APIs list when a request names no size, because the two mistakes cost unlike
   * things: too low costs requests (smaller batches, sweep slices cut finer, and a minute with this many bookings
   * or a day with this many check-ins a failed listing a person is told of); too high reads a cut answer as
   * complete, which calls a booking's order not found and lets Book be sent again. Set it to the page the supplier
   * states.
   */
  queryOrders: z.strictObject({ pageSize: z.number().int().min(2).default(20) }).default({ pageSize: 20 }),
  /** Order `status` values. */
  orderStatus: z
    .strictObject({
      unknown: Code.default(0),
      confirming: Code.default(1),
      confirmed: Code.default(2),
      cancelled: Code.default(3),
      failed: Code.default(4),
      cancelFailed: Code.default(5),
    })
    .default({ unknown: 0, confirming: 1, confirmed: 2, cancelled: 3, failed: 4, cancelFailed: 5 }),
  /** CheckAvail `data.status` values. */
  checkAvailStatus: z
    .strictObject({ available: Code.default(1), unavailable: Code.default(2) })
    .default({ available: 1, unavailable: 2 }),
  /** Ticket: idle ttl asked for, and how long before expiry a ticket is renewed. */
  ticket: z
    .strictObject({
      ttlSeconds: z
        .number()
        .int()
        .positive()
        .default(24 * 3600),
      renewBeforeSeconds: z.number().int().nonnegative().default(300),
    })
    .default({ ttlSeconds: 24 * 3600, renewBeforeSeconds: 300 }),
  /**
   * Whether a request's `context.test` is sent as the supplier's `Test` header. supplier-facts documents the header
   * as test flags of its test environment (`scenario=soldOut`, ...), which is where these defaults were seen, so the
   * default sends it. An account that books for real sets `refuse`: a booking or an order input carrying test flags
   * is then refused at its first step, nothing sent, since a caller's flags must never steer a live supplier.
   */
  testHeader: z.enum(['send', 'refuse']).default('send'),
  /**
   * The field of CheckAvail's `data` that lists fallback ("R2") candidates, packages of alternative suppliers (the
   * spec: returned, representation not shown; the live supplier's documentation does not name it either, so the
   * default is the sandbox's name). Read tolerantly: a list of packages, each kept when it has a `ratePkgId`.
   */
  fallbackCandidatesField: z.string().min(1).default('r2Candidates'),
  /**
   * The longest a supplier's Retry-After is waited: a 429 asking for a day (or a far-future date) would hold a Book
   * or a Cancel that long, deaf and past every window. Longer hints are cut to this (default 600 s, the recovery
   * schedule's longest wait); the booking's and the cancellation's own windows cut them further.
   */
  retryAfterCeilingSeconds: z.number().int().positive().max(3600).default(600),
  /** Requests per second per application key. */
  rateLimits: z
    .strictObject({
      overall: z.number().positive().default(100),
      checkAvail: z.number().positive().default(10),
      book: z.number().positive().default(10),
      queryOrders: z.number().positive().default(50),
      /** Cancel has no documented limit of its own: unset, it counts against `overall` only. */
      cancel: z.number().positive().optional(),
    })
    .default({ overall: 100, checkAvail: 10, book: 10, queryOrders: 50 }),
  /** Per-call client timeouts. Book is long: the supplier answers slowly while it books upstream. */
  timeoutsMs: z
    .strictObject({
      ticket: z.number().int().positive().default(10_000),
      checkAvail: z.number().int().positive().default(15_000),
      book: z.number().int().positive().default(90_000),
      queryOrders: z.number().int().positive().default(15_000),
      cancel: z.number().int().positive().default(15_000),
    })
    .default({ ticket: 10_000, checkAvail: 15_000, book: 90_000, queryOrders: 15_000, cancel: 15_000 }),
  /**
   * Order-status callbacks (supplier-facts: Book takes a callback URL, field name inferred; the payload and
   * its signing are not documented). How the receiver (src/servers/callbacks) verifies one: `hmac-sha256`, a hex
   * HMAC of the raw body in `header` (optionally prefixed `sha256=`), or `shared-secret`, the secret itself
   * in `header`; both sign the body only, so a captured callback verifies forever. `hmac-sha256-timestamp`
   * is replay-proof: a hex HMAC of `<timestamp>.<raw body>` in `header`, the timestamp (unix seconds) in
   * `timestampHeader`, refused when more than `toleranceSeconds` away from the receiver's clock, and the
   * same signed callback is passed on once within that window. The secret is never here: it is
   * SUPPLIER_CALLBACK_SECRET (src/runtime/config).
   */
  callbacks: z
    .strictObject({
      /** The Book request field that carries the callback URL. */
      urlField: z.string().min(1).default('callbackUrl'),
      verification: z.enum(['hmac-sha256', 'shared-secret', 'hmac-sha256-timestamp']).default('hmac-sha256'),
      header: z.string().min(1).default('x-signature'),
      /** `hmac-sha256-timestamp` only: the header with the signed timestamp, unix seconds. */
      timestampHeader: z.string().min(1).default('X-Signature-Timestamp'),
      /** `hmac-sha256-timestamp` only: how far the timestamp may be from now, either way. */
      toleranceSeconds: z.number().int().positive().max(3600).default(300),
    })
    .default({
      urlField: 'callbackUrl',
      verification: 'hmac-sha256',
      header: 'x-signature',
      timestampHeader: 'X-Signature-Timestamp',
      toleranceSeconds: 300,
    }),
});
export type SupplierProfile = z.infer<typeof SupplierProfile>;

/** The documented defaults. */
export const defaultSupplierProfile: SupplierProfile = SupplierProfile.parse({});

/** Order states after which the status never changes again. */
export function isTerminalOrderStatus(profile: SupplierProfile, status: number): boolean {
  const s = profile.orderStatus;
  return [s.confirmed, s.cancelled, s.failed, s.cancelFailed].includes(status);
}
