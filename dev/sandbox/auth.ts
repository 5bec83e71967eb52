/**
 * Tickets as the supplier issues them: HS256 JWTs with a sliding idle expiry (each use renews it)
 * and a hard maximum age of 365 days.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';

export type Permission = 'search' | 'trade' | 'query';

export interface AppKey {
  appKey: string;
  appSecret: string;
  permissions: Permission[];
}

export interface Principal {
  /** Who the rate limits count against. */
  clientKey: string;
  permissions: Permission[];
}

const HARD_MAX_MS = 365 * 24 * 3600 * 1000;
const b64 = (value: object | Buffer) =>
  (Buffer.isBuffer(value) ? value : Buffer.from(JSON.stringify(value))).toString('base64url');

export class TicketAuthority {
  private readonly tickets = new Map<string, { appKey: string; ttlMs: number; issuedAt: number; lastUsed: number }>();

  constructor(
    private readonly keys: AppKey[],
    private readonly secret: string,
    private readonly staticToken: string | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** A ticket for valid credentials, or undefined. */
  issue(appKey: string, appSecret: string, ttlSeconds: number): string | undefined {
    const key = this.keys.find((k) => k.appKey === appKey);
    if (!key || !safeEqual(key.appSecret, appSecret)) return undefined;
    const jti = randomUUID();
    const t = this.now();
    this.tickets.set(jti, { appKey, ttlMs: ttlSeconds * 1000, issuedAt: t, lastUsed: t });
    const head = b64({ alg: 'HS256', typ: 'JWT' });
    const body = b64({ sub: appKey, jti, iat: Math.floor(t / 1000), ttl: ttlSeconds });
    return `${head}.${body}.${this.sign(`${head}.${body}`)}`;
  }

  /** The caller behind an Authorization header, or undefined (→ 401). Renews the ticket's idle clock. */
  authenticate(authorization: string | undefined, clientIp: string): Principal | undefined {
    const m = /^Bearer (.+)$/.exec(authorization ?? '');
    if (!m) return undefined;
    const token = m[1]!;
    if (this.staticToken && safeEqual(token, this.staticToken)) {
      return { clientKey: `ip:${clientIp}`, permissions: ['search', 'trade', 'query'] };
    }
    const [head, body, signature] = token.split('.');
    if (!head || !body || !signature || !safeEqual(signature, this.sign(`${head}.${body}`))) return undefined;
    let claims: { jti?: string };
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const ticket = claims.jti ? this.tickets.get(claims.jti) : undefined;
    const t = this.now();
    if (!ticket || t - ticket.lastUsed > ticket.ttlMs || t - ticket.issuedAt > HARD_MAX_MS) return undefined;
    ticket.lastUsed = t;
    const key = this.keys.find((k) => k.appKey === ticket.appKey);
    return key ? { clientKey: `key:${key.appKey}`, permissions: key.permissions } : undefined;
  }

  private sign(input: string): string {
    return createHmac('sha256', this.secret).update(input).digest('base64url');
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
