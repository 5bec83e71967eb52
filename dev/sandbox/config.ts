/** The sandbox supplier's configuration, from its environment, parsed once at start. */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defaultSupplierProfile } from '../../src/runtime/config/supplier-profile';
import { defaultSandboxOptions, type SandboxOptions } from './options';

const rate = (fallback: number) => z.coerce.number().positive().default(fallback);
const limits = defaultSupplierProfile.rateLimits;

export const SandboxEnv = z.object({
  /** Interface to listen on (0.0.0.0 in a container). */
  SANDBOX_HOST: z.string().default('127.0.0.1'),
  SANDBOX_PORT: z.coerce.number().int().nonnegative().default(8787),
  /** demo: orders settle after SANDBOX_CONFIRM_AFTER_MS; realistic: after 3 to 10 minutes. */
  SANDBOX_MODE: z.enum(['demo', 'realistic']).default('demo'),
  SANDBOX_CONFIRM_AFTER_MS: z.coerce.number().int().nonnegative().default(3_000),
  SANDBOX_APP_KEY: z.string().min(1).default('sandbox-app'),
  SANDBOX_APP_SECRET: z.string().min(1).default('sandbox-secret'),
  /** An extra bearer token accepted as is (rate limits then count per client IP). */
  SANDBOX_STATIC_TOKEN: z.string().min(1).optional(),
  /** Signing key for tickets; random per start by default (tickets do not survive a restart). */
  SANDBOX_JWT_SECRET: z.string().min(16).optional(),
  SANDBOX_RATE_OVERALL: rate(limits.overall),
  SANDBOX_RATE_CHECK_AVAIL: rate(limits.checkAvail),
  SANDBOX_RATE_BOOK: rate(limits.book),
  SANDBOX_RATE_QUERY_ORDERS: rate(limits.queryOrders),
  /** on: answer as a drifting live supplier (nulls, omitted and mistyped informational fields, unknown fields). */
  SANDBOX_DRIFT: z.enum(['on', 'off']).default('off'),
  /** Signs order-status callbacks (the worker's SUPPLIER_CALLBACK_SECRET); unset: callbacks go unsigned. */
  SANDBOX_CALLBACK_SECRET: z.string().min(16).optional(),
});

export function loadSandboxOptions(env: Record<string, string | undefined> = process.env): SandboxOptions {
  const parsed = SandboxEnv.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `Invalid sandbox configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}`,
    );
  }
  const e = parsed.data;
  const defaults = defaultSandboxOptions();
  return {
    ...defaults,
    host: e.SANDBOX_HOST,
    port: e.SANDBOX_PORT,
    mode: e.SANDBOX_MODE,
    confirmAfterMs: e.SANDBOX_CONFIRM_AFTER_MS,
    appKeys: [
      { appKey: e.SANDBOX_APP_KEY, appSecret: e.SANDBOX_APP_SECRET, permissions: ['search', 'trade', 'query'] },
      ...defaults.appKeys.slice(1),
    ],
    staticToken: e.SANDBOX_STATIC_TOKEN,
    drift: e.SANDBOX_DRIFT === 'on',
    ...(e.SANDBOX_CALLBACK_SECRET ? { callbackSecret: e.SANDBOX_CALLBACK_SECRET } : {}),
    jwtSecret: e.SANDBOX_JWT_SECRET ?? randomBytes(32).toString('hex'),
    rateLimits: {
      overall: e.SANDBOX_RATE_OVERALL,
      checkAvail: e.SANDBOX_RATE_CHECK_AVAIL,
      book: e.SANDBOX_RATE_BOOK,
      queryOrders: e.SANDBOX_RATE_QUERY_ORDERS,
    },
  };
}
