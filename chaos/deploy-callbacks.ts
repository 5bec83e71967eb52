/**
 * Order-status callbacks while builds move (the deploy drill): the real callback receiver (src/servers/callbacks,
 * with its Temporal target) runs beside the drill, and the drill plays the supplier's sender. Every few seconds it
 * sends a signed callback for a reference whose booking or order run is open at that moment, whichever build that
 * run is pinned to and whichever build is current, from B's deploy until A is stopped. The receiver passes each on as
 * a hint (the booking's or the order run's `supplierOrderUpdate`, or a `checkOrder` start) under its own identity,
 * so the checks (chaos/deploy-check.ts) find each callback in its run's history and see that a build then took it.
 *
 * Sent by the drill rather than the sandbox: the chaos stack's workers and sandbox carry no callback URL or secret.
 * No reference is sent twice within the receiver's dedupe window (an identical callback within it is answered but not
 * passed on), so every accepted callback must reach a run.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { Client, type ConnectionLike } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { CALLBACK_PATH, startCallbackReceiver, type CallbackStats } from '../src/servers/callbacks/server';
import { temporalCallbackTarget } from '../src/servers/callbacks/temporal-target';
import { defaultSupplierProfile } from '../src/runtime/config/supplier-profile';
import type { Log } from './stack';
import { errorLine, sleep } from './timing';

/** The receiver's client identity: every signal it sends carries it in the run's history. */
export const CALLBACK_RECEIVER_IDENTITY = 'chaos-callback-receiver';
/** One callback every this many ms while builds move. */
const EVERY_MS = 3_000;
/** Longer than the receiver's dedupe window (60 s): a reference is sent again only after it. */
const RESEND_AFTER_MS = 65_000;

export interface CallbackSent {
  customerReferenceNo: string;
  /** The run the callback was chosen for (open when chosen). */
  chosenFor: 'booking' | 'order';
  sentMs: number;
  /** The receiver's HTTP answer (0: no answer). */
  httpStatus: number;
  /** The build current when it was sent (as the drill last saw routing). */
  currentBuild?: string;
  error?: string;
}

export interface CallbackRecord {
  sent: CallbackSent[];
  /** The receiver's own counts at the end. */
  stats?: CallbackStats;
  errors: string[];
}

export interface CallbackDrillOptions {
  connection: ConnectionLike;
  namespace: string;
  dataConverter: DataConverter;
  taskQueue: string;
  record: CallbackRecord;
  /** The build current now, as the drill last set it. */
  current: () => string | undefined;
  /** Ends the sending; the receiver is closed after the last answer. */
  until: AbortSignal;
  log: Log;
}

interface OpenReference {
  ref: string;
  kind: 'booking' | 'order';
  /** The build the run is on, as visibility lists it ('' before its first task). */
  buildId: string;
}

/** The references of open bookings and order runs now, bookings first. */
async function openReferences(client: Client): Promise<OpenReference[]> {
  const out: OpenReference[] = [];
  const query = `WorkflowType IN ('bookingWorkflow', 'orderWorkflow') AND ExecutionStatus = 'Running'`;
  for await (const info of client.workflow.list({ query, pageSize: 500 })) {
    const m = /^(booking|order):(.+)$/.exec(info.workflowId);
    const version = String(
      (info.searchAttributes as Record<string, unknown[] | undefined>)?.TemporalWorkerDeploymentVersion?.[0] ?? '',
    );
    if (m) out.push({ ref: m[2]!, kind: m[1] as 'booking' | 'order', buildId: version.split(':').slice(1).join(':') });
  }
  return out.sort((a, b) => (a.kind === b.kind ? a.ref.localeCompare(b.ref) : a.kind === 'booking' ? -1 : 1));
}

/** Every other turn a run on another build than the current one, when there is one: the hint crosses builds. */
function choose(open: OpenReference[], turn: number, current: string | undefined): OpenReference {
  const elsewhere = open.filter((r) => r.buildId && current && r.buildId !== current);
  const from = turn % 2 === 1 && elsewhere.length > 0 ? elsewhere : open;
  return from[Math.floor(turn / 2) % from.length]!;
}

/** A callback as the supplier signs it (the profile's scheme, here the default hmac-sha256 of the body). */
function signed(secret: string, ref: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ customerReferenceNo: ref, sentAt: new Date().toISOString() });
  const { header, verification } = defaultSupplierProfile.callbacks;
  if (verification !== 'hmac-sha256')
    throw new Error(`the drill signs hmac-sha256 only, the profile says ${verification}`);
  return {
    body,
    headers: { 'content-type': 'application/json', [header]: createHmac('sha256', secret).update(body).digest('hex') },
  };
}

/** Runs the receiver and sends callbacks until `until` aborts; never throws (errors go to the record). */
export async function sendCallbacksWhileBuildsMove(o: CallbackDrillOptions): Promise<void> {
  // A secret made here, given to the receiver and used to sign; written nowhere.
  const secret = randomBytes(24).toString('base64url');
  const receiverClient = new Client({
    connection: o.connection,
    namespace: o.namespace,
    identity: CALLBACK_RECEIVER_IDENTITY,
    dataConverter: o.dataConverter,
  });
  let receiver;
  try {
    receiver = await startCallbackReceiver({
      host: '127.0.0.1',
      port: 0,
      profile: defaultSupplierProfile,
      secret,
      target: temporalCallbackTarget(receiverClient, { taskQueue: o.taskQueue }),
    });
  } catch (err) {
    o.record.errors.push(`callback receiver did not start: ${errorLine(err)}`);
    return;
  }
  const lastSent = new Map<string, number>();
  let turn = 0;
  try {
    while (!o.until.aborted) {
      await sleep(EVERY_MS, o.until);
      if (o.until.aborted) break;
      let open: OpenReference[];
      try {
        open = (await openReferences(receiverClient)).filter(
          (r) => Date.now() - (lastSent.get(r.ref) ?? -Infinity) > RESEND_AFTER_MS,
        );
      } catch {
        continue; // a node down: the next turn lists again
      }
      if (open.length === 0) continue;
      const pick = choose(open, turn++, o.current());
      lastSent.set(pick.ref, Date.now());
      const { body, headers } = signed(secret, pick.ref);
      const sent: CallbackSent = {
        customerReferenceNo: pick.ref,
        chosenFor: pick.kind,
        sentMs: Date.now(),
        httpStatus: 0,
        ...(o.current() ? { currentBuild: o.current()! } : {}),
      };
      o.record.sent.push(sent);
      // As the sandbox does: tried again while the receiver does not answer 2xx (a node down: 503), 1, 2, 4 s apart.
      for (let attempt = 1; attempt <= 4; attempt++) {
        try {
          const res = await fetch(`${receiver.url}${CALLBACK_PATH}`, {
            method: 'POST',
            headers,
            body,
            signal: AbortSignal.timeout(10_000),
          });
          await res.arrayBuffer().catch(() => undefined);
          sent.httpStatus = res.status;
          delete sent.error;
        } catch (err) {
          sent.error = errorLine(err);
        }
        if (sent.httpStatus >= 200 && sent.httpStatus < 300) break;
        await sleep(1_000 * 2 ** (attempt - 1));
      }
    }
  } finally {
    o.record.stats = receiver.stats();
    await receiver.close().catch(() => undefined);
    o.log(
      `callbacks: ${o.record.sent.length} sent, ${o.record.sent.filter((s) => s.httpStatus >= 200 && s.httpStatus < 300).length} accepted`,
    );
  }
}
