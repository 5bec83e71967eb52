/** CheckAvail: the rate package's availability and price, or the fault the `Test` header asks for. */
import type { ServerResponse } from 'node:http';
import { CheckAvailRequest, type CheckAvailData } from '../../../src/runtime/supplier/schemas';
import { driftedCheckAvail, driftRequested } from '../drift';
import { envelope, faultAnswer, hang, header, HttpAnswer, type Handled } from '../http';
import { parseTestHeader, type TestFlags } from '../scenario';
import type { CallInProgress, OperationHandler, SandboxState } from '../state';
import { basePriceFor, ratePackage, round2 } from '../store';

/** Answers a CheckAvail: a fault or scenario from the `Test` header first, else available at the session's price. */
export const checkAvail: OperationHandler = async (state, req, res, call) => {
  const { codes, profile } = state;
  const principal = state.principalFor(req, 'search');
  const sessionId = state.sessionOf(req, call);
  const { ratePkgId } = await state.bodyOf(req, CheckAvailRequest);
  state.limit(principal, 'checkAvail');
  const flags = parseTestHeader(header(req, 'test'));
  const n = (state.checkAvailCount.get(sessionId) ?? 0) + 1;
  state.checkAvailCount.set(sessionId, n);
  if (flags.checkAvail && (flags.checkAvailTimes === undefined || n <= flags.checkAvailTimes)) {
    return checkAvailFault(state, flags, res, call);
  }
  if (flags.scenario === 'serviceUnavailable') return faultAnswer(codes, '503')!;
  if (flags.scenario === 'unknownInternalError') return faultAnswer(codes, '500')!;
  if (flags.scenario === 'soldOut') {
    const soldOut = { status: profile.checkAvailStatus.unavailable, ...fallbackCandidates(state, ratePkgId) };
    return new HttpAnswer(200, envelope(codes.success, 'Success', soldOut));
  }
  if (flags.scenario === 'priceChanged' && !state.changedPrice.has(`${sessionId}|${ratePkgId}`)) {
    return changePrice(state, `${sessionId}|${ratePkgId}`, ratePkgId, flags, call);
  }
  const data: CheckAvailData = {
    status: profile.checkAvailStatus.available,
    roomRatePkg: ratePackage(ratePkgId, state.priceFor(sessionId, ratePkgId), state.now()),
    exchangeRateSnapshot: {
      date: new Date(state.now()).toISOString().slice(0, 10),
      usd: { EUR: 0.92, GBP: 0.79, CNY: 7.1 },
    },
    // A price that moved comes with what other suppliers offer at the price first seen.
    ...(state.changedPrice.has(`${sessionId}|${ratePkgId}`) ? fallbackCandidates(state, ratePkgId) : {}),
  };
  const drifting = state.options.drift || driftRequested(header(req, 'test'));
  return new HttpAnswer(200, envelope(codes.success, 'Success', drifting ? driftedCheckAvail(data) : data));
};

/** The CheckAvail fault the `Test` header asks for (its first `checkAvailTimes` checks of the session). */
function checkAvailFault(
  state: SandboxState,
  flags: TestFlags,
  res: ServerResponse,
  call: CallInProgress,
): Promise<Handled> | Handled {
  const fault = flags.checkAvail!;
  call.fault = fault;
  if (fault === 'hang') return hang(res);
  if (fault === 'reset') return 'reset';
  if (fault === 'malformed') return { malformed: '<html>502 Bad Gateway</html>' };
  if (fault === 'ariChanged') return new HttpAnswer(200, envelope(state.codes.ariChanged, 'ARI changed'));
  return faultAnswer(state.codes, fault, flags.faultMsg)!;
}

/** `scenario=priceChanged`: the session's price moves by `priceDeltaPercent` once, answered "ARI changed". */
function changePrice(
  state: SandboxState,
  key: string,
  ratePkgId: string,
  flags: TestFlags,
  call: CallInProgress,
): HttpAnswer {
  const base = basePriceFor(ratePkgId);
  state.changedPrice.set(key, {
    currency: base.currency,
    amount: round2(base.amount * (1 + flags.priceDeltaPercent / 100)),
  });
  call.fault = 'ariChanged';
  return new HttpAnswer(200, envelope(state.codes.ariChanged, 'ARI changed'));
}

/**
 * The fallback ("R2") candidates the sandbox offers with a sold-out or re-priced package: two packages of other
 * suppliers, under the field the sandbox's profile names (the spec shows no form).
 */
function fallbackCandidates(state: SandboxState, ratePkgId: string): Record<string, unknown> {
  const offers = [
    { ratePkgId: `${ratePkgId}-r2-a`, supplier: 2, name: 'Double Room (partner hotel)' },
    { ratePkgId: `${ratePkgId}-r2-b`, supplier: 3, name: 'Twin Room (partner hotel)' },
  ].map(({ ratePkgId: id, supplier, name }) => {
    // Each at the price the sandbox books it for, so a booking of it expecting that price goes through.
    const price = basePriceFor(id);
    return {
      ratePkgId: id,
      originalRoomNaming: { id: 'alt', name, supplier },
      totalRate: { grossRate: price, netRate: { currency: price.currency, amount: round2(price.amount * 0.9) } },
    };
  });
  return { [state.profile.fallbackCandidatesField]: offers };
}
