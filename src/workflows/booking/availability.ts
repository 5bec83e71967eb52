/**
 * Step 1, cancellable (nothing is booked yet): CheckAvail, and the price judged against what the user saw
 * and the price-change policy, asking a person through the `approvePriceChange` update when it says so.
 */
import { ActivityFailure, ApplicationFailure, condition, isCancellation, TemporalFailure } from '@temporalio/workflow';
import type { CheckAvailOutcome } from '../../activities/types';
import type { BookingOutcome, FallbackCandidate } from '../../api/contract/index';
import type { Money } from '../../api/values/index';
import { judgePrice } from '../../runtime/rules/price';
import { checkAvail } from './proxies';
import type { FirstCheck } from './input';
import { fmt, type BookingRun } from './run';

/** How often an ARI-changed answer without a package leads to another CheckAvail. */
const MAX_ARI_RECHECKS = 3;

/** The price accepted for booking, or the outcome that ends the booking here. */
export type Availability = { kind: 'accepted'; price?: Money } | { kind: 'ended'; outcome: BookingOutcome };

/** `first`: the first CheckAvail's ending when the input check already made it (see ./input.ts). */
export async function checkAvailabilityAndPrice(run: BookingRun, first?: FirstCheck): Promise<Availability> {
  run.setStage('checking-availability');
  try {
    const outcome = await currentAvailability(run, first);
    // What the supplier offers instead travels in the outcome, for the caller to book under a new reference.
    const candidates = outcome.kind !== 'ari-changed' && outcome.candidates ? { candidates: outcome.candidates } : {};
    if (outcome.kind === 'unavailable') return ended({ kind: 'unavailable', ...candidates });
    if (outcome.kind === 'ari-changed' && !outcome.price) {
      return ended({
        kind: 'failed',
        reason: `Price changed and the current price could not be read after ${MAX_ARI_RECHECKS + 1} checks`,
        errorType: 'SupplierAriChanged',
        cancelRequested: run.state.cancelRequested,
      });
    }
    return await judge(run, outcome.price, candidates);
  } catch (err) {
    if (isCancellation(err)) return ended({ kind: 'cancelled' });
    // Retries used up, whatever the last failure was (a supplier error, or the activity's own timeout):
    // nothing was booked, and the caller gets an outcome rather than a failed workflow. An activity's
    // failure comes wrapped in an ActivityFailure; CheckAvail's, a local activity's, may come as is.
    const failure = err instanceof ActivityFailure ? err.cause : err instanceof TemporalFailure ? err : undefined;
    if (failure !== undefined || err instanceof ActivityFailure) {
      return ended({
        kind: 'failed',
        reason: `CheckAvail failed: ${failure?.message ?? (err as Error).message}`,
        errorType:
          failure instanceof ApplicationFailure ? (failure.type ?? undefined) : (failure?.name ?? 'ActivityFailure'),
        cancelRequested: run.state.cancelRequested,
      });
    }
    throw err;
  }
}

/** CheckAvail, asked again (a few times) while it says the price changed without giving the new one. */
async function currentAvailability(run: BookingRun, first: FirstCheck | undefined): Promise<CheckAvailOutcome> {
  const { supplier } = run.state;
  const input = { ratePkgId: run.request.ratePkgId, context: run.context, ...(supplier ? { supplier } : {}) };
  if (first?.kind === 'failed') throw first.error;
  let outcome = first ? first.outcome : await checkAvail(input);
  for (let i = 0; outcome.kind === 'ari-changed' && !outcome.price && i < MAX_ARI_RECHECKS; i++) {
    outcome = await checkAvail(input);
  }
  return outcome;
}

/** The price rule's verdict; `ask` waits for a person's answer, up to the policy's approval timeout. */
async function judge(
  run: BookingRun,
  current: Money | undefined,
  candidates: { candidates?: FallbackCandidate[] },
): Promise<Availability> {
  const { request, state } = run;
  state.currentPrice = current;
  const verdict = judgePrice(request.expectedPrice, current, request.priceChangePolicy);
  const rejected = (reason: 'policy' | 'refused' | 'approval-timeout') =>
    ended({
      kind: 'price-rejected',
      expectedPrice: request.expectedPrice!,
      currentPrice: current,
      reason,
      ...candidates,
    });
  if (verdict === 'reject') return rejected('policy');
  if (verdict === 'ask') {
    run.pendingPrice = current;
    run.setStage(
      'awaiting-price-approval',
      `Price changed from ${fmt(request.expectedPrice)} to ${fmt(current)}: awaiting approval`,
    );
    const timeoutSeconds = request.priceChangePolicy?.approvalTimeoutSeconds ?? 900;
    const answered = await condition(() => run.approval !== undefined, `${timeoutSeconds} seconds`, {
      summary: 'Awaiting price approval',
    });
    if (!answered || !run.approval?.approved) return rejected(answered ? 'refused' : 'approval-timeout');
  }
  state.acceptedPrice = current;
  return { kind: 'accepted', price: current };
}

function ended(outcome: BookingOutcome): Availability {
  return { kind: 'ended', outcome };
}
