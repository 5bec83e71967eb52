/**
 * What the console says after an action (the answer, and a quote to confirm), carried to the page it redirects to.
 * The page renders nothing else from its address: the redirect's `?flash=` is `<payload>.<expiry>.<MAC>`, the
 * payload signed with the session secret over the login it was made for (the session id, the certificate's
 * fingerprint, or `loopback`), so a link someone else made, a message changed in any part, one made for another
 * login, or one older than FLASH_TTL_SECONDS shows nothing. Stateless, so replicas that share the secret show it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** How long a message stays readable after its action: long enough for the redirect and a reload. */
export const FLASH_TTL_SECONDS = 10 * 60;

const LABEL = 'hotel-booking operator-console flash v1';

/**
 * A reference as the console takes one in a form or shows one in a quote: letters, digits and `._:@+/-`, up to 100
 * (a uuid, or a reference from the supplier's account).
 */
export const ConsoleReference = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,99}$/, 'not a reference (letters, digits, ._:@+/-, up to 100)');

/** A quote the console made: the fee a cancellation of `customerReferenceNo` in `namespace` would cost now. */
export const FlashQuote = z.object({
  namespace: z.string().min(1).max(200),
  customerReferenceNo: ConsoleReference,
  fee: z.object({ amount: z.number().nonnegative(), currency: z.string().regex(/^[A-Z]{3}$/) }).nullable(),
  changesAt: z.string().max(40).optional(),
});
export type FlashQuote = z.infer<typeof FlashQuote>;

export const Flash = z.object({
  message: z.string().max(500),
  quote: FlashQuote.optional(),
});
export type Flash = z.infer<typeof Flash>;

const TOKEN = /^([A-Za-z0-9_-]{1,4000})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

function mac(secret: Buffer, login: string, payload: string, expiresAt: number): string {
  return createHmac('sha256', secret).update(`${LABEL}\n${login}\n${expiresAt}\n${payload}`).digest('base64url');
}

/** The `?flash=` value for `flash`, readable by `login` until FLASH_TTL_SECONDS from `nowMs`. */
export function flashToken(secret: Buffer, login: string, flash: Flash, nowMs: number): string {
  const payload = Buffer.from(JSON.stringify(Flash.parse(flash)), 'utf8').toString('base64url');
  const expiresAt = Math.floor(nowMs / 1000) + FLASH_TTL_SECONDS;
  return `${payload}.${expiresAt}.${mac(secret, login, payload, expiresAt)}`;
}

/** What `token` says, if the console made it for `login` and it has not expired; else undefined. */
export function readFlash(secret: Buffer, login: string, token: string | null, nowMs: number): Flash | undefined {
  const m = TOKEN.exec(token ?? '');
  if (!m) return undefined;
  const [, payload, expiry, given] = m as unknown as [string, string, string, string];
  const expiresAt = Number(expiry);
  const ok = timingSafeEqual(Buffer.from(given), Buffer.from(mac(secret, login, payload, expiresAt)));
  if (!ok || expiresAt * 1000 <= nowMs) return undefined;
  try {
    const parsed = Flash.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
