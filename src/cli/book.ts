/**
 * `npm run book -- [options]`: start a booking against the running stack and follow it live.
 *
 * Exits 0 only for a `confirmed` outcome, so scripts can rely on the exit code.
 *   --ref <uuid>            the booking reference (default: a new one; printed so you can retry with it)
 *   --rate-pkg <id>         rate package id (default: pkg-demo-deluxe)
 *   --expected-price <amount><currency>, e.g. 180USD: the price the user saw
 *   --on-price-exceeded reject|ask   and --max-increase-percent <n>
 *   --scenario <Test header>, e.g. 'book=504AfterCreate&confirmAfterQueries=3' (sandbox supplier)
 *   --task-queue <name>     default BOOKING_TASK_QUEUE or hotel-booking
 *   --json                  print only the outcome, as JSON
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  connectClient,
  getBookingState,
  newReference,
  startBooking,
  type BookingRequest,
  type BookingState,
} from '../client';

const { values } = parseArgs({
  options: {
    ref: { type: 'string' },
    'rate-pkg': { type: 'string', default: 'pkg-demo-deluxe' },
    'expected-price': { type: 'string' },
    'on-price-exceeded': { type: 'string' },
    'max-increase-percent': { type: 'string' },
    scenario: { type: 'string' },
    'task-queue': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

function parseMoney(text: string): { amount: number; currency: string } {
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]{3})$/.exec(text.trim());
  if (!m) throw new Error(`--expected-price: expected an amount and a currency, e.g. 180USD (got "${text}")`);
  return { amount: Number(m[1]), currency: m[2]!.toUpperCase() };
}

function progressLine(s: BookingState): string {
  const next = s.nextPollAt ? Math.max(0, Math.round((Date.parse(s.nextPollAt) - Date.now()) / 1000)) : undefined;
  const last = s.polls[s.polls.length - 1];
  return [
    `stage=${s.stage}`,
    `book attempts=${s.bookAttempts.length}`,
    `polls=${s.polls.length}`,
    last ? `last poll=${last.result}${last.status !== undefined ? `(${last.status})` : ''}` : undefined,
    next !== undefined && s.stage === 'recovering' ? `next poll in ${next}s` : undefined,
  ]
    .filter(Boolean)
    .join('  ');
}

/**
 * `npm start` encrypts payloads with a key it keeps in its data folder; use it too unless the
 * environment says otherwise (PAYLOAD_ENCRYPTION_KEYS set, or set empty to turn encryption off).
 */
function withStackKeys(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = path.join(env.STACK_DATA_DIR ?? path.resolve(__dirname, '../../.data'), 'payload-encryption-keys');
  if (env.PAYLOAD_ENCRYPTION_KEYS !== undefined || !existsSync(file)) return env;
  return { ...env, PAYLOAD_ENCRYPTION_KEYS: readFileSync(file, 'utf8').trim() };
}

async function main(): Promise<number> {
  const reference = values.ref ?? newReference();
  const request: BookingRequest = {
    customerReferenceNo: reference,
    ratePkgId: values['rate-pkg']!,
    // Demo traveller: the sandbox supplier accepts any well-formed holder and guests.
    holder: {
      firstName: 'Demo',
      lastName: 'Traveller',
      email: 'demo@example.com',
      phone: { countryCode: 'US', countryNumber: 1, number: '5550100' },
    },
    guests: [
      { roomIndex: 0, firstName: 'Demo', lastName: 'Traveller', nationalityCode: 'US', age: 30, isChild: false },
    ],
    ...(values['expected-price'] ? { expectedPrice: parseMoney(values['expected-price']) } : {}),
    ...(values['on-price-exceeded'] || values['max-increase-percent']
      ? {
          priceChangePolicy: {
            onExceeded: (values['on-price-exceeded'] ?? 'reject') as 'reject' | 'ask',
            ...(values['max-increase-percent'] ? { maxIncreasePercent: Number(values['max-increase-percent']) } : {}),
          },
        }
      : {}),
    ...(values.scenario ? { context: { test: values.scenario } } : {}),
  };

  const client = await connectClient(withStackKeys(process.env));
  try {
    const handle = await startBooking(client, request, { taskQueue: values['task-queue'] });
    if (!values.json) console.log(`Booking ${reference} started as workflow ${handle.workflowId}`);
    const result = handle.result();
    let done = false;
    void result.finally(() => (done = true)).catch(() => undefined);
    let lastLine = '';
    while (!done && !values.json) {
      const state = await getBookingState(client, reference).catch(() => undefined);
      const line = state ? progressLine(state) : 'waiting for the worker…';
      if (line !== lastLine) console.log(`  ${line}`);
      lastLine = line;
      await Promise.race([result.catch(() => undefined), new Promise((r) => setTimeout(r, 1000))]);
    }
    const outcome = await result;
    console.log(values.json ? JSON.stringify(outcome) : `Outcome: ${JSON.stringify(outcome, null, 2)}`);
    return outcome.kind === 'confirmed' ? 0 : 2;
  } finally {
    await client.connection.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
