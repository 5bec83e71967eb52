/**
 * The production topology's private certificate authority and the certificates it issues, made with the
 * `openssl` command on first start and kept in the data folder (reused later; a leaf close to expiry is
 * issued again from the same CA, so exported paths stay valid):
 *   ca.pem / ca.key                 the private CA every Temporal node trusts for clients and for each other
 *   server.pem / server.key         the Temporal nodes' certificate: frontend and internode (server and client use)
 *   booking-caller.pem / .key       for booking callers: workers, the callback receiver, `npm run book`, the clients
 *   operator.pem / .key             for operators: the Web UI server, the `temporal` CLI, the stack's own setup
 * Every process reaches Temporal with a pair from here, through Temporal's own variables (temporalTlsEnv).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { TLSConfig } from '@temporalio/client';

/** The name clients check the nodes' certificate against (TEMPORAL_TLS_SERVER_NAME); also valid: 127.0.0.1, temporal. */
export const TEMPORAL_SERVER_NAME = 'localhost';

export interface CertPair {
  cert: string;
  key: string;
}

/** The client identities the CA issues: one certificate each. */
export type ClientIdentity = 'caller' | 'operator';

export interface StackCertificates {
  dir: string;
  ca: CertPair;
  /** The Temporal nodes' certificate (frontend and internode). */
  server: CertPair;
  clients: Record<ClientIdentity, CertPair>;
  serverName: string;
}

const ORG = 'Hotel booking orchestrator';
const CA_DAYS = 3650;
const LEAF_DAYS = 397;
/** A leaf expiring within this is issued again at start. */
const RENEW_WITHIN_SECONDS = 14 * 86_400;

interface LeafSpec {
  file: string;
  subject: Record<string, string>;
  extensions: string[];
}

const LEAVES: Record<'server' | ClientIdentity, LeafSpec> = {
  server: {
    file: 'server',
    subject: { O: ORG, OU: 'temporal-cluster', CN: 'temporal-frontend' },
    // clientAuth too: each node presents this certificate when it calls another node (internode mTLS).
    extensions: [
      'extendedKeyUsage = serverAuth, clientAuth',
      `subjectAltName = DNS:${TEMPORAL_SERVER_NAME}, DNS:temporal, IP:127.0.0.1`,
    ],
  },
  caller: {
    file: 'booking-caller',
    subject: { O: ORG, OU: 'booking-callers', CN: 'booking-caller' },
    extensions: ['extendedKeyUsage = clientAuth'],
  },
  operator: {
    file: 'operator',
    subject: { O: ORG, OU: 'operators', CN: 'operator' },
    extensions: ['extendedKeyUsage = clientAuth'],
  },
};

function openssl(args: string[], what: string): string {
  const result = spawnSync('openssl', args, { encoding: 'utf8' });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT')
    throw new Error('the `openssl` command is needed to make the stack certificates (apt-get install openssl)');
  if (result.status !== 0) throw new Error(`openssl ${what} failed:\n${result.stderr}`);
  return result.stdout;
}

function newKey(file: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file], 'genpkey');
  chmodSync(file, 0o600);
}

/** An openssl config with one certificate's subject and extensions (no defaults from the system's openssl.cnf). */
function requestConfig(subject: Record<string, string>, extensions: string[]): string {
  return [
    '[req]',
    'prompt = no',
    'distinguished_name = dn',
    'x509_extensions = ext',
    '[dn]',
    ...Object.entries(subject).map(([k, v]) => `${k} = ${v}`),
    '[ext]',
    ...extensions,
    '',
  ].join('\n');
}

function issue(options: {
  out: CertPair;
  subject: Record<string, string>;
  extensions: string[];
  days: number;
  ca?: CertPair;
}) {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'stack-cert-'));
  try {
    const cnf = path.join(tmp, 'req.cnf');
    writeFileSync(cnf, requestConfig(options.subject, options.extensions));
    newKey(options.out.key);
    openssl(
      [
        'req',
        '-x509',
        '-new',
        '-config',
        cnf,
        '-key',
        options.out.key,
        '-sha256',
        '-days',
        String(options.days),
        '-set_serial',
        `0x${randomBytes(16).toString('hex')}`,
        ...(options.ca ? ['-CA', options.ca.cert, '-CAkey', options.ca.key] : []),
        '-out',
        options.out.cert,
      ],
      `req ${options.subject.CN}`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** True when the certificate exists, was issued by `ca` and stays valid for the renewal window. */
function usable(pair: CertPair, ca: CertPair): boolean {
  if (!existsSync(pair.cert) || !existsSync(pair.key)) return false;
  const valid = spawnSync('openssl', ['x509', '-in', pair.cert, '-noout', '-checkend', String(RENEW_WITHIN_SECONDS)]);
  if (valid.status !== 0) return false;
  return spawnSync('openssl', ['verify', '-CAfile', ca.cert, pair.cert]).status === 0;
}

const pairIn = (dir: string, name: string): CertPair => ({
  cert: path.join(dir, `${name}.pem`),
  key: path.join(dir, `${name}.key`),
});

/**
 * The CA and certificates in `dir`: made when missing, kept when present (a leaf near expiry or not from
 * this CA is issued again). `caName` names a different CA, for a test's stranger.
 */
export function ensureCertificates(dir: string, options: { caName?: string } = {}): StackCertificates {
  // Only the folder itself private: a recursive mkdir would give its new parents (the stack's data folder, which
  // the postgres user must enter) the same mode.
  mkdirSync(path.dirname(dir), { recursive: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = pairIn(dir, 'ca');
  if (!existsSync(ca.cert) || !existsSync(ca.key)) {
    issue({
      out: ca,
      subject: { O: ORG, CN: options.caName ?? `${ORG} private CA` },
      extensions: [
        'basicConstraints = critical, CA:TRUE, pathlen:0',
        'keyUsage = critical, keyCertSign, cRLSign',
        'subjectKeyIdentifier = hash',
      ],
      days: CA_DAYS,
    });
  }
  const leaf = (spec: LeafSpec): CertPair => {
    const pair = pairIn(dir, spec.file);
    if (!usable(pair, ca))
      issue({
        out: pair,
        subject: spec.subject,
        extensions: [
          'basicConstraints = critical, CA:FALSE',
          'keyUsage = critical, digitalSignature',
          'subjectKeyIdentifier = hash',
          'authorityKeyIdentifier = keyid',
          ...spec.extensions,
        ],
        days: LEAF_DAYS,
        ca,
      });
    return pair;
  };
  return {
    dir,
    ca,
    server: leaf(LEAVES.server),
    clients: { caller: leaf(LEAVES.caller), operator: leaf(LEAVES.operator) },
    serverName: TEMPORAL_SERVER_NAME,
  };
}

/** Temporal's own client variables (envconfig: every SDK, the CLI) for one identity of the stack. */
export function temporalTlsEnv(certs: StackCertificates, who: ClientIdentity): Record<string, string> {
  return {
    TEMPORAL_TLS_CLIENT_CERT_PATH: certs.clients[who].cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: certs.clients[who].key,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca.cert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
  };
}

/** The same identity as a TS SDK connection's `tls` option, for the stack's own calls. */
export function connectionTls(certs: StackCertificates, who: ClientIdentity): TLSConfig {
  return {
    serverNameOverride: certs.serverName,
    serverRootCACertificate: readFileSync(certs.ca.cert),
    clientCertPair: { crt: readFileSync(certs.clients[who].cert), key: readFileSync(certs.clients[who].key) },
  };
}

/**
 * `node certs.js DIR`: makes the CA and certificates in DIR on the first run and keeps them after (a leaf near
 * expiry is issued again), then lists the files. docker-compose's one-shot `certs` service runs it into a volume.
 */
export function main(argv: readonly string[]): number {
  const [dir, ...rest] = argv;
  if (!dir || rest.length > 0 || dir.startsWith('-')) {
    process.stderr.write('usage: node certs.js DIR   (the CA and certificates, made in DIR once, reused after)\n');
    return 2;
  }
  const certs = ensureCertificates(path.resolve(dir));
  const pairs: Array<[string, CertPair]> = [
    ['ca', certs.ca],
    ['server', certs.server],
    ['booking caller', certs.clients.caller],
    ['operator', certs.clients.operator],
  ];
  for (const [who, pair] of pairs) process.stdout.write(`${who}: ${pair.cert} ${pair.key}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
