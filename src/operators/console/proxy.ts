/**
 * Where a request to the console came from when a proxy stands in front of it (a TLS terminator, a load balancer):
 * the client's address, which the login limiter counts by, and whether the client reached us over TLS, which decides
 * the session cookie's `Secure`. `X-Forwarded-For` and `X-Forwarded-Proto` are believed only from the proxies the
 * operator names (CONSOLE_TRUSTED_PROXIES, none by default): from anyone else they are what a stranger says.
 *
 * The client is the right-most address in `X-Forwarded-For` that is not a trusted proxy (each proxy appends the
 * address it was reached from, so entries left of that are the client's own word); the scheme is the last value of
 * `X-Forwarded-Proto` (the nearest proxy's). The RFC 7239 `Forwarded` header is not read.
 */
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';

/** Where a request came from, as far as the console can tell. */
export interface RequestOrigin {
  /** The client's address: the peer's, or the one a trusted proxy reports. */
  address: string | undefined;
  /** Whether the client's connection was TLS: to the console itself, or to a trusted proxy that says `https`. */
  tls: boolean;
}

/** A CONSOLE_TRUSTED_PROXIES entry: an address (`10.0.0.5`, `::1`) or a CIDR block (`10.0.0.0/8`); else undefined. */
export function parseTrustedProxy(
  entry: string,
): { address: string; prefix?: number; type: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', bits, extra] = entry.trim().split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (bits === undefined) return { address, type };
  const prefix = Number(bits);
  if (!/^\d{1,3}$/.test(bits) || prefix > (family === 4 ? 32 : 128)) return undefined;
  return { address, prefix, type };
}

/** The proxies whose forwarding headers are believed. */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  /** `entries`: as parseTrustedProxy reads them; throws on one it cannot (checkConsoleAccess names it first). */
  constructor(entries: readonly string[] = []) {
    for (const entry of entries) {
      const proxy = parseTrustedProxy(entry);
      if (!proxy) throw new Error(`CONSOLE_TRUSTED_PROXIES: "${entry.slice(0, 60)}" is not an address or CIDR block`);
      if (proxy.prefix === undefined) this.list.addAddress(proxy.address, proxy.type);
      else this.list.addSubnet(proxy.address, proxy.prefix, proxy.type);
    }
    this.size = entries.length;
  }

  /** Whether `address` is one of them (an IPv4-mapped IPv6 address counts as its IPv4 one). */
  has(address: string | undefined): boolean {
    if (this.size === 0 || !address) return false;
    const plain = unmapped(address);
    const family = isIP(plain);
    return family !== 0 && this.list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** The client's address and whether it came over TLS, believing forwarding headers from `proxies` only. */
export function requestOrigin(req: IncomingMessage, proxies: TrustedProxies): RequestOrigin {
  const peer = req.socket.remoteAddress ? unmapped(req.socket.remoteAddress) : undefined;
  const direct = (req.socket as Partial<TLSSocket>).encrypted === true;
  if (!proxies.has(peer)) return { address: peer, tls: direct };
  const hops = headerList(req.headers['x-forwarded-for']);
  let address = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i]!);
    // A hop that is not an address was not written by a proxy we trust: stop at the last one we could read.
    if (hop === undefined) break;
    address = hop;
    if (!proxies.has(hop)) break;
  }
  const proto = headerList(req.headers['x-forwarded-proto']).pop()?.toLowerCase();
  return { address, tls: direct || proto === 'https' };
}

/** A header's comma-separated values, across every line of it, trimmed. */
function headerList(value: string | string[] | undefined): string[] {
  return [value ?? []]
    .flat()
    .flatMap((line) => line.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** An `X-Forwarded-For` entry as an address (`1.2.3.4`, `1.2.3.4:5678`, `[::1]:5678`, `::1`), or undefined. */
function hopAddress(entry: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(entry);
  const address = unmapped(bracketed?.[1] ?? withPort?.[1] ?? entry);
  return isIP(address) ? address : undefined;
}

/** `::ffff:1.2.3.4` as `1.2.3.4`; any other address as it is. */
function unmapped(address: string): string {
  return /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
}
