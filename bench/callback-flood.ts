/**
 * A replayed-callback flood, measured: for `--seconds` (60), one captured signed callback per reference is posted
 * again and again (`--rate` per second per reference, 10) to several callback receivers at once, each with its
 * duplicate memory off (`dedupeMs: 0`), as a fleet of receivers and restarts would see a body-only-signed callback
 * replayed. What is counted is what the flood costs the supplier: QueryOrders calls per reference (the fleet's
 * budget is 50/s), against the bound the workflows keep (HINT_POLL_SPACING_SECONDS: one hint-triggered poll a
 * minute per reference), for two references:
 *   - `recovering`: a booking in recovery (Book's answer lost, the order Confirming; scheduled polls an hour apart);
 *   - `closed`: a confirmed booking no workflow follows (each callback would start an order check).
 *
 *   npx ts-node --transpile-only bench/callback-flood.ts [--seconds 60] [--rate 10] [--receivers 3]
 *
 * Prints a table and writes bench/results/callback-flood.json. Nothing is asserted.
 */
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { CALLBACK_PATH, startCallbackReceiver, type CallbackReceiver } from '../src/servers/callbacks/server';
import { temporalCallbackTarget } from '../src/servers/callbacks/temporal-target';
import { startBooking } from '../src/api/client/index';
import { bookingStateQuery, HINT_POLL_SPACING_SECONDS } from '../src/api/contract/index';
import { createBookingWorker } from '../src/worker';
import { startLocalBookingStack } from '../dev/stack/local';
import { bookingRequest, testProfile } from '../test/harness/booking';

const SECRET = 'bench-callback-secret-0123456789';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string' }, rate: { type: 'string' }, receivers: { type: 'string' } },
  });
  const seconds = Number(values.seconds ?? 60);
  const rate = Number(values.rate ?? 10);
  const receiverCount = Number(values.receivers ?? 3);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const { env, sandbox, supplier, close } = await startLocalBookingStack(testProfile);
  const taskQueue = 'callback-flood';
  const client = new Client({ connection: env.connection });
  const worker = await createBookingWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    supplier,
    profile: testProfile,
    recoveryTesting: true,
  });
  const receivers: CallbackReceiver[] = [];
  for (let i = 0; i < receiverCount; i++) {
    receivers.push(
      await startCallbackReceiver({
        port: 0,
        profile: testProfile,
        secret: SECRET,
        dedupeMs: 0,
        target: temporalCallbackTarget(client, { taskQueue }),
      }),
    );
  }
  const queries = (ref: string) =>
    sandbox.calls('queryOrders').filter((c) => c.customerReferenceNos?.includes(ref)).length;

  try {
    await worker.runUntil(async () => {
      const recovering = bookingRequest({
        test: 'book=504AfterCreate&outcome=pending',
        recovery: { testing: true, delaysSeconds: [3600], repeatEverySeconds: 3600, deadlineSeconds: 7200 },
      });
      const handle = await startBooking(client, recovering, { taskQueue });
      for (;;) {
        if ((await handle.query(bookingStateQuery)).polls.length >= 1) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const closed = bookingRequest({ test: 'confirmAfterMs=0' });
      const outcome = await (await startBooking(client, closed, { taskQueue })).result();
      if (outcome.kind !== 'confirmed') throw new Error(`the closed booking ended ${outcome.kind}`);

      const refs = { recovering: recovering.customerReferenceNo, closed: closed.customerReferenceNo };
      const before = { recovering: queries(refs.recovering), closed: queries(refs.closed) };
      const answers: Record<string, Record<number, number>> = { recovering: {}, closed: {} };
      const bodies = Object.fromEntries(
        Object.entries(refs).map(([kind, ref]) => [kind, JSON.stringify({ customerReferenceNo: ref, status: 2 })]),
      );
      const startedAt = Date.now();
      let sent = 0;
      // Evenly paced: one round (a post per reference) every 1000/rate ms, each to the next receiver in turn.
      while (Date.now() - startedAt < seconds * 1000) {
        const round = sent++;
        await Promise.all(
          Object.entries(bodies).map(async ([kind, body]) => {
            const r = receivers[round % receivers.length]!;
            const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
            const res = await fetch(`${r.url}${CALLBACK_PATH}`, {
              method: 'POST',
              body,
              headers: { 'content-type': 'application/json', 'x-signature': signature },
            });
            await res.arrayBuffer();
            answers[kind]![res.status] = (answers[kind]![res.status] ?? 0) + 1;
          }),
        );
        const next = startedAt + (sent * 1000) / rate;
        await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
      }
      const floodMs = Date.now() - startedAt;
      // Let polls the last hints brought on land before counting.
      await new Promise((r) => setTimeout(r, 3_000));
      const rows = (Object.keys(refs) as Array<keyof typeof refs>).map((kind) => ({
        reference: kind,
        posted: Object.values(answers[kind]!).reduce((a, b) => a + b, 0),
        answers: answers[kind],
        queryOrders: queries(refs[kind]) - before[kind],
        bound: Math.ceil(floodMs / 1000 / HINT_POLL_SPACING_SECONDS) + 1,
      }));
      const historyLength = (await handle.describe()).historyLength;
      const result = {
        benchmark: 'callback-flood',
        at: new Date().toISOString(),
        machine: { cpus: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
        options: { seconds, rate, receivers: receiverCount, dedupeMs: 0 },
        floodSeconds: floodMs / 1000,
        rows,
        recoveringBookingHistoryLength: historyLength,
        receiverStats: receivers.map((r) => r.stats()),
      };
      console.log(`callback flood: ${floodMs / 1000} s, ${rate}/s per reference over ${receiverCount} receivers`);
      console.log('reference    posted  answers                 QueryOrders  bound (1 + 1 a minute)');
      for (const row of rows) {
        console.log(
          `${row.reference.padEnd(12)} ${String(row.posted).padStart(6)}  ${JSON.stringify(row.answers).padEnd(22)}  ${String(row.queryOrders).padStart(11)}  ${row.bound}`,
        );
      }
      console.log(`recovering booking's history: ${historyLength} events`);
      const dir = path.join(__dirname, 'results');
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'callback-flood.json'), JSON.stringify(result, null, 2) + '\n');
    });
  } finally {
    for (const r of receivers) await r.close();
    await close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
