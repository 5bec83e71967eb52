/**
 * Who runs the CLI, as recorded with what it does (a price answer's `approvedBy`, a cancellation's `requestedBy`):
 * the subject of the client certificate the connection authenticates with (mTLS: the same identity the server's
 * authorizer checks and logs), else the operating-system account on this host. Never only what was typed: `--by`
 * names who the operator answers for, beside the identity, not instead of it.
 */
import { X509Certificate } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { loadClientConnectConfig } from '@temporalio/envconfig';

export function operatorIdentity(env: Record<string, string | undefined> = process.env): string {
  return certificateSubject(env) ?? `${accountName()}@${hostname()}`;
}

/** `--by` beside the identity: "CN=alice,OU=operators for the night desk". */
export function recordedAs(identity: string, by: string | undefined): string {
  const said = by?.trim();
  return said && said !== identity ? `${identity} for ${said}` : identity;
}

function certificateSubject(env: Record<string, string | undefined>): string | undefined {
  try {
    const overrideEnvVars = Object.fromEntries(
      Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined),
    );
    const { connectionOptions } = loadClientConnectConfig({ overrideEnvVars, disableFile: !env.TEMPORAL_CONFIG_FILE });
    const tls = connectionOptions.tls;
    const crt = tls && typeof tls === 'object' ? tls.clientCertPair?.crt : undefined;
    if (!crt) return undefined;
    return new X509Certificate(crt).subject.split('\n').join(',');
  } catch {
    return undefined;
  }
}

function accountName(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown-user';
  }
}
