/**
 * The conformance kit's vocabulary: a clause of the supplier profile, the scenario that checks it, and what a
 * run found. A scenario per clause, each saying what the profile expects and what came, so a person can sign a
 * profile off from the report alone.
 */
import type { SupplierProfile } from '../../runtime/config/supplier-profile';
import type { DriftReporter } from '../../runtime/supplier/drift';
import type { CallContext, SupplierClient } from '../../runtime/supplier/interface';
import type { CancelData, HotelOrder, RoomRatePkg } from '../../runtime/supplier/schemas';

/**
 * `pass`: the supplier does what the profile expects; `differs`: it does not, and either a proposed profile
 * absorbs it or the product tolerates it (said in `observed`); `blocker`: a difference no profile can absorb;
 * `manual`: needs a hotel's or the supplier's help (see `steps`); `skipped`: not run (a prerequisite failed, the
 * budget ran out, or the supplier rate limited the run).
 */
export type ClauseResult = 'pass' | 'differs' | 'blocker' | 'manual' | 'skipped';

/** One request a clause sent, as a person reads it: no token, no guest data. */
export interface RequestRecord {
  operation: string;
  /** What was asked, e.g. `Book pkg-1 as ref 6b0e…`. */
  sent: string;
  /** How it ended: `HTTP 200, code 0` or the error type with its HTTP status and envelope code. */
  answer: string;
  /** When it was sent (ISO, the kit's clock), and the headers a supplier finds it by in its logs. */
  at: string;
  /** The Request-Id of each HTTP request the call sent (two where a 401 made the client send again). */
  requestIds: string[];
  /** The Session-Id sent (CheckAvail, Book, Cancel; QueryOrders carries none). */
  sessionId?: string;
}

/** A part of SUPPLIER_PROFILE (overrides, deep): what one clause proposes. */
export type ProfilePatch = { [key: string]: unknown };

export interface ClauseReport {
  id: string;
  title: string;
  result: ClauseResult;
  expected: string;
  observed: string;
  requests: RequestRecord[];
  /** Manual clauses: what a person does with the hotel or supplier, and what to look for. */
  steps?: string[];
  /** The profile change this clause's observation calls for, already part of the report's proposedProfile. */
  proposal?: ProfilePatch;
  /** Why the clause was not run, or not to its end, when the run stopped early (budget, rate limit): not a pass. */
  notRun?: string;
  /** A difference a person accepted (--accept): why it is tolerated. It no longer fails the run. */
  accepted?: string;
}

/** What a scenario found; the runner adds id, title, expected and the requests. */
export interface Outcome {
  result: ClauseResult;
  observed: string;
  proposal?: ProfilePatch;
  /** When the scenario turns manual (the supplier ignored a test flag): the steps. */
  steps?: string[];
  /** The run stopped while this clause ran. */
  notRun?: string;
}

/** What every scenario receives. */
export interface RunContext {
  session: Session;
  /** The profile under test (the defaults, or --profile). Scenarios read it, never change it. */
  profile: SupplierProfile;
  /** Rate packages to book, in the order given: the first for the main order, the second (if any) for the rejected Book. */
  ratePkgIds: string[];
  facts: Facts;
  polling: Polling;
}

/** How orders are followed with QueryOrders while they settle. */
export interface Polling {
  /** The first wait after the answer; each next wait doubles, up to maxIntervalMs. */
  firstIntervalMs: number;
  maxIntervalMs: number;
  /** How long an order may take to be listed and to settle before the clause says so. */
  settleTimeoutMs: number;
  /** How long a status the profile does not call final must hold before it is taken as where the order settled. */
  stableAfterMs: number;
}

/** A clause the kit checks by itself. */
export interface Scenario {
  id: string;
  title: string;
  /** Sends nothing, only reads what the clauses before it saw: runs even after the run stopped early. */
  offline?: true;
  /** The requests it sends, for the plan printed before anything is sent. */
  plan: (ctx: Pick<RunContext, 'ratePkgIds'>) => string[];
  /** What the profile expects, in a sentence. */
  expected: (profile: SupplierProfile) => string;
  run: (ctx: RunContext) => Promise<Outcome>;
}

/** A clause that needs a hotel's or the supplier's help: listed with its steps, never run. */
export interface ManualScenario {
  id: string;
  title: string;
  expected: (profile: SupplierProfile) => string;
  steps: string[];
}

/** The order the kit booked and follows through cancellation. */
export interface MainOrder {
  customerReferenceNo: string;
  ratePkgId: string;
  /** Book's answer; undefined when Book answered an error and the order is looked for with QueryOrders. */
  booked?: HotelOrder;
  bookedAtMs: number;
  /** The order as last listed, once settled. */
  settled?: HotelOrder;
  /** Statuses in the order seen: Book's answer, then each new one QueryOrders listed. */
  statuses: number[];
  /** Milliseconds from Book's answer to the first QueryOrders that listed it; undefined while never listed. */
  listedAfterMs?: number;
}

/** An order listed under a reference, unreadable to the product: what is wrong, and its status as sent. */
export interface UnreadableSeen {
  issues: string[];
  /** The status as the supplier sent it (JSON), when a read as sent found it. */
  statusAsSent?: string;
  supplierReferenceNo?: string;
}

export interface Facts {
  main?: MainOrder;
  /** The Cancel of the main order: its answer, the fee the product's rule quoted before it, the statuses after. */
  cancel?: {
    answer?: CancelData;
    quotedFee?: { amount: number; currency: string } | null;
    statuses: number[];
    settled?: HotelOrder;
  };
  /** A Cancel with a wrong supplier reference changed the order. */
  cancelledByWrongReference?: boolean;
  /** The status an order rejected at Book ended in, when one was made. */
  rejectedStatus?: number;
  /** CheckAvail statuses seen: the available package's, and the sold-out scenario's. */
  checkAvail: { available?: number; unavailable?: number };
  /** Every order and rate package read, for the field and timestamp clauses. */
  orders: HotelOrder[];
  packages: RoomRatePkg[];
  /** The most orders one QueryOrders answer listed, for the page-size clause. */
  largestListing?: number;
  /** Time windows a QueryOrders answer showed the supplier does not apply (listed for a window that excludes it). */
  windowsIgnored: string[];
  /** The main order once settled, as sent (nulls included: the product's reading drops them), for the type clause. */
  rawOrders: Record<string, unknown>[];
  /** Orders listed under a reference the kit sent that the product could not read: orders that exist all the same. */
  unreadable: Record<string, UnreadableSeen>;
  /** References of orders the kit made, for the report (a test environment's orders to clean up). */
  references: string[];
}

/** An order as the supplier sent it: the fields the kit reports and cleans up with, whatever their types. */
export interface OrderAsSent {
  status: unknown;
  supplierReferenceNo?: unknown;
  /** The whole order as sent, nulls included. */
  raw: Record<string, unknown>;
}

/** The operations a scenario calls, each recorded against the clause running. */
export interface Session {
  supplier: SupplierClient;
  /** A client that sends `token` as is (an invalid one, for the refusal clause), on the same budget and record. */
  withToken(token: string): SupplierClient;
  /** A fresh `Session-Id` and the kit's Trace-Id, with `test` flags merged with the run's. */
  context(test?: string): CallContext;
  /** Informational fields that drifted from the spec's shapes, as `operation path`, over the whole run. */
  drift: DriftReporter;
  /** Starts recording for a clause; returns its records so far (the same array, filled as it runs). */
  begin(): RequestRecord[];
  /**
   * QueryOrders by one reference, read as sent (no schema): the orders listed under it with their status and
   * supplier reference whatever their types, for an order the product's reading could not take.
   */
  ordersAsSent(ref: string): Promise<OrderAsSent[]>;
  /** Requests sent so far. */
  sent(): number;
  /** Why the run stopped early, if it did. */
  stopped(): string | undefined;
  close(): Promise<void>;
}
