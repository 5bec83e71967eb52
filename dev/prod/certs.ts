/**
 * The production topology's private certificate authority and the certificates it issues, made with the
 * `openssl` command on first start and kept in the data folder (reused later; a leaf close to expiry is
 * issued again from the same CA, so exported paths stay valid). One certificate per job; the organizational
 * unit (OU) names the job, and the nodes' authorizer (dev/temporal/authz-server) allows each only its calls:
 *   ca.pem                          the private CA every Temporal node and client trusts (public)
 *   server.pem / .key               OU=temporal-cluster: the nodes, frontend and internode (server and client use)
 *   worker.pem / .key               OU=workers: the booking workers (poll and answer tasks)
 *   booking-caller.pem / .key       OU=booking-callers, CN=partner:<name>: a partner's service, `npm run book`
 *   callback-receiver.pem / .key    OU=callback-receivers: the callback receiver (`npm run callbacks`)
 *   operator.pem / .key             OU=operators: people, the console, the Web UI server, the stack's own setup
 * The CA's key (ca.key, with a copy of ca.pem) lives in its own folder (`caDir`, mode 0700, the key 0600), apart
 * from the folder every process is pointed at; it is needed only to issue, e.g. a partner's certificate
 * (issuePartnerCertificate, scripts/issue-partner-cert.ts), which sets the subject itself.
 * Every process reaches Temporal with a pair from here, through Temporal's own variables (temporalTlsEnv).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
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

/** The client identities the CA issues: one certificate each, one job each (see IDENTITY_UNITS). */
export type ClientIdentity = 'caller' | 'worker' | 'receiver' | 'operator';

/** The OU of each identity's certificate: the authorizer reads the job from it, and nothing else. */
export const IDENTITY_UNITS = {
  node: 'temporal-cluster',
  worker: 'workers',
  caller: 'booking-callers',
  receiver: 'callback-receivers',
  operator: 'operators',
} as const;

export interface StackCertificates {
  dir: string;
  ca: CertPair;
  /** The Temporal nodes' certificate (frontend and internode). */
  server: CertPair;
  clients: Record<ClientIdentity, CertPair>;
  serverName: string;
  /** The folder holding the CA's key: no process but the one that issues certificates is pointed at it. */
  caDir: string;
}

const ORG = 'Hotel booking orchestrator';

/** A partner's name as it appears in its certificate (CN=partner:<name>) and the audit log. */
export const PARTNER_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The subject of a partner's booking-caller certificate: set here, never taken from the partner's request. */
export function partnerSubject(partner: string): Record<string, string> {
  if (!PARTNER_NAME.test(partner)) throw new Error(`partner name ${JSON.stringify(partner)}: use ${PARTNER_NAME}`);
  return { O: ORG, OU: IDENTITY_UNITS.caller, CN: `partner:${partner}` };
}
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
    subject: { O: ORG, OU: IDENTITY_UNITS.node, CN: 'temporal-frontend' },
    // clientAuth too: each node presents this certificate when it calls another node (internode mTLS).
    extensions: [
      'extendedKeyUsage = serverAuth, clientAuth',
      `subjectAltName = DNS:${TEMPORAL_SERVER_NAME}, DNS:temporal, IP:127.0.0.1`,
    ],
  },
  worker: {
    file: 'worker',
    subject: { O: ORG, OU: IDENTITY_UNITS.worker, CN: 'booking-worker' },
    extensions: ['extendedKeyUsage = clientAuth'],
  },
  // The stack's own partner: the same subject scheme issuePartnerCertificate gives every partner.
  caller: {
    file: 'booking-caller',
    subject: partnerSubject('stack'),
    extensions: ['extendedKeyUsage = clientAuth'],
  },
  receiver: {
    file: 'callback-receiver',
    subject: { O: ORG, OU: IDENTITY_UNITS.receiver, CN: 'callback-receiver' },
    extensions: ['extendedKeyUsage = clientAuth'],
  },
  operator: {
    file: 'operator',
    subject: { O: ORG, OU: IDENTITY_UNITS.operator, CN: 'operator' },
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

/** A folder only its owner may enter; its parents are made with the default mode. */
function privateDir(dir: string): void {
  // Only the folder itself private: a recursive mkdir would give its new parents (the stack's data folder, which
  // the postgres user must enter) the same mode.
  mkdirSync(path.dirname(dir), { recursive: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * The CA in `caDir`: made when missing, kept when present. A CA key found beside the certificates in `dir` (a data
 * folder from before the key had a folder of its own) is moved there, so the same CA goes on.
 */
function ensureCa(dir: string, caDir: string, caName: string | undefined): CertPair {
  privateDir(caDir);
  const ca = pairIn(caDir, 'ca');
  const old = pairIn(dir, 'ca');
  if (caDir !== dir && !existsSync(ca.key) && existsSync(old.key) && existsSync(old.cert)) {
    copyFileSync(old.cert, ca.cert);
    renameSync(old.key, ca.key);
  }
  if (!existsSync(ca.cert) || !existsSync(ca.key)) {
    issue({
      out: ca,
      subject: { O: ORG, CN: caName ?? `${ORG} private CA` },
      extensions: [
        'basicConstraints = critical, CA:TRUE, pathlen:0',
        'keyUsage = critical, keyCertSign, cRLSign',
        'subjectKeyIdentifier = hash',
      ],
      days: CA_DAYS,
    });
  }
  chmodSync(ca.key, 0o600);
  return ca;
}

const LEAF_EXTENSIONS = [
  'basicConstraints = critical, CA:FALSE',
  'keyUsage = critical, digitalSignature',
  'subjectKeyIdentifier = hash',
  'authorityKeyIdentifier = keyid',
];

/**
 * The CA and certificates: made when missing, kept when present (a leaf near expiry or not from this CA is issued
 * again). The certificates and ca.pem go to `dir`; the CA's key to `caDir` (default: `dir` itself, as docker-compose's
 * certs service keeps it in a volume no other container mounts). `caName` names a different CA, for a test's stranger.
 */
export function ensureCertificates(dir: string, options: { caName?: string; caDir?: string } = {}): StackCertificates {
  privateDir(dir);
  const caDir = options.caDir ?? dir;
  const issuer = ensureCa(dir, caDir, options.caName);
  const ca = { cert: path.join(dir, 'ca.pem'), key: issuer.key };
  if (caDir !== dir && (!existsSync(ca.cert) || readFileSync(ca.cert, 'utf8') !== readFileSync(issuer.cert, 'utf8')))
    copyFileSync(issuer.cert, ca.cert);
  const leaf = (spec: LeafSpec): CertPair => {
    const pair = pairIn(dir, spec.file);
    if (!usable(pair, issuer))
      issue({
        out: pair,
        subject: spec.subject,
        extensions: [...LEAF_EXTENSIONS, ...spec.extensions],
        days: LEAF_DAYS,
        ca: issuer,
      });
    return pair;
  };
  return {
    dir,
    caDir,
    ca,
    server: leaf(LEAVES.server),
    clients: {
      caller: leaf(LEAVES.caller),
      worker: leaf(LEAVES.worker),
      receiver: leaf(LEAVES.receiver),
      operator: leaf(LEAVES.operator),
    },
    serverName: TEMPORAL_SERVER_NAME,
  };
}

/**
 * A partner's booking-caller certificate from its certificate signing request: the request's signature is checked
 * and only its public key is used. The subject is ours (O=<us>, OU=booking-callers, CN=partner:<partner>), whatever
 * the request names (an OU=operators in it changes nothing), and so are the extensions (client use only).
 */
export function issuePartnerCertificate(options: {
  /** The folder with the CA's ca.pem and ca.key. */
  caDir: string;
  partner: string;
  csr: string;
  out: string;
  days?: number;
}): { cert: string; subject: string } {
  const subject = partnerSubject(options.partner);
  const ca = pairIn(options.caDir, 'ca');
  if (!existsSync(ca.key)) throw new Error(`no CA key at ${ca.key}`);
  openssl(['req', '-in', options.csr, '-noout', '-verify'], 'req -verify (the request is not signed by its key)');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'partner-cert-'));
  try {
    const ext = path.join(tmp, 'ext.cnf');
    writeFileSync(ext, ['[ext]', ...LEAF_EXTENSIONS, 'extendedKeyUsage = clientAuth', ''].join('\n'));
    const subjectArg = Object.entries(subject)
      .map(([k, v]) => `/${k}=${v}`)
      .join('');
    openssl(
      [
        'x509',
        '-req',
        '-in',
        options.csr,
        '-CA',
        ca.cert,
        '-CAkey',
        ca.key,
        '-subj',
        subjectArg,
        '-extfile',
        ext,
        '-extensions',
        'ext',
        '-sha256',
        '-days',
        String(options.days ?? LEAF_DAYS),
        '-set_serial',
        `0x${randomBytes(16).toString('hex')}`,
        '-out',
        options.out,
      ],
      `x509 -req for partner ${options.partner}`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return {
    cert: options.out,
    subject: Object.entries(subject)
      .map(([k, v]) => `${k}=${v}`)
      .join(', '),
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

const USAGE = [
  'usage: node certs.js DIR   (the CA and certificates, made in DIR once, reused after)',
  '       node certs.js issue-partner --ca-dir DIR --partner NAME --csr FILE --out FILE',
  "         (a partner's booking-caller certificate: OU=booking-callers, CN=partner:NAME, whatever the request names)",
  '',
].join('\n');

/** `issue-partner --ca-dir DIR --partner NAME --csr FILE --out FILE`: every flag once, nothing else. */
function issuePartnerMain(args: readonly string[]): number {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i]!, args[i + 1]];
    if (!['--ca-dir', '--partner', '--csr', '--out'].includes(flag) || value === undefined || flag in flags) {
      process.stderr.write(USAGE);
      return 2;
    }
    flags[flag] = value;
  }
  const [caDir, partner, csr, out] = ['--ca-dir', '--partner', '--csr', '--out'].map((f) => flags[f]);
  if (!caDir || !partner || !csr || !out) {
    process.stderr.write(USAGE);
    return 2;
  }
  try {
    const issued = issuePartnerCertificate({ caDir: path.resolve(caDir), partner, csr, out });
    process.stdout.write(`${issued.cert}: ${issued.subject}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/**
 * `node certs.js DIR`: makes the CA and certificates in DIR on the first run and keeps them after (a leaf near
 * expiry is issued again), then lists the files. docker-compose's one-shot `certs` service runs it into a volume.
 * `node certs.js issue-partner ...`: a partner's certificate from its request (issuePartnerCertificate).
 */
export function main(argv: readonly string[]): number {
  if (argv[0] === 'issue-partner') return issuePartnerMain(argv.slice(1));
  const [dir, ...rest] = argv;
  if (!dir || rest.length > 0 || dir.startsWith('-')) {
    process.stderr.write(USAGE);
    return 2;
  }
  const certs = ensureCertificates(path.resolve(dir));
  const pairs: Array<[string, CertPair]> = [
    ['ca', certs.ca],
    ['server', certs.server],
    ['booking caller', certs.clients.caller],
    ['worker', certs.clients.worker],
    ['callback receiver', certs.clients.receiver],
    ['operator', certs.clients.operator],
  ];
  for (const [who, pair] of pairs) process.stdout.write(`${who}: ${pair.cert} ${pair.key}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
