/**
 * CheckAvail: the status of an available package and its price, the sold-out and price-changed answers (asked
 * for with the `Test` header's documented scenarios), and the refusal of a bad token.
 */
import { priceOf } from '../../../activities/shared';
import type { CheckAvailData } from '../../../runtime/supplier/schemas';
import { describeError } from '../session';
import type { Outcome, RunContext, Scenario } from '../types';
import { attempt, unknownCodeOn200 } from './common';

const firstPackage = (ctx: Pick<RunContext, 'ratePkgIds'>) => ctx.ratePkgIds[0]!;

export const checkAvailAvailable: Scenario = {
  id: 'checkAvail.available',
  title: 'CheckAvail: status and price of an available package',
  plan: (ctx) => [`CheckAvail ${firstPackage(ctx)}`],
  expected: (p) =>
    `code ${p.codes.success} with data.status ${p.checkAvailStatus.available} (available) and a total price ` +
    `(roomRatePkg.totalRate.grossRate, else netRate: the price the product compares)`,
  async run(ctx) {
    const got = await attempt(() =>
      ctx.session.supplier.checkAvail({ ratePkgId: firstPackage(ctx) }, ctx.session.context()),
    );
    if (!got.ok) {
      return {
        result: 'differs',
        observed: `${describeError(got.error)}: is the package bookable in the test environment?`,
      };
    }
    const data = got.value;
    if (data.roomRatePkg) ctx.facts.packages.push(data.roomRatePkg);
    ctx.facts.checkAvail.available = data.status;
    return judgeAvailable(ctx, data);
  },
};

function judgeAvailable(ctx: RunContext, data: CheckAvailData): Outcome {
  const price = priceOf(data.roomRatePkg);
  const priceText = price ? `${price.amount} ${price.currency}` : 'no total price';
  if (!price) {
    return {
      result: 'blocker',
      observed: `status ${data.status}, ${priceText}: the price check has nothing to compare, and no profile supplies a price`,
    };
  }
  if (data.status === ctx.profile.checkAvailStatus.available)
    return { result: 'pass', observed: `status ${data.status}, ${priceText}` };
  // The operator chose a bookable package, so the status it came with is the supplier's "available".
  return {
    result: 'differs',
    observed: `status ${data.status} for a bookable package (${priceText}): the product would read it as not available`,
    proposal: { checkAvailStatus: { available: data.status } },
  };
}

export const checkAvailUnavailable: Scenario = {
  id: 'checkAvail.unavailable',
  title: 'CheckAvail: status of a sold-out package',
  plan: (ctx) => [`CheckAvail ${firstPackage(ctx)} with Test: scenario=soldOut`],
  expected: (p) => `code ${p.codes.success} with data.status ${p.checkAvailStatus.unavailable} (unavailable)`,
  async run(ctx) {
    const got = await attempt(() =>
      ctx.session.supplier.checkAvail({ ratePkgId: firstPackage(ctx) }, ctx.session.context('scenario=soldOut')),
    );
    if (!got.ok)
      return { result: 'differs', observed: `${describeError(got.error)} instead of an answer with a status` };
    const { status } = got.value;
    ctx.facts.checkAvail.unavailable = status;
    if (status === ctx.profile.checkAvailStatus.unavailable) return { result: 'pass', observed: `status ${status}` };
    if (status === ctx.facts.checkAvail.available) {
      return {
        result: 'manual',
        observed: `status ${status}, as available: the test environment does not take Test: scenario=soldOut`,
        steps: [
          'Ask the supplier for a rate package that is sold out in the test environment (or for the test flag that makes one).',
          'Send CheckAvail for it and note data.status; the profile expects it in checkAvailStatus.unavailable.',
        ],
      };
    }
    return {
      result: 'differs',
      observed: `status ${status} for a sold-out package`,
      proposal: { checkAvailStatus: { unavailable: status } },
    };
  },
};

export const checkAvailPriceChanged: Scenario = {
  id: 'checkAvail.priceChanged',
  title: 'CheckAvail: the answer when price or inventory changed (ARI changed)',
  plan: (ctx) => [`CheckAvail ${firstPackage(ctx)} with Test: scenario=priceChanged`],
  expected: (p) => `HTTP 200 with code ${p.codes.ariChanged} (ARI changed), no data`,
  async run(ctx) {
    const got = await attempt(() =>
      ctx.session.supplier.checkAvail({ ratePkgId: firstPackage(ctx) }, ctx.session.context('scenario=priceChanged')),
    );
    if (!got.ok) {
      if (got.error.type === 'SupplierAriChanged') return { result: 'pass', observed: describeError(got.error) };
      const code = unknownCodeOn200(got.error);
      if (code !== undefined) {
        return { result: 'differs', observed: `HTTP 200 with code ${code}`, proposal: { codes: { ariChanged: code } } };
      }
      return { result: 'differs', observed: describeError(got.error) };
    }
    const before = ctx.facts.packages[0] ? priceOf(ctx.facts.packages[0]) : undefined;
    const now = priceOf(got.value.roomRatePkg);
    if (before && now && (now.amount !== before.amount || now.currency !== before.currency)) {
      return {
        result: 'differs',
        observed: `success with the new price ${now.amount} ${now.currency} in data: tolerated, the product compares every price it is given`,
      };
    }
    return {
      result: 'manual',
      observed: 'success at the same price: the test environment does not take Test: scenario=priceChanged',
      steps: [
        'Ask the supplier how to make a package change price between HotelRates and CheckAvail in the test environment.',
        'Send CheckAvail for it and note the envelope code; the profile expects codes.ariChanged.',
      ],
    };
  },
};

export const authRefused: Scenario = {
  id: 'auth.invalidToken',
  title: 'A request with an invalid token is refused as not authenticated',
  plan: (ctx) => [
    `CheckAvail ${firstPackage(ctx)} with an invalid bearer token (sent twice: the client re-issues once on 401)`,
  ],
  expected: (p) => `HTTP 401 (any code), or HTTP 200 with code ${p.codes.unauthorized}: proof that nothing was done`,
  async run(ctx) {
    const client = ctx.session.withToken('conformance-invalid-token');
    const got = await attempt(() => client.checkAvail({ ratePkgId: firstPackage(ctx) }, ctx.session.context()));
    if (got.ok) return { result: 'differs', observed: 'answered success to an invalid token' };
    const { httpStatus, code } = got.error.details;
    if (httpStatus === 401 || (httpStatus === 200 && code === ctx.profile.codes.unauthorized)) {
      return { result: 'pass', observed: describeError(got.error) };
    }
    const unknown = unknownCodeOn200(got.error);
    if (unknown !== undefined) {
      return {
        result: 'differs',
        observed: `HTTP 200 with code ${unknown}`,
        proposal: { codes: { unauthorized: unknown } },
      };
    }
    return { result: 'differs', observed: describeError(got.error) };
  },
};
