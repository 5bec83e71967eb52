/**
 * Partners apart: each partner books in a namespace of its own (`partner-<name>`), served by its own worker process
 * whose payloads are encrypted with that partner's own key, and reached with a booking-caller certificate
 * (CN=partner:<name>) that the authorizer (dev/temporal/authz-server, TEMPORAL_PARTNER_NAMESPACES) lets act in that
 * namespace only. The stack's own partner, `stack`, books in the stack's namespace (`default`).
 *
 * On one machine the launcher makes what a partner would hold (its key and request) beside what we issue (its
 * certificate), so a second terminal can play the partner; in production the partner keeps its key
 * (docs/production.md, "Adding a partner").
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { issuePartnerCertificate, PARTNER_NAME, type CertPair } from './certs';

/** The stack's own partner (certs.ts makes its booking-caller.pem) and the namespace it books in. */
export const STACK_PARTNER = 'stack';

/** A partner's namespace: one per partner, named for it. */
export function partnerNamespace(partner: string): string {
  if (!PARTNER_NAME.test(partner)) throw new Error(`partner name ${JSON.stringify(partner)}: use ${PARTNER_NAME}`);
  return `partner-${partner}`;
}

/** Partner name → the namespaces its booking callers may act in. */
export type PartnerNamespaces = Record<string, readonly string[]>;

/** The authorizer's TEMPORAL_PARTNER_NAMESPACES: `stack=default,acme=partner-acme` (a partner twice: two). */
export function partnerNamespacesEnv(partners: PartnerNamespaces): string {
  return Object.entries(partners)
    .flatMap(([partner, namespaces]) => namespaces.map((ns) => `${partner}=${ns}`))
    .join(',');
}

/** What a partner needs on the stack: its namespace, its certificate and key, its payload key. */
export interface StackPartner {
  name: string;
  namespace: string;
  /** Its booking-caller certificate (CN=partner:<name>) and the key the partner made. */
  pair: CertPair;
  /** PAYLOAD_ENCRYPTION_KEYS of its namespace's worker and callers (`<name>-<date>:<key>`), none other's. */
  payloadKeys: string;
}

/**
 * Makes, once, in `dir`: the partner's key and request (as the partner would), its certificate issued from the CA
 * in `caDir` (issuePartnerCertificate: the subject is ours), and its payload key (mode 0600). Later calls reuse them.
 */
export function ensurePartner(options: { partner: string; dir: string; caDir: string }): StackPartner {
  const { partner, dir } = options;
  const namespace = partnerNamespace(partner);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = { cert: path.join(dir, `partner-${partner}.pem`), key: path.join(dir, `partner-${partner}.key`) };
  if (!existsSync(pair.cert) || !existsSync(pair.key)) {
    const csr = path.join(dir, `partner-${partner}.csr`);
    const req = spawnSync(
      'openssl',
      [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        pair.key,
        '-subj',
        `/CN=${partner}-gateway`,
        '-out',
        csr,
      ],
      { encoding: 'utf8' },
    );
    if (req.status !== 0) throw new Error(`openssl req for partner ${partner} failed:\n${req.stderr}`);
    issuePartnerCertificate({ caDir: options.caDir, partner, csr, out: pair.cert });
  }
  const keysFile = path.join(dir, `partner-${partner}-payload-encryption-keys`);
  if (!existsSync(keysFile)) {
    writeFileSync(
      keysFile,
      `${partner}-${new Date().toISOString().slice(0, 10)}:${randomBytes(32).toString('base64')}\n`,
      {
        mode: 0o600,
      },
    );
  }
  return { name: partner, namespace, pair, payloadKeys: readFileSync(keysFile, 'utf8').trim() };
}
