/**
 * Order-status callbacks, for orders booked with a callback URL: sent when the status changes (checked when a
 * delay settles it, after QueryOrders, a Cancel or a forced status), retried with backoff while the receiver
 * does not answer 2xx (1, 2, 4, 8 s; 5 attempts). Book's Test header may ask for `callbacks=duplicate` (each
 * sent twice) or `callbacks=reorder` (a stale Confirming one sent after the settled one).
 */
import { createHmac } from 'node:crypto';
import type { SandboxState } from './state';
import type { StoredOrder } from './store';

/** Checks the order's status again when its settle delay, or its Cancel's, has passed. */
export function scheduleCallback(state: SandboxState, order: StoredOrder): void {
  if (!order.callbackUrl) return;
  const now = state.now;
  if (order.confirmAfterQueries === undefined)
    state.later(order.createdAt + order.confirmAfterMs - now() + 5, () => announce(state, order));
  if (order.cancel && order.cancel.afterQueries === undefined) {
    state.later(order.cancel.requestedAt + order.cancel.afterMs - now() + 5, () => announce(state, order));
  }
}

/** Sends a callback when the order's status differs from the one last announced (twice, or stale, if asked). */
export function announce(state: SandboxState, order: StoredOrder): void {
  if (!order.callbackUrl) return;
  const status = state.store.statusOf(order);
  if (state.announced.get(order.customerReferenceNo) === status) return;
  const before = state.announced.get(order.customerReferenceNo);
  state.announced.set(order.customerReferenceNo, status);
  const mode = new URLSearchParams(order.test).get('callbacks');
  deliver(state, order, status, 1);
  if (mode === 'duplicate') state.later(50, () => deliver(state, order, status, 1));
  if (mode === 'reorder')
    state.later(50, () => deliver(state, order, before ?? state.profile.orderStatus.confirming, 1));
}

/** One delivery attempt; the next is scheduled while the receiver has not answered 2xx, up to 5. */
function deliver(state: SandboxState, order: StoredOrder, status: number, attempt: number): void {
  const body = JSON.stringify({
    customerReferenceNo: order.customerReferenceNo,
    platformReferenceNo: order.platformReferenceNo,
    supplierReferenceNo: order.supplierReferenceNo,
    status,
    sentAt: new Date(state.now()).toISOString(),
  });
  const headers = { 'content-type': 'application/json', ...signature(state, body) };
  const done = (httpStatus: number) => {
    state.callbackAttempts.push({
      at: new Date(state.now()).toISOString(),
      customerReferenceNo: order.customerReferenceNo,
      status,
      attempt,
      httpStatus,
    });
    if ((httpStatus < 200 || httpStatus >= 300) && attempt < 5 && !state.closed) {
      state.later(1000 * 2 ** (attempt - 1), () => deliver(state, order, status, attempt + 1));
    }
  };
  fetch(order.callbackUrl!, { method: 'POST', headers, body, signal: AbortSignal.timeout(5_000) }).then(
    async (res) => {
      await res.arrayBuffer().catch(() => undefined);
      done(res.status);
    },
    () => done(0),
  );
}

/** The headers that let the receiver verify a callback, as the profile's `callbacks` says; none without a secret. */
function signature(state: SandboxState, body: string): Record<string, string> {
  const secret = state.options.callbackSecret;
  if (!secret) return {};
  const { verification, header, timestampHeader } = state.profile.callbacks;
  if (verification === 'hmac-sha256-timestamp') {
    // Signed with the time it is sent: a replay-proof scheme (the receiver refuses a stale timestamp).
    const timestamp = String(Math.floor(state.now() / 1000));
    return {
      [timestampHeader]: timestamp,
      [header]: createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex'),
    };
  }
  return {
    [header]:
      verification === 'hmac-sha256' ? `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` : secret,
  };
}
