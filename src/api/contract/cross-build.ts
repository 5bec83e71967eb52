/**
 * Every payload that crosses builds, named once with its version (docs/compatibility.md tells why each one crosses).
 *
 * With every workflow type pinned, a run's own commands, activity results and continue-as-new input stay on the
 * build that started it. What does not: a message one build sends to a run another build serves (the autoCancel and
 * checkOrder signal-with-starts, a caller's update), the start input of a run another build's code starts, the
 * answers and results another build's console or caller reads, and the booking's memo an order run reads.
 *
 * The rule for changing one (checked by test/unit/cross-build-payloads.test.ts against the frozen schemas in
 * schema/messages/<name>/v<version>.json, which `npm run schema:messages` writes):
 *  - any change of its schema moves its version by one, and leaves the older version's snapshot in place;
 *  - a new version may only add optional fields (with a default where a decision reads them): every receiver
 *    tolerates fields it does not know, except a `closed` one, to which nothing may be added at all;
 *  - nothing may be removed, retyped, made required, narrowed, or given a new enum value an older build would refuse;
 *  - a breaking change is a new message name (or a new workflow type), which both builds serve for a release before
 *    the old name goes.
 *
 * Node code only (zod): workflow code never imports this module.
 */
import { z } from 'zod';
import { BookingStages, SUPPLIER_ACCOUNT_PATTERN } from './definitions';
import {
  AutoCancel,
  BookingOutcome,
  BookingRequest,
  BookingState,
  CancelBookingAnswer,
  CancelBookingRequest,
  OrderCheck,
  OrderOutcome,
  OrderState,
  OrderWorkflowInput,
  PriceApproval,
  SupplierOrderUpdate,
  SweepInput,
} from './schemas';

/** The approvePriceChange update's answer (its definition in ./messages types it; this is its shape). */
export const PriceApprovalAnswer = z.object({ accepted: z.boolean(), stage: z.enum(BookingStages) });
export type PriceApprovalAnswer = z.infer<typeof PriceApprovalAnswer>;

/** What a booking run keeps in its memo for the order runs of its reference: the account it chose. */
export const BookingMemo = z.object({ supplier: z.string().regex(SUPPLIER_ACCOUNT_PATTERN).optional() });
export type BookingMemo = z.infer<typeof BookingMemo>;

/**
 * What the sweep's Schedule starts each sweep with: the settings, the supplier profile's order statuses and the
 * account it lists. Written into the Schedule by one build, read by the sweep runs of the build current then.
 */
export const SweepScheduleInput = SweepInput.extend({
  statuses: z.object({
    unknown: z.number().int(),
    confirming: z.number().int(),
    confirmed: z.number().int(),
    cancelled: z.number().int(),
    failed: z.number().int(),
    cancelFailed: z.number().int(),
  }),
  supplier: z.string().regex(SUPPLIER_ACCOUNT_PATTERN).optional(),
});
export type SweepScheduleInput = z.infer<typeof SweepScheduleInput>;

export type CrossBuildKind = 'signal' | 'update' | 'query' | 'start' | 'result' | 'memo';

/** One payload that crosses builds. */
export interface CrossBuildPayload {
  /** The message's name as Temporal carries it (a signal, update or query name), or `<workflow type>.<part>`. */
  name: string;
  kind: CrossBuildKind;
  /** The workflow type that receives the message, or whose input, result or memo it is. */
  workflow: 'bookingWorkflow' | 'orderWorkflow' | 'reconciliationSweepWorkflow';
  /** Moves by one with every change of the schema (see the rule above). */
  version: number;
  /** What the sender sends: a signal's or update's argument, a start's input, a query's or run's answer. */
  schema: z.ZodType;
  /** An update's answer, which goes back the other way. */
  answer?: z.ZodType;
  /**
   * The receiver refuses fields it does not know (the order run's input guard): then no field may be added, only a
   * new version of the message under a new name.
   */
  closed?: boolean;
  /** Who sends it and who reads it, and which builds they may be on. */
  crosses: string;
}

/** The registry: one entry per payload that crosses builds. */
export const CROSS_BUILD_PAYLOADS: readonly CrossBuildPayload[] = [
  {
    name: 'autoCancel',
    kind: 'signal',
    workflow: 'orderWorkflow',
    version: 1,
    schema: AutoCancel,
    crosses:
      'sent by the booking and sweep activities of the build their run is pinned to, by signal-with-start: to the ' +
      'order run open for the reference (pinned to whichever build started it) or to a new run on the current build',
  },
  {
    name: 'orderWorkflow.input',
    kind: 'start',
    workflow: 'orderWorkflow',
    version: 1,
    schema: OrderWorkflowInput,
    closed: true,
    crosses:
      'the start input of an order run, given by whoever starts it: booking and sweep activities of any build, the ' +
      'callback receiver and operators of any build, callers with any contract package (update-with-start); read ' +
      'by the build current when it starts, whose input guard refuses fields it does not know',
  },
  {
    name: 'checkOrder',
    kind: 'signal',
    workflow: 'orderWorkflow',
    version: 1,
    schema: OrderCheck,
    crosses:
      'sent by the callback receiver of any build (and client helpers) by signal-with-start, to an open order run ' +
      'pinned to any build or a new run on the current build',
  },
  {
    name: 'operatorCheckOrder',
    kind: 'signal',
    workflow: 'orderWorkflow',
    version: 1,
    schema: OrderCheck,
    crosses:
      'sent by the console and CLI of any build by signal-with-start; a run of a build without the handler (1.0.0) ' +
      'keeps it unhandled and ends without it',
  },
  {
    name: 'supplierOrderUpdate',
    kind: 'signal',
    workflow: 'bookingWorkflow',
    version: 1,
    schema: SupplierOrderUpdate,
    crosses:
      'sent by the callback receiver of any build to the booking or order run open for the reference, pinned to ' +
      'any build; a hint only, its fields are not read by the runs',
  },
  {
    name: 'approvePriceChange',
    kind: 'update',
    workflow: 'bookingWorkflow',
    version: 1,
    schema: PriceApproval,
    answer: PriceApprovalAnswer,
    crosses:
      'sent by callers with any contract package (TypeScript, Python, Go, the CLI) to a booking pinned to any build',
  },
  {
    name: 'cancelBooking',
    kind: 'update',
    workflow: 'orderWorkflow',
    version: 1,
    schema: CancelBookingRequest,
    answer: CancelBookingAnswer,
    crosses:
      'sent by callers with any contract package by update-with-start, to an open order run pinned to any build or ' +
      'a new run on the current build',
  },
  {
    name: 'bookingWorkflow.input',
    kind: 'start',
    workflow: 'bookingWorkflow',
    version: 1,
    schema: BookingRequest,
    crosses: 'given by callers with any contract package; read by the build current when the booking starts',
  },
  {
    name: 'bookingState',
    kind: 'query',
    workflow: 'bookingWorkflow',
    version: 1,
    schema: BookingState,
    crosses: "answered by the booking's build, read by the console, CLI and callers of any build",
  },
  {
    name: 'orderState',
    kind: 'query',
    workflow: 'orderWorkflow',
    version: 1,
    schema: OrderState,
    crosses: "answered by the order run's build, read by the console, CLI and callers of any build",
  },
  {
    name: 'bookingWorkflow.result',
    kind: 'result',
    workflow: 'bookingWorkflow',
    version: 1,
    schema: BookingOutcome,
    crosses: "the booking's outcome, read by callers, the console and the order runs' first step of any build",
  },
  {
    name: 'orderWorkflow.result',
    kind: 'result',
    workflow: 'orderWorkflow',
    version: 1,
    schema: OrderOutcome,
    crosses:
      "an order run's outcome, read by callers, the console, and the next run of the order on any build (its " +
      '"earlier sends" read every earlier run)',
  },
  {
    name: 'bookingWorkflow.memo',
    kind: 'memo',
    workflow: 'bookingWorkflow',
    version: 1,
    schema: BookingMemo,
    crosses: "written by the booking's build, read by the first step of the reference's order runs on any build",
  },
  {
    name: 'reconciliationSweepWorkflow.input',
    kind: 'start',
    workflow: 'reconciliationSweepWorkflow',
    version: 1,
    schema: SweepScheduleInput,
    crosses:
      "written into the sweep's Schedule by whoever last set it (a worker or the deploy, of any build), read by " +
      'the sweep runs the Schedule starts on the current build',
  },
];

/** The frozen snapshot's file under schema/messages/ for a payload at a version. */
export function crossBuildSchemaFile(name: string, version: number): string {
  return `${name}/v${version}.json`;
}

/**
 * The JSON Schema frozen for a payload at its current version: what a receiver accepts (a start's or message's
 * `input` side, with defaults optional) and, for an update, the answer a sender gets back. `closed` marks every
 * object with `additionalProperties: false`, as its receiver refuses unknown fields; elsewhere fields are open.
 */
export function crossBuildJsonSchema(payload: CrossBuildPayload, toJson: ToJsonSchema = zodJsonSchema): unknown {
  const io = payload.kind === 'query' || payload.kind === 'result' ? 'output' : 'input';
  const json = (schema: z.ZodType, side: 'input' | 'output') =>
    openOrClosed(toJson(schema, side), payload.closed === true);
  return {
    // No prose here: a snapshot moves only with the payload's shape, never with the words around it.
    title: payload.name,
    kind: payload.kind,
    workflow: payload.workflow,
    version: payload.version,
    payload: json(payload.schema, io),
    ...(payload.answer ? { answer: json(payload.answer, 'output') } : {}),
  };
}

/**
 * How a zod schema becomes JSON Schema: zod's own, or (a test of another release's code) a lookup of what that
 * release's zod made of its own schema of the same name.
 */
export type ToJsonSchema = (schema: z.ZodType, io: 'input' | 'output') => unknown;
const zodJsonSchema: ToJsonSchema = (schema, io) => z.toJSONSchema(schema, { io, target: 'draft-2020-12' });

/** zod writes `additionalProperties: false` on output schemas: what a receiver tolerates is the registry's to say. */
function openOrClosed(node: unknown, closed: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => openOrClosed(n, closed));
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === '$schema') continue;
    out[key] = openOrClosed(value, closed);
  }
  if (closed && out['type'] === 'object' && out['properties']) out['additionalProperties'] = false;
  return out;
}
