/**
 * Workers whose clocks are wrong: each worker process of the class starts with a preload (`node --require`, through
 * NODE_OPTIONS) that moves `Date.now()` and `new Date()` by a fixed offset. What runs in the worker's own realm reads
 * the moved time: activities (an HTTP-date Retry-After turned into a wait, the time a cancellation fee is judged at,
 * the Ticket's expiry). Workflow code does not: the SDK gives each workflow its own `Date`, set from the server's
 * workflow task time, so the workflow clock stays the server's.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** The worker slots of the class and how far each one's clock is off (negative: behind). */
export const SKEWED_SLOTS: Record<string, number> = { behind: -120_000, ahead: 120_000 };

/** The preload, plain JavaScript (node loads it before the worker's own code). */
const PRELOAD = `'use strict';
// Moves this process's clock by CHAOS_CLOCK_OFFSET_MS (the chaos class of waits and clocks).
const offset = Number(process.env.CHAOS_CLOCK_OFFSET_MS || 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
// Named Date, so what prints a date (a logger's inspect) reads as it always does.
globalThis.Date = class Date extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(realNow() + offset);
    else super(...args);
  }
  static now() {
    return realNow() + offset;
  }
};
`;

/** Writes the preload into the run's temp dir; its path. */
export function writeClockPreload(dir: string): string {
  const file = path.join(dir, 'skewed-clock.js');
  writeFileSync(file, PRELOAD);
  return file;
}

/** A skewed slot's environment: the preload and its offset. */
export function skewedEnv(preload: string, offsetMs: number): Record<string, string> {
  return { NODE_OPTIONS: `--require ${preload}`, CHAOS_CLOCK_OFFSET_MS: String(offsetMs) };
}
