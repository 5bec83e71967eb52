/**
 * Book: makes the order, idempotent by the caller's reference (a repeat returns the existing order, never a
 * second one), with the faults the `Test` header asks for before or after the order is made.
 */
import type { ServerResponse } from 'node:http';
import { BookRequest } from '../../../src/runtime/supplier/schemas';
import type { Principal } from '../auth';
import { scheduleCallback } from '../callbacks';
import { envelope, faultAnswer, hang, header, HttpAnswer, type Handled } from '../http';
import { parseTestHeader, retryAfterValue, type BookFault, type ResendFault, type TestFlags } from '../scenario';
import type { OperationHandler, SandboxState } from '../state';
import type { StoredOrder } from '../store';

type AnyBookFault = BookFault | ResendFault;

/** Answers a Book: a fault before the order is made, else the order (made or found), or a fault after it. */
export const book: OperationHandler = async (state, req, res, call) => {
  const { codes } = state;
  const principal = state.principalFor(req, 'trade');
  const sessionId = state.sessionOf(req, call);
  const body = await state.bodyOf(req, BookRequest);
  const ref = body.customerReferenceNo;
  call.customerReferenceNos = [ref];
  state.limit(principal, 'book');
  const testHeader = header(req, 'test') ?? '';
  const flags = parseTestHeader(testHeader);
  const n = (state.bookCount.get(ref) ?? 0) + 1;
  state.bookCount.set(ref, n);
  const fault = bookFault(flags, n);
  if (fault) call.fault = fault;

  const before = answerBeforeCreate(state, fault, flags, res);
  if (before) return before;
  const order = state.store.get(ref) ?? createOrder(state, { body, sessionId, principal, flags, testHeader });
  if (order.callbackUrl && !state.announced.has(ref)) {
    state.announced.set(ref, state.store.statusOf(order));
    scheduleCallback(state, order);
  }
  const after = answerAfterCreate(state, fault, res);
  if (after) return after;
  if (flags.bookDelayMs) await new Promise((resolve) => setTimeout(resolve, flags.bookDelayMs));
  return new HttpAnswer(200, envelope(codes.success, 'Success', { hotelOrder: state.present(order) }));
};

/** The fault for the reference's nth Book: `resend` on every repeat, else `book` for the first `bookTimes`. */
function bookFault(flags: TestFlags, n: number): AnyBookFault | undefined {
  return n > 1 && flags.resend
    ? flags.resend
    : flags.book && (flags.bookTimes === undefined || n <= flags.bookTimes)
      ? flags.book
      : undefined;
}

/** The answer of a Book that makes nothing: a refusal or failure the fault or the scenario asks for. */
function answerBeforeCreate(
  state: SandboxState,
  fault: AnyBookFault | undefined,
  flags: TestFlags,
  res: ServerResponse,
): Handled | Promise<Handled> | undefined {
  const { codes } = state;
  if (fault === 'unknownCode') return new HttpAnswer(200, envelope(100009998, 'resend not accepted'));
  switch (fault) {
    case '429': {
      const retryAfter = retryAfterValue(flags, state.now());
      if (retryAfter) res.setHeader('retry-after', retryAfter);
      return faultAnswer(codes, fault)!;
    }
    case '400':
    case '403':
      return faultAnswer(codes, fault)!;
    case 'creditLimit':
      return new HttpAnswer(200, envelope(codes.creditLimitExceeded, 'credit limit exceeded'));
    case '504BeforeCreate':
      return new HttpAnswer(504, envelope(codes.timeout, 'timeout'));
    case 'hangBeforeCreate':
      return hang(res);
    case 'resetBeforeCreate':
      return 'reset';
  }
  if (flags.scenario === 'serviceUnavailable' && !fault) return faultAnswer(codes, '503')!;
  if (flags.scenario === 'unknownInternalError' && !fault) return faultAnswer(codes, '500')!;
  return undefined;
}

/** A new order as the `Test` header shapes it: its outcome, when it settles and is listed, its cancel terms. */
function createOrder(
  state: SandboxState,
  from: { body: BookRequest; sessionId: string; principal: Principal; flags: TestFlags; testHeader: string },
): StoredOrder {
  const { body, sessionId, flags } = from;
  const soldOut = flags.scenario === 'soldOut';
  return state.store.create({
    customerReferenceNo: body.customerReferenceNo,
    ratePkgId: body.ratePkgId,
    sessionId,
    clientKey: from.principal.clientKey,
    outcome: soldOut ? 'failed' : flags.outcome,
    statusRemark: soldOut ? 'sold out' : flags.outcome === 'failed' ? 'supplier rejected' : undefined,
    confirmAfterMs: soldOut ? 0 : state.settleDelay(flags),
    confirmAfterQueries: soldOut ? undefined : flags.confirmAfterQueries,
    ...(flags.listAfterQueries !== undefined ? { listAfterQueries: flags.listAfterQueries } : {}),
    ...(flags.listAfterMs !== undefined ? { listAfterMs: flags.listAfterMs } : {}),
    ...(flags.lagAfterConfirmedMs !== undefined
      ? { lagAfterConfirmedMs: flags.lagAfterConfirmedMs, relistAs: flags.relistAs ?? 'unlisted' }
      : {}),
    price: state.priceFor(sessionId, body.ratePkgId),
    holder: body.holder,
    guests: body.guests,
    test: from.testHeader,
    freeCancel: flags.freeCancel,
    ...(flags.freeCancelForMs !== undefined ? { freeCancelForMs: flags.freeCancelForMs } : {}),
    ...(body.callbackUrl ? { callbackUrl: body.callbackUrl } : {}),
  });
}

/** The answer of a Book whose order was made but whose answer the fault spoils (lost, failed, garbled). */
function answerAfterCreate(
  state: SandboxState,
  fault: AnyBookFault | undefined,
  res: ServerResponse,
): Handled | Promise<Handled> | undefined {
  switch (fault) {
    case '504AfterCreate':
      return new HttpAnswer(504, envelope(state.codes.timeout, 'timeout'));
    case '500AfterCreate':
      return faultAnswer(state.codes, '500')!;
    case 'hangAfterCreate':
      return hang(res);
    case 'resetAfterCreate':
      return 'reset';
    case 'malformedAfterCreate':
      return { malformed: '{"code":0,"msg":"Success","data":{"hotelOrder":{"status":' };
    case 'unknownCodeAfterCreate':
      return new HttpAnswer(200, envelope(100009999, 'internal error'));
  }
  return undefined;
}
