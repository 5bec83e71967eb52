/**
 * What keeps a token login from being guessed, for the codec server and the operator console: a token strong
 * enough that guessing is hopeless (at least 128 bits, checked when the server starts), and few tries per client
 * address (LoginAttempts), so even a weak one could not be tried fast.
 */
import { isIPv6 } from 'node:net';

/** The least a configured token must carry. */
export const MIN_TOKEN_BITS = 128;

/**
 * The bits a token carries at most, from its length and the alphabet it is written in: hex (0-9, a-f) counts 4 a
 * character, anything else log2 of the character classes it uses (digits 10, lower case 26, upper case 26, other
 * printable 33). An estimate from above (a phrase counts as if random), so it catches short and hex-short tokens,
 * and a token of fewer than 8 distinct characters counts as their number only.
 */
export function tokenBits(token: string): number {
  const chars = [...token];
  if (chars.length === 0) return 0;
  const distinct = new Set(chars).size;
  let alphabet: number;
  if (/^[0-9a-f]+$/.test(token) || /^[0-9A-F]+$/.test(token)) alphabet = 16;
  else {
    alphabet =
      (/[0-9]/.test(token) ? 10 : 0) +
      (/[a-z]/.test(token) ? 26 : 0) +
      (/[A-Z]/.test(token) ? 26 : 0) +
      (/[^0-9a-zA-Z]/.test(token) ? 33 : 0);
  }
  // A token of a handful of distinct characters ("aaaa…", "abab…") carries no more than their number allows.
  if (distinct < 8) alphabet = Math.min(alphabet, distinct);
  return Math.floor(chars.length * Math.log2(Math.max(alphabet, 1)));
}

/** Why `token`, the value of `setting`, is too weak to start with; undefined when it carries 128 bits or more. */
export function weakTokenProblem(setting: string, token: string): string | undefined {
  const bits = tokenBits(token);
  if (bits >= MIN_TOKEN_BITS) return undefined;
  return (
    `${setting}: carries at most ${bits} bits; at least ${MIN_TOKEN_BITS} are required, so that it cannot be guessed ` +
    '(e.g. `openssl rand -hex 32`, 64 hex characters).'
  );
}

/** The default limit: 5 login attempts per client address a minute. */
export const LOGIN_ATTEMPTS = { max: 5, windowMs: 60_000 };

/**
 * Login attempts per client address in a sliding window. An IPv6 client counts by its /64 (one host holds them
 * all); behind a proxy every client shares the proxy's address, and so its limit.
 */
export class LoginAttempts {
  private readonly seen = new Map<string, number[]>();

  constructor(
    private readonly max = LOGIN_ATTEMPTS.max,
    private readonly windowMs = LOGIN_ATTEMPTS.windowMs,
  ) {}

  /** Counts one attempt from `address`: allowed, or refused with the seconds until the oldest one ages out. */
  take(address: string | undefined, nowMs: number): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    const key = clientKey(address);
    const recent = (this.seen.get(key) ?? []).filter((at) => nowMs - at < this.windowMs);
    if (recent.length >= this.max) {
      this.seen.set(key, recent);
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((recent[0]! + this.windowMs - nowMs) / 1000)) };
    }
    recent.push(nowMs);
    this.seen.set(key, recent);
    if (this.seen.size > 10_000) this.forgetOld(nowMs);
    return { allowed: true };
  }

  private forgetOld(nowMs: number): void {
    for (const [key, times] of this.seen) if (times.every((at) => nowMs - at >= this.windowMs)) this.seen.delete(key);
  }
}

/** The address a limit counts by: an IPv4 address (mapped or not) as is, an IPv6 one by its first 64 bits. */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
