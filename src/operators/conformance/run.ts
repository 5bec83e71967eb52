/**
 * A conformance run: each scenario in turn against the supplier's test environment, each ending as a clause of
 * the report; the manual clauses listed with their steps; the proposed profile built from what was observed.
 */
import type { SupplierCredentials } from '../../runtime/config/index';
import type { SupplierProfile } from '../../runtime/config/supplier-profile';
import { cleanUp, type OrderMade } from './clean-up';
import { emptyFacts } from './facts';
import { proposeProfile } from './propose';
import { manualScenarios, scenarios as allScenarios } from './scenarios/index';
import { createSession, describeError, StopRun, type Session } from './session';
import type { ClauseReport, ClauseResult, Outcome, Polling, ProfilePatch, RunContext, Scenario } from './types';

export interface ConformanceOptions {
  baseUrl: string;
  credentials: SupplierCredentials;
  /** The profile under test: the defaults, or what --profile gives. */
  profile: SupplierProfile;
  /** At least one; the first is booked and cancelled, the second (if any) is booked for the rejected Book. */
  ratePkgIds: string[];
  budget: number;
  ratePerSecond: number;
  polling: Polling;
  testFlags?: string;
  /** Differences a person accepted, by clause id, with the reason (--accept): they no longer fail the run. */
  accepted?: Record<string, string>;
  /** Each clause as it ends, for a person watching. */
  log?: (line: string) => void;
}

export interface ConformanceReport {
  supplier: { baseUrl: string };
  startedAt: string;
  finishedAt: string;
  requests: { sent: number; budget: number; ratePerSecond: number };
  /** Why the run ended before its last scenario, if it did. */
  stoppedEarly?: string;
  /** Clauses not run, or not to their end, because the run stopped early: an unfinished run is not a pass. */
  notRun: string[];
  /** Differences accepted by --accept: reported, not failing the run. */
  accepted: string[];
  summary: Record<ClauseResult, number>;
  clauses: ClauseReport[];
  /** The SUPPLIER_PROFILE that makes the product correct for what was observed (overrides of the defaults). */
  proposedProfile: ProfilePatch;
  /** References of the orders the kit made in the test environment. */
  orders: string[];
  /** Each order the kit made, with its last status, and whether it is left at the supplier. */
  ordersMade: OrderMade[];
}

export async function runConformance(
  options: ConformanceOptions,
  scenarios: Scenario[] = allScenarios,
): Promise<ConformanceReport> {
  const startedAt = new Date().toISOString();
  const session = createSession(options);
  const ctx: RunContext = {
    session,
    profile: options.profile,
    ratePkgIds: options.ratePkgIds,
    facts: emptyFacts(),
    polling: options.polling,
  };
  const clauses: ClauseReport[] = [];
  let ordersMade: OrderMade[] = [];
  try {
    for (const scenario of scenarios) {
      const clause = await runOne(scenario, ctx, session);
      options.log?.(`${clause.result.padEnd(8)} ${clause.id}: ${clause.observed}`);
      clauses.push(clause);
    }
    ordersMade = await cleanUp(ctx);
  } finally {
    await session.close();
  }
  clauses.push(...manualClauses(options.profile));
  for (const c of clauses) {
    const reason = options.accepted?.[c.id];
    // Only a difference can be accepted: a blocker is one no profile or tolerance absorbs.
    if (reason && c.result === 'differs') c.accepted = reason;
  }
  return {
    supplier: { baseUrl: options.baseUrl },
    startedAt,
    finishedAt: new Date().toISOString(),
    requests: { sent: session.sent(), budget: options.budget, ratePerSecond: options.ratePerSecond },
    ...(session.stopped() ? { stoppedEarly: session.stopped() } : {}),
    notRun: clauses.filter((c) => c.notRun).map((c) => c.id),
    accepted: clauses.filter((c) => c.accepted).map((c) => c.id),
    summary: summarize(clauses),
    clauses,
    proposedProfile: proposeProfile(
      options.profile,
      clauses.flatMap((c) => (c.proposal ? [c.proposal] : [])),
    ),
    orders: ctx.facts.references,
    ordersMade,
  };
}

async function runOne(scenario: Scenario, ctx: RunContext, session: Session): Promise<ClauseReport> {
  const base = { id: scenario.id, title: scenario.title, expected: scenario.expected(ctx.profile) };
  const stopped = session.stopped();
  if (stopped && !scenario.offline)
    return { ...base, result: 'skipped', observed: `not run: ${stopped}`, requests: [], notRun: stopped };
  const requests = session.begin();
  const outcome = await outcomeOf(scenario, ctx);
  return {
    ...base,
    result: outcome.result,
    observed: outcome.observed,
    requests,
    ...(outcome.notRun ? { notRun: outcome.notRun } : {}),
    ...(outcome.steps ? { steps: outcome.steps } : {}),
    ...(outcome.proposal ? { proposal: outcome.proposal } : {}),
  };
}

/** A scenario's outcome; a stop or an answer nobody expected ends that clause, never the run. */
async function outcomeOf(scenario: Scenario, ctx: RunContext): Promise<Outcome> {
  try {
    return await scenario.run(ctx);
  } catch (err) {
    if (err instanceof StopRun) return { result: 'skipped', observed: `stopped: ${err.message}`, notRun: err.message };
    return { result: 'differs', observed: `ended by ${describeError(err)}` };
  }
}

function manualClauses(profile: SupplierProfile): ClauseReport[] {
  return manualScenarios.map((m) => ({
    id: m.id,
    title: m.title,
    result: 'manual' as const,
    expected: m.expected(profile),
    observed: 'not run: needs the hotel or the supplier (steps below)',
    requests: [],
    steps: m.steps,
  }));
}

function summarize(clauses: ClauseReport[]): Record<ClauseResult, number> {
  const summary: Record<ClauseResult, number> = { pass: 0, differs: 0, blocker: 0, manual: 0, skipped: 0 };
  for (const c of clauses) summary[c.result]++;
  return summary;
}
