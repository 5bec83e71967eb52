/**
 * The production topology's private certificate authority and the certificates it issues, made with the
 * `openssl` command on first start and kept in the data folder (reused later; a leaf close to expiry, or whose
 * subject is not the one below, is issued again from the same CA, so exported paths stay valid). One certificate per
 * job; the organizational unit (OU) names the job and the common name (CN) whose it is, and the nodes' authorizer
 * (dev/temporal/authz-server) allows each only its calls, and workers, receivers and partners only in their namespace:
 *   ca.pem                                the private CA every Temporal node and client trusts (public)
 *   server.pem / .key                     OU=temporal-cluster: the nodes, frontend and internode (server and client use)
 *   worker.pem / .key                     OU=workers, CN=worker:<namespace>: the booking workers of the stack's
 *                                         namespace (poll and answer tasks there only)
 *   worker-<namespace>.pem / .key         the same for each other namespace the stack serves (a partner's)
 *   booking-caller.pem / .key             OU=booking-callers, CN=partner:<name>: a partner's service, `npm run book`
 *   callback-receiver.pem / .key          OU=callback-receivers, CN=receiver:<namespace>: the callback receiver
 *                                         (`npm run callbacks`) of the stack's namespace
 *   callback-receiver-<namespace>.pem     the same for each other namespace
 *   operator.pem / .key                   OU=operators, CN=operator:stack-setup: the stack's own setup
 *   operator-console.pem / .key           OU=operators, CN=operator:console: the operator console
 *   operator-web-ui.pem / .key            OU=operators, CN=operator:web-ui: the Web UI server
 * People get an operator certificate each, CN=operator:<name> (`certs.ts issue-operator <name>`), so the audit log
 * and the CLI's records tell them apart; a worker or receiver host outside the stack gets one for its namespace
 * (`issue-worker`, `issue-receiver`). The CA's key (ca.key, with a copy of ca.pem) lives in its own folder (`caDir`,
 * mode 0700, the key 0600), apart from the folder every process is pointed at; it is needed only to issue, e.g. a
 * partner's certificate (`certs.ts issue-partner`, issuePartnerCertificate), which sets the subject itself.
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
import { randomBytes, X509Certificate } from 'node:crypto';
import type { TLSConfig } from '@temporalio/client';

/** The name clients check the nodes' certificate against (TEMPORAL_TLS_SERVER_NAME); also valid: 127.0.0.1, temporal. */
export const TEMPORAL_SERVER_NAME = 'localhost';

export interface CertPair {
  cert: string;
  key: string;
}

/**
 * The client identities the CA issues, one job each (see IDENTITY_UNITS). In StackCertificates.clients: the stack's
 * own partner, the worker and receiver of the stack's namespace, and the stack's own setup as operator.
 */
export type ClientIdentity = 'caller' | 'worker' | 'receiver' | 'operator';

/** Who presents a certificate: one of the stack's identities, or any pair issued from its CA (a person's, a partner's). */
export type Presenter = ClientIdentity | CertPair;

/** The OU of each identity's certificate: the authorizer reads the job from it, and nothing else. */
export const IDENTITY_UNITS = {
  node: 'temporal-cluster',
  worker: 'workers',
  caller: 'booking-callers',
  receiver: 'callback-receivers',
  operator: 'operators',
} as const;

/** A namespace's own worker and callback-receiver certificates (CN=worker:<namespace>, CN=receiver:<namespace>). */
export interface NamespaceCertificates {
  worker: CertPair;
  receiver: CertPair;
}

export interface StackCertificates {
  dir: string;
  ca: CertPair;
  /** The Temporal nodes' certificate (frontend and internode). */
  server: CertPair;
  /** worker and receiver: those of `namespace`; operator: the stack's setup (CN=operator:stack-setup). */
  clients: Record<ClientIdentity, CertPair>;
  /** The namespace `worker.pem` and `callback-receiver.pem` act in (the stack's; `default`). */
  namespace: string;
  /** Each namespace's worker and receiver certificates, `namespace`'s included. */
  namespaces: Record<string, NamespaceCertificates>;
  /** The stack's own operator processes, each with a CN of its own so the audit log tells them apart. */
  operators: { console: CertPair; webUi: CertPair };
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

/**
 * A namespace as a worker's or receiver's certificate names it (CN=worker:<namespace>): Temporal's namespace
 * characters, short enough for the 64-character limit of a CN.
 */
export const NAMESPACE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,54}$/;

/** The subject of a worker's certificate: it polls, answers and starts in `namespace` only. */
export function workerSubject(namespace: string): Record<string, string> {
  if (!NAMESPACE_NAME.test(namespace)) throw new Error(`namespace ${JSON.stringify(namespace)}: use ${NAMESPACE_NAME}`);
  return { O: ORG, OU: IDENTITY_UNITS.worker, CN: `worker:${namespace}` };
}

/** The subject of a callback receiver's certificate: it hints and checks in `namespace` only. */
export function receiverSubject(namespace: string): Record<string, string> {
  if (!NAMESPACE_NAME.test(namespace)) throw new Error(`namespace ${JSON.stringify(namespace)}: use ${NAMESPACE_NAME}`);
  return { O: ORG, OU: IDENTITY_UNITS.receiver, CN: `receiver:${namespace}` };
}

/** An operator's name in its certificate (CN=operator:<name>): the same scheme as a partner's. */
export const OPERATOR_NAME = PARTNER_NAME;

/** The CNs of the stack's own operator processes (operator:<name>): never a person's. */
export const STACK_OPERATORS = { setup: 'stack-setup', console: 'console', webUi: 'web-ui' } as const;

/** The subject of an operator's certificate, a person's or one of the stack's own processes'. */
export function operatorSubject(name: string): Record<string, string> {
  if (!OPERATOR_NAME.test(name)) throw new Error(`operator name ${JSON.stringify(name)}: use ${OPERATOR_NAME}`);
  return { O: ORG, OU: IDENTITY_UNITS.operator, CN: `operator:${name}` };
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

const CLIENT_USE = ['extendedKeyUsage = clientAuth'];

const SERVER_LEAF: LeafSpec = {
  file: 'server',
  subject: { O: ORG, OU: IDENTITY_UNITS.node, CN: 'temporal-frontend' },
  // clientAuth too: each node presents this certificate when it calls another node (internode mTLS).
  extensions: [
    'extendedKeyUsage = serverAuth, clientAuth',
    `subjectAltName = DNS:${TEMPORAL_SERVER_NAME}, DNS:temporal, IP:127.0.0.1`,
  ],
};

// The stack's own partner: the same subject scheme issuePartnerCertificate gives every partner.
const CALLER_LEAF: LeafSpec = { file: 'booking-caller', subject: partnerSubject('stack'), extensions: CLIENT_USE };

/** The stack's own operator processes: `operator` (its setup), `operator-console`, `operator-web-ui`. */
const OPERATOR_LEAVES = {
  setup: { file: 'operator', subject: operatorSubject(STACK_OPERATORS.setup), extensions: CLIENT_USE },
  console: { file: 'operator-console', subject: operatorSubject(STACK_OPERATORS.console), extensions: CLIENT_USE },
  webUi: { file: 'operator-web-ui', subject: operatorSubject(STACK_OPERATORS.webUi), extensions: CLIENT_USE },
} satisfies Record<keyof typeof STACK_OPERATORS, LeafSpec>;

/** A namespace's worker and receiver: `worker.pem` for the stack's own namespace, `worker-<namespace>.pem` for others. */
function namespaceLeaves(namespace: string, own: boolean): Record<keyof NamespaceCertificates, LeafSpec> {
  const suffix = own ? '' : `-${namespace}`;
  return {
    worker: { file: `worker${suffix}`, subject: workerSubject(namespace), extensions: CLIENT_USE },
    receiver: { file: `callback-receiver${suffix}`, subject: receiverSubject(namespace), extensions: CLIENT_USE },
  };
}

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

/**
 * A new P-256 key and a certificate request for `subject` (openssl's `/O=…/OU=…/CN=…` form), made as a partner makes
 * them (`openssl req -new -newkey ec`); throws with openssl's stderr when it fails.
 */
export function newKeyAndRequest(options: { key: string; csr: string; subject: string }): void {
  openssl(
    [
      ...['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'],
      ...['-keyout', options.key, '-out', options.csr, '-subj', options.subject],
    ],
    'req',
  );
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

/** The subject as node's X509Certificate reads it ("O=…\nOU=…\nCN=…"), in the order the request wrote it. */
const subjectText = (subject: Record<string, string>) =>
  Object.entries(subject)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');

/**
 * True when the certificate exists, names `subject`, was issued by `ca` and stays valid for the renewal window. A
 * certificate from before workers and receivers were bound to a namespace (CN=booking-worker) is issued again.
 */
function usable(pair: CertPair, ca: CertPair, subject: Record<string, string>): boolean {
  if (!existsSync(pair.cert) || !existsSync(pair.key)) return false;
  try {
    if (new X509Certificate(readFileSync(pair.cert)).subject !== subjectText(subject)) return false;
  } catch {
    return false;
  }
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
 * The CA and certificates: made when missing, kept when present (a leaf near expiry, not from this CA or not of the
 * subject below is issued again). The certificates and ca.pem go to `dir`; the CA's key to `caDir` (default: `dir`
 * itself, as docker-compose's certs service keeps it in a volume no other container mounts). `caName` names a
 * different CA, for a test's stranger. Workers and receivers get a certificate per namespace: `namespace` (default
 * `default`) in worker.pem and callback-receiver.pem, each of `extraNamespaces` in worker-<namespace>.pem and
 * callback-receiver-<namespace>.pem.
 */
export function ensureCertificates(
  dir: string,
  options: { caName?: string; caDir?: string; namespace?: string; extraNamespaces?: readonly string[] } = {},
): StackCertificates {
  privateDir(dir);
  const caDir = options.caDir ?? dir;
  const issuer = ensureCa(dir, caDir, options.caName);
  const ca = { cert: path.join(dir, 'ca.pem'), key: issuer.key };
  if (caDir !== dir && (!existsSync(ca.cert) || readFileSync(ca.cert, 'utf8') !== readFileSync(issuer.cert, 'utf8')))
    copyFileSync(issuer.cert, ca.cert);
  const leaf = (spec: LeafSpec): CertPair => ensureLeaf(dir, spec, issuer);
  const namespace = options.namespace ?? 'default';
  const namespaces: Record<string, NamespaceCertificates> = {};
  for (const ns of [namespace, ...(options.extraNamespaces ?? []).filter((n) => n !== namespace)]) {
    const specs = namespaceLeaves(ns, ns === namespace);
    namespaces[ns] = { worker: leaf(specs.worker), receiver: leaf(specs.receiver) };
  }
  return {
    dir,
    caDir,
    ca,
    server: leaf(SERVER_LEAF),
    clients: {
      caller: leaf(CALLER_LEAF),
      worker: namespaces[namespace]!.worker,
      receiver: namespaces[namespace]!.receiver,
      operator: leaf(OPERATOR_LEAVES.setup),
    },
    namespace,
    namespaces,
    operators: { console: leaf(OPERATOR_LEAVES.console), webUi: leaf(OPERATOR_LEAVES.webUi) },
    serverName: TEMPORAL_SERVER_NAME,
  };
}

/** `dir/<spec.file>.pem` and `.key`: kept when usable, else issued from `issuer`. */
function ensureLeaf(dir: string, spec: LeafSpec, issuer: CertPair): CertPair {
  const pair = pairIn(dir, spec.file);
  if (!usable(pair, issuer, spec.subject))
    issue({
      out: pair,
      subject: spec.subject,
      extensions: [...LEAF_EXTENSIONS, ...spec.extensions],
      days: LEAF_DAYS,
      ca: issuer,
    });
  return pair;
}

/** The certificates one person or host holds, issued from the stack's CA into a folder of its own. */
export interface IssuedClient {
  pair: CertPair;
  /** A copy of the CA's certificate, so the folder is all its holder needs. */
  ca: string;
  subject: string;
  /** Temporal's own client variables for this certificate (TEMPORAL_TLS_*), also in `<folder>/<file>.env`. */
  env: Record<string, string>;
  envFile: string;
}

/** What `issue-operator`, `issue-worker` and `issue-receiver` issue: the subject for a name, and the file it goes to. */
const ISSUABLE = {
  operator: (name: string) => {
    if ((Object.values(STACK_OPERATORS) as string[]).includes(name))
      throw new Error(`operator:${name} is one of the stack's own processes; give a person's name`);
    return { file: `operator-${name}`, subject: operatorSubject(name) };
  },
  worker: (namespace: string) => ({ file: `worker-${namespace}`, subject: workerSubject(namespace) }),
  receiver: (namespace: string) => ({ file: `callback-receiver-${namespace}`, subject: receiverSubject(namespace) }),
} as const;

export type IssuableIdentity = keyof typeof ISSUABLE;

/**
 * A certificate from the CA in `caDir` into the folder `out` (mode 0700; the key, made here, 0600): an operator's for
 * a person (CN=operator:<name>), or a worker's or receiver's for a namespace (CN=worker:<namespace>,
 * CN=receiver:<namespace>). The subject is set here from the name. Kept when the folder already holds a usable one
 * for the same subject (delete the folder to issue anew).
 */
export function issueClientCertificate(options: {
  who: IssuableIdentity;
  /** The person's name (operator) or the namespace (worker, receiver). */
  name: string;
  caDir: string;
  out: string;
}): IssuedClient {
  const { file, subject } = ISSUABLE[options.who](options.name);
  const issuer = pairIn(options.caDir, 'ca');
  if (!existsSync(issuer.key) || !existsSync(issuer.cert))
    throw new Error(`no CA (ca.pem, ca.key) in ${options.caDir}`);
  const out = path.resolve(options.out);
  privateDir(out);
  const ca = path.join(out, 'ca.pem');
  copyFileSync(issuer.cert, ca);
  const pair = ensureLeaf(out, { file, subject, extensions: CLIENT_USE }, issuer);
  const env = {
    TEMPORAL_TLS_CLIENT_CERT_PATH: pair.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pair.key,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
    TEMPORAL_TLS_SERVER_NAME: TEMPORAL_SERVER_NAME,
  };
  const envFile = path.join(out, `${file}.env`);
  writeFileSync(envFile, exportLines(env).join('\n') + '\n');
  return { pair, ca, subject: subjectLine(subject), env, envFile };
}

const exportLines = (env: Record<string, string>) => Object.entries(env).map(([k, v]) => `export ${k}=${v}`);

/** "O=…, OU=…, CN=…", as issuePartnerCertificate answers. */
const subjectLine = (subject: Record<string, string>) =>
  Object.entries(subject)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

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
  return { cert: options.out, subject: subjectLine(subject) };
}

const pairOf = (certs: StackCertificates, who: Presenter): CertPair =>
  typeof who === 'string' ? certs.clients[who] : who;

/** Temporal's own client variables (envconfig: every SDK, the CLI) for one identity of the stack, or a pair of its CA. */
export function temporalTlsEnv(certs: StackCertificates, who: Presenter): Record<string, string> {
  const pair = pairOf(certs, who);
  return {
    TEMPORAL_TLS_CLIENT_CERT_PATH: pair.cert,
    TEMPORAL_TLS_CLIENT_KEY_PATH: pair.key,
    TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca.cert,
    TEMPORAL_TLS_SERVER_NAME: certs.serverName,
  };
}

/** The same identity as a TS SDK connection's `tls` option, for the stack's own calls. */
export function connectionTls(certs: StackCertificates, who: Presenter): TLSConfig {
  const pair = pairOf(certs, who);
  return {
    serverNameOverride: certs.serverName,
    serverRootCACertificate: readFileSync(certs.ca.cert),
    clientCertPair: { crt: readFileSync(pair.cert), key: readFileSync(pair.key) },
  };
}

const USAGE = [
  'usage: node certs.js DIR   (the CA and certificates, made in DIR once, reused after)',
  '       node certs.js issue-partner --ca-dir DIR --partner NAME --csr FILE --out FILE',
  "         (a partner's booking-caller certificate: OU=booking-callers, CN=partner:NAME, whatever the request names)",
  '       node certs.js issue-operator NAME [--ca-dir DIR] [--out DIR]',
  "         (a person's operator certificate: OU=operators, CN=operator:NAME)",
  '       node certs.js issue-worker NAMESPACE [--ca-dir DIR] [--out DIR]',
  '       node certs.js issue-receiver NAMESPACE [--ca-dir DIR] [--out DIR]',
  "         (a worker's or callback receiver's certificate, acting in NAMESPACE only: CN=worker:NAMESPACE,",
  '          CN=receiver:NAMESPACE)',
  '         --ca-dir: the folder with ca.pem and ca.key (default: $STACK_DATA_DIR/prod/ca, .data/prod/ca: the',
  "         stack's CA); --out: where the key, the certificate, ca.pem and an .env file go (default: beside the CA,",
  '         <data>/prod/operators/NAME, <data>/prod/workers/NAMESPACE, <data>/prod/receivers/NAMESPACE). A usable',
  '         certificate already there is kept. Prints the TEMPORAL_TLS_* lines to export.',
  '',
].join('\n');

/** Flags given once each, all of them among `known`; undefined (after printing the usage) when not. */
function flagsOf(args: readonly string[], known: readonly string[]): Record<string, string> | undefined {
  const flags: Record<string, string> = {};
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i]!, args[i + 1]];
    if (!known.includes(flag) || value === undefined || flag in flags) {
      process.stderr.write(USAGE);
      return undefined;
    }
    flags[flag] = value;
  }
  return flags;
}

/** `issue-partner --ca-dir DIR --partner NAME --csr FILE --out FILE`: every flag once, nothing else. */
function issuePartnerMain(args: readonly string[]): number {
  const flags = flagsOf(args, ['--ca-dir', '--partner', '--csr', '--out']);
  if (!flags) return 2;
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

/** Where `issue-<who>` puts a certificate by default: beside the stack's CA folder. */
const DEFAULT_FOLDERS: Record<IssuableIdentity, string> = {
  operator: 'operators',
  worker: 'workers',
  receiver: 'receivers',
};

/** `issue-operator NAME`, `issue-worker NAMESPACE`, `issue-receiver NAMESPACE`, each with `--ca-dir`, `--out`. */
function issueClientMain(who: IssuableIdentity, args: readonly string[]): number {
  const [name, ...rest] = args;
  if (!name || name.startsWith('-')) {
    process.stderr.write(USAGE);
    return 2;
  }
  const flags = flagsOf(rest, ['--ca-dir', '--out']);
  if (!flags) return 2;
  const caDir = path.resolve(flags['--ca-dir'] ?? path.join(process.env.STACK_DATA_DIR || '.data', 'prod', 'ca'));
  const out = path.resolve(flags['--out'] ?? path.join(path.dirname(caDir), DEFAULT_FOLDERS[who], name));
  try {
    const issued = issueClientCertificate({ who, name, caDir, out });
    process.stdout.write(
      [
        `# ${issued.pair.cert}: ${issued.subject}`,
        `# export these (or: source ${issued.envFile}), with TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE:`,
        ...exportLines(issued.env),
        '',
      ].join('\n'),
    );
    return 0;
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/**
 * `node certs.js DIR`: makes the CA and certificates in DIR on the first run and keeps them after (a leaf near
 * expiry is issued again), then lists the files. docker-compose's one-shot `certs` service runs it into a volume.
 * `node certs.js issue-partner ...`: a partner's certificate from its request (issuePartnerCertificate);
 * `issue-operator NAME`, `issue-worker NAMESPACE`, `issue-receiver NAMESPACE`: one of ours (issueClientCertificate).
 */
export function main(argv: readonly string[]): number {
  if (argv[0] === 'issue-partner') return issuePartnerMain(argv.slice(1));
  if (argv[0] === 'issue-operator') return issueClientMain('operator', argv.slice(1));
  if (argv[0] === 'issue-worker') return issueClientMain('worker', argv.slice(1));
  if (argv[0] === 'issue-receiver') return issueClientMain('receiver', argv.slice(1));
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
    ['operator (console)', certs.operators.console],
    ['operator (Web UI)', certs.operators.webUi],
  ];
  for (const [who, pair] of pairs) process.stdout.write(`${who}: ${pair.cert} ${pair.key}\n`);
  return 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
