/**
 * Regenerates docs/configuration.md from the worker's config schema (`EnvSchema` in src/runtime/config/index.ts):
 * `npm run docs:config`. test/unit/config-docs.test.ts fails when the committed page differs from what this
 * renders, so a variable added to the schema cannot go undocumented.
 *
 * Each variable's name, default and allowed values come from the schema itself. Its meaning is the
 * longer text in MEANINGS below when there is one, else the JSDoc comment above it in the schema's source.
 * Variables read by other processes (the codec server, the stack launchers, the sandbox) are not in the
 * schema and are listed from the tables at the end of this file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import type { z } from 'zod';
import { EnvSchema } from '../src/runtime/config/index';

const ROOT = path.resolve(__dirname, '..');
export const CONFIG_DOC_PATH = path.join(ROOT, 'docs/configuration.md');
const SCHEMA_SOURCES = ['src/runtime/config/index.ts', 'src/api/codec/config.ts'];

/** Where a schema variable is listed; a variable in no group lands in "Other" (and the test fails). */
const GROUPS: ReadonlyArray<{ title: string; intro?: string; keys: readonly string[] }> = [
  {
    title: 'Supplier',
    keys: [
      'SUPPLIER_BASE_URL',
      'SUPPLIER_TOKEN',
      'SUPPLIER_APP_KEY',
      'SUPPLIER_APP_SECRET',
      'SUPPLIER_PROFILE',
      'SUPPLIER_ACCOUNTS_FILE',
      'SUPPLIER_MAX_CONNECTIONS',
      'SUPPLIER_RATE_LIMIT',
      'SUPPLIER_QUERY_BATCH_WINDOW_MS',
      'SUPPLIER_QUERY_BATCH_MAX_REFERENCES',
      'SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS',
    ],
  },
  {
    title: 'Worker',
    keys: [
      'BOOKING_TASK_QUEUE',
      'WORKER_MAX_CONCURRENT_ACTIVITIES',
      'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
      'WORKER_MAX_CACHED_WORKFLOWS',
      'WORKER_REGISTER_SEARCH_ATTRIBUTES',
      'WORKER_WORKFLOW_BUNDLE',
      'WORKER_DEPLOYMENT_NAME',
      'WORKER_BUILD_ID',
      'RECOVERY_TESTING',
    ],
  },
  {
    title: 'Logs, metrics and traces',
    intro:
      'All of it is off or plain text by default; [operations.md](operations.md#observability) describes what each ' +
      'produces.',
    keys: [
      'LOG_LEVEL',
      'LOG_FORMAT',
      'WORKER_METRICS_PORT',
      'WORKER_METRICS_HOST',
      'OTEL_TRACES_EXPORTER',
      'OTEL_SERVICE_NAME',
    ],
  },
  {
    title: 'Payload encryption',
    intro: 'The format, for any language: [payload-encryption.md](payload-encryption.md).',
    keys: ['PAYLOAD_ENCRYPTION_KEYS', 'PAYLOAD_ENCRYPTION_KEY_ID'],
  },
  {
    title: 'Supplier callbacks',
    intro:
      'Read by the worker (the URL Book sends) and by the callback receiver, `npm run callbacks` ' +
      '([booking-lifecycle.md](booking-lifecycle.md#callback-receiver)).',
    keys: [
      'SUPPLIER_CALLBACK_URL',
      'SUPPLIER_CALLBACK_SECRET',
      'CALLBACKS_HOST',
      'CALLBACKS_PORT',
      'CALLBACKS_ADMIN_HOST',
      'CALLBACKS_ADMIN_PORT',
      'CALLBACKS_MAX_CONNECTIONS',
    ],
  },
  {
    title: 'Reconciliation sweep',
    intro: 'What the sweep does: [booking-lifecycle.md](booking-lifecycle.md#reconciliation-sweep).',
    keys: [
      'RECONCILIATION_SCHEDULE',
      'RECONCILIATION_EVERY_MINUTES',
      'RECONCILIATION_LOOKBACK_MINUTES',
      'RECONCILIATION_SETTLE_MINUTES',
      'RECONCILIATION_SLICE_MINUTES',
      'RECONCILIATION_CHECK_IN_HOURS',
      'RECONCILIATION_CANCEL_ORPHANS',
      'RECONCILIATION_ORPHAN_FEE_CEILING',
    ],
  },
];

/** Longer meanings than the schema's comments carry (what the README's table said). */
const MEANINGS: Readonly<Record<string, string>> = {
  BOOKING_TASK_QUEUE:
    'task queue of workers and clients (QueryOrders runs on `<task queue>-query-orders`, which every worker also polls)',
  SUPPLIER_BASE_URL: 'supplier API (`{base_url}` of the spec)',
  SUPPLIER_TOKEN: 'a static bearer token, or `SUPPLIER_APP_KEY` + `SUPPLIER_APP_SECRET`; one credential is required',
  SUPPLIER_APP_KEY:
    'with `SUPPLIER_APP_SECRET`: credentials for Ticket (cached, renewed before expiry, re-issued once on 401)',
  SUPPLIER_APP_SECRET: 'see `SUPPLIER_APP_KEY`',
  SUPPLIER_PROFILE:
    'JSON overriding any part of the [supplier profile](#the-supplier-profile), e.g. `{"timeoutsMs":{"book":60000}}`. ' +
    'Strict: a key the profile does not have is an error naming it (`SUPPLIER_PROFILE.orderStatus: unknown key "canceled"`), ' +
    'never silently ignored. Each client timeout must sit 10 s below the timeout of every activity that sends that call ' +
    "(CheckAvail 30 s, Book 120 s, QueryOrders 30 s for a booking's poll and the sweep's listing, Cancel 30 s: so Book ≤ 110 s, " +
    'the others ≤ 20 s), so the client classifies a slow answer first and a timed-out activity never runs beside its own request',
  SUPPLIER_ACCOUNTS_FILE:
    'a JSON file of several supplier accounts (id, base URL, credential files, profile, partners): each with its own ' +
    "queues, limiter and tokens; a booking names one in `supplier` or takes its partner's default ([suppliers.md](suppliers.md)). " +
    'A bad account is named at start and left out',
  SUPPLIER_MAX_CONNECTIONS: 'pooled keep-alive connections to the supplier',
  SUPPLIER_RATE_LIMIT:
    "`on`: every request waits for a token of the profile's `rateLimits` (per operation and overall, per worker process), " +
    "so the worker never sends over the supplier's limit. Across workers, QueryOrders is also capped fleet-wide by its task " +
    "queue's rate limit (the profile's `rateLimits.queryOrders`); for CheckAvail and Book with N workers on one credential, " +
    'set those limits to 1/N',
  SUPPLIER_QUERY_BATCH_WINDOW_MS:
    'order lookups arriving while a QueryOrders is in flight wait this long to share the next request',
  SUPPLIER_QUERY_BATCH_MAX_REFERENCES: '`customerReferenceNos` carried by one QueryOrders request at most',
  SUPPLIER_QUERY_BATCH_MIN_INTERVAL_MS:
    'least time between two QueryOrders requests of one worker (a full batch goes at once): a poll after a quiet spell goes ' +
    'at once, while in a recovery storm polls collect for up to this long and share a request',
  WORKER_MAX_CONCURRENT_ACTIVITIES: 'activities one worker runs at once',
  WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: 'workflow tasks one worker runs at once',
  WORKER_MAX_CACHED_WORKFLOWS:
    'sticky cache size; each cached booking costs about 4.4 MB of worker RSS (measured), and a parked booking loses little ' +
    'by replaying when its timer fires',
  RECOVERY_TESTING:
    '`on`: the worker accepts bookings with `recovery.testing: true`, whose recovery settings may go beyond the production ' +
    'bounds (Book re-sent sooner than 10 minutes, short deadlines). `npm start` and `npm run stack:prod` turn it on (they ' +
    'book against the sandbox); tests, chaos runs and benchmarks run their workers with it. Never on a worker that books ' +
    'for real: it refuses such a booking, naming `recovery.testing`',
  WORKER_REGISTER_SEARCH_ATTRIBUTES:
    'before polling, the worker checks that the namespace exists and that the search attributes the workflow writes ' +
    '(`BookingStage`, `CustomerReferenceNo`, Keyword) are registered with that type. `on`: it registers missing ones and ' +
    'waits until they are listed. `off`, or a service that refuses (permission denied, Temporal Cloud): it exits 1 at once, ' +
    'naming each attribute with its `temporal operator search-attribute create …` command (and the `tcld namespace ' +
    'search-attributes add …` one for Cloud). A wrong type or a missing namespace is always an error naming the fix. Where ' +
    'the service cannot answer a check (UNIMPLEMENTED, as on the Java time-skipping test server, or PERMISSION_DENIED to ' +
    'read), the worker logs one WARN naming what it could not verify and the commands that set it up, then polls. ' +
    '`npm run temporal:setup` does the same for an operator (exiting 1 where it could not verify), and is safe to run ' +
    'again; `-- --check` only checks',
  WORKER_WORKFLOW_BUNDLE:
    'a workflow bundle built ahead by `npm run bundle -- <file>`: a restarted worker polls in about a second instead of ' +
    'after webpack. A traced worker needs one built with `npm run bundle -- --tracing`; a worker refuses a bundle that ' +
    'does not match its tracing, naming the fix',
  WORKER_DEPLOYMENT_NAME:
    "the Worker Deployment this worker is a build of (Temporal's Worker Versioning): runs finish on the build they " +
    'started on while a new build takes new runs; `npm run deploy` moves traffic between builds (docs/operations.md, ' +
    '"Deploying a new build"). Unset: unversioned, every worker takes every task. `npm run stack:prod`, the chaos runs ' +
    'and compose set it',
  WORKER_BUILD_ID:
    "this worker's build: default `<package version>+<commit>` (`BUILD_COMMIT`, else git's HEAD, `.dirty` with changes " +
    'under src/, new files included; with neither, `+code-<hash>` of the code itself); needs `WORKER_DEPLOYMENT_NAME`. ' +
    'It must change whenever the workflow code does',
  WORKER_METRICS_PORT:
    "Prometheus endpoint `/metrics`: the SDK's metrics and the booking's, one endpoint per worker process; off when unset " +
    '(`npm start`: 9464)',
  WORKER_METRICS_HOST:
    'address the metrics endpoint listens on; `0.0.0.0` for a scraper in another container (compose sets it)',
  LOG_FORMAT:
    "`json`: one JSON object per line (the SDK's lines and ours: `workflowId`, `runId`, `activity`, `bookingStage`, …)",
  OTEL_TRACES_EXPORTER:
    '`otlp` (OTLP over HTTP, configured by the standard `OTEL_EXPORTER_OTLP_*` variables) or `console`; `none` is off',
  OTEL_SERVICE_NAME: "the spans' resource (with the standard `OTEL_RESOURCE_ATTRIBUTES`)",
  PAYLOAD_ENCRYPTION_KEYS:
    '`keyId:base64key,…` (32-byte keys): every payload in history is AES-256-GCM encrypted; list old keys to keep reading ' +
    'old payloads. Clients (`connectClient`, `npm run book`) read the same variables. Unset: off (`npm start` always ' +
    'encrypts, with a key it keeps in `.data/payload-encryption-keys`)',
  PAYLOAD_ENCRYPTION_KEY_ID:
    'the key new payloads are encrypted with, by default the last key listed (rotate: add a key, then switch to it)',
  CALLBACKS_PORT: "the callback receiver's public port (`POST /callbacks/order-status`)",
  CALLBACKS_HOST: "the callback receiver's interface",
  CALLBACKS_ADMIN_PORT: "port of the receiver's admin listener (`/metrics`, `/callbacks/stats`)",
  CALLBACKS_ADMIN_HOST:
    "interface of the receiver's admin listener: loopback (or a private interface) for the scraper, never the public one",
  RECONCILIATION_LOOKBACK_MINUTES: 'how far back a sweep looks at orders, by booking time and by cancellation time',
};

/** Variables outside the worker's schema, read by the Temporal SDK or by other processes of the project. */
const OTHER_TABLES: ReadonlyArray<{ title: string; intro: string; rows: ReadonlyArray<[string, string, string]> }> = [
  {
    title: 'Temporal connection',
    intro:
      'Read by `@temporalio/envconfig`, the same way by the worker, the client helper, `npm run book` and the callback receiver.',
    rows: [
      ['`TEMPORAL_ADDRESS`', '`localhost:7233`', 'Temporal frontend'],
      ['`TEMPORAL_NAMESPACE`', '`default`', 'namespace'],
      [
        '`TEMPORAL_API_KEY`, `TEMPORAL_TLS_*`, `TEMPORAL_PROFILE`, `TEMPORAL_CONFIG_FILE`',
        '—',
        "as in the Temporal SDKs' environment configuration",
      ],
    ],
  },
  {
    title: 'Codec server',
    intro:
      '`npm run codec-server`: decrypts payloads for the Web UI and the `temporal` CLI ' +
      '([payload-encryption.md](payload-encryption.md#the-codec-server-and-the-web-ui)).',
    rows: [
      ['`CODEC_SERVER_HOST`', '`127.0.0.1`', 'interface; beyond loopback it needs `CODEC_SERVER_TOKEN`'],
      ['`CODEC_SERVER_PORT`', '`8235`', 'port'],
      [
        '`CODEC_ALLOWED_ORIGIN`',
        '`http://localhost:8233`',
        "the Web UI's origin: the only origin a browser may call it from (with credentials)",
      ],
      [
        '`CODEC_SERVER_TOKEN`',
        '—',
        'a bearer token every call must carry (compared in constant time), or, from the UI, the session cookie a browser gets by typing it into `/login`',
      ],
      [
        '`CODEC_SERVER_ALLOW_ANONYMOUS`',
        '`off`',
        '`on`: listen beyond loopback without a token (a WARN line at start; only behind something that authenticates every caller)',
      ],
    ],
  },
  {
    title: 'The operator console',
    intro:
      "`npm run console` (`src/operators/console/main.ts`; `npm start` and `npm run stack:prod` run it too), with the workers' " +
      'Temporal variables and payload keys ([operations.md](operations.md#the-operator-console)).',
    rows: [
      ['`CONSOLE_HOST`', '`127.0.0.1`', 'interface; beyond loopback it needs operator tokens or client certificates'],
      ['`CONSOLE_PORT`', '`8238`', "port (also the stacks' console port)"],
      [
        '`CONSOLE_OPERATOR_TOKENS_FILE`',
        '—',
        'a file of `name:token` lines, one per operator, 128 bits or more each: who logs in is recorded by name',
      ],
      [
        '`CONSOLE_TOKEN`',
        '—',
        'one token for every operator (recorded as `console-token`), typed into `/login` only; 128 bits or more',
      ],
      [
        '`CONSOLE_SESSION_SECRET`',
        'random at start',
        'the key the session cookie is signed with, 128 bits or more (unset: everyone logs in again after a restart)',
      ],
      [
        '`CONSOLE_TLS_CERT`, `_KEY`, `_CLIENT_CA`',
        '—',
        'HTTPS with client certificates (all three or none): the operator is the certificate subject',
      ],
      ['`CONSOLE_OPERATOR_OU`', '`operators`', 'the OU a client certificate must have to use the console'],
      [
        '`CONSOLE_NAMESPACES`',
        '`TEMPORAL_NAMESPACE`',
        'the namespaces it lists and acts in, comma-separated, over one connection; a request naming another is refused',
      ],
      [
        '`CONSOLE_NAMESPACE_KEYS_FILE`',
        '—',
        "a file of `namespace=keyId:base64key,…` lines: the payload keys of a namespace whose worker has its own (a partner's); others use `PAYLOAD_ENCRYPTION_KEYS`",
      ],
      [
        '`CONSOLE_TRUSTED_PROXIES`',
        '—',
        'addresses or CIDR blocks of the proxies in front of it, whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed (login limit per client, `Secure` cookie over https); needs operator tokens',
      ],
      [
        '`CONSOLE_PUBLIC_URL`',
        '—',
        'the address operators use through a proxy (`https://console.example`): its host is accepted as `Host` and `Origin`',
      ],
      ['`TEMPORAL_UI_URL`', '—', "the Web UI's address, for a link to each item's history"],
      ['`BOOKING_TASK_QUEUE`', '`hotel-booking`', 'the queue its order checks and notes start on'],
    ],
  },
  {
    title: 'The local stack',
    intro: '`npm start` and `npm run stack:prod` ([operations.md](operations.md#the-stack-on-one-machine)).',
    rows: [
      ['`STACK_TEMPORAL_PORT`', '`7233`', 'Temporal gRPC'],
      ['`STACK_UI_PORT`', '`8233`', 'Temporal Web UI'],
      ['`STACK_SANDBOX_PORT`', '`8787`', 'sandbox supplier'],
      ['`STACK_CODEC_PORT`', '`8235`', 'codec server'],
      [
        '`STACK_DATA_DIR`',
        '`.data`',
        'dev server database (`temporal.db`, SQLite; bookings survive a restart) and the encryption key',
      ],
      ['`STACK_POSTGRES_PORT`', '`5433`', '`stack:prod`: its PostgreSQL cluster'],
      [
        '`STACK_NODE_BASE_PORT`',
        '`7300`',
        '`stack:prod`: node i (from 0) takes the ports from this + 100 × i (7300, 7400); below 32768',
      ],
      ['`STACK_WORKERS`', '`2`', '`stack:prod`: worker processes'],
      [
        '`TEMPORAL_CLI_PATH`, `TEMPORAL_TEST_SERVER_PATH`',
        '—',
        'Temporal binaries you already have (else built into `~/.cache/hotel-booking-orchestrator`)',
      ],
    ],
  },
];

const SANDBOX_VARIABLES =
  'The sandbox supplier ([sandbox.md](sandbox.md)) reads `SANDBOX_HOST`, `SANDBOX_PORT`, `SANDBOX_MODE` (`demo`/`realistic`), ' +
  '`SANDBOX_CONFIRM_AFTER_MS`, `SANDBOX_APP_KEY`, `SANDBOX_APP_SECRET`, `SANDBOX_STATIC_TOKEN`, `SANDBOX_JWT_SECRET`, ' +
  '`SANDBOX_RATE_OVERALL`, `SANDBOX_RATE_CHECK_AVAIL`, `SANDBOX_RATE_BOOK`, `SANDBOX_RATE_QUERY_ORDERS`, ' +
  '`SANDBOX_DRIFT` (`on`/`off`), `SANDBOX_CALLBACK_SECRET`.';

const SUPPLIER_PROFILE_TEXT = `The supplier profile (\`src/runtime/config/supplier-profile.ts\`) holds every value the spec leaves "not shown", with
defaults from the documentation of a live supplier with the same interface: operation paths (Ticket
\`/api/auth/ticket\`), envelope codes (0 success, 100001111 ARI changed with HTTP 200, 100001112 credit
limit, 100001005 page size exceeded, the 1000004xx/5xx family), the QueryOrders page (\`queryOrders.pageSize\`, 20
by default: an answer that long may be cut short, so it is never read as complete; set the supplier's stated page),
order statuses (0 Unknown, 1 Confirming, 2 Confirmed, 3 Cancelled,
4 Failed, 5 CancelFailed; 2–5 terminal), CheckAvail statuses (1 available, 2 unavailable), Ticket ttl and
renewal margin, rate limits (100/s overall, 10/s CheckAvail and Book, 50/s QueryOrders), client timeouts
(Book 90 s, others 15 s), Book's and Cancel's "surely not made/done" statuses and codes, and the callbacks'
verification scheme, the longest a supplier's Retry-After is waited (\`retryAfterCeilingSeconds\`, 600: a 429 asking
for a day waits 10 minutes, and never past the Book's or Cancel's own retry window), and whether a request's test flags go out as the \`Test\` header (\`testHeader\`: \`send\` by
default, as the supplier's test environment takes them; an account that books for real sets \`refuse\`, and a booking
or order input carrying \`context.test\` is then refused at its first step, nothing sent), and where CheckAvail's
fallback ("R2") candidates are (\`fallbackCandidatesField\`, \`r2Candidates\` by default: the spec shows no form, so it is
the sandbox's name; an unavailable or refused-price outcome carries them as \`candidates\`, read tolerantly, and \`npm run
book\` prints each with the command that books it as a new booking). Override any part with
\`SUPPLIER_PROFILE\`.`;

/** The JSDoc comment right above each `NAME:` in the schema's sources, as one line. */
export function schemaComments(): Map<string, string> {
  const comments = new Map<string, string>();
  for (const file of SCHEMA_SOURCES) {
    const source = readFileSync(path.join(ROOT, file), 'utf8');
    for (const m of source.matchAll(/\/\*\*([\s\S]*?)\*\/\s*\n\s*([A-Z][A-Z0-9_]*):/g)) {
      const text = m[1]!
        .split('\n')
        .map((line) => line.replace(/^\s*\*\s?/, '').trim())
        .filter(Boolean)
        .join(' ');
      comments.set(m[2]!, text);
    }
  }
  return comments;
}

interface ZodDefLike {
  type: string;
  innerType?: z.ZodType;
  out?: z.ZodType;
  entries?: Record<string, string>;
}

/** The allowed values of an enum variable, looking through default/optional/preprocess. */
function enumValues(schema: z.ZodType): string[] | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; s && i < 10; i++) {
    const def: ZodDefLike = (s as unknown as { _zod: { def: ZodDefLike } })._zod.def;
    if (def.type === 'enum') return Object.values(def.entries ?? {});
    s = def.innerType ?? def.out;
  }
  return undefined;
}

function defaultOf(schema: z.ZodType): string {
  const parsed = schema.safeParse(undefined);
  return parsed.success && parsed.data !== undefined ? `\`${String(parsed.data)}\`` : '—';
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

/** The page's Markdown before formatting. */
export function renderConfigurationMarkdown(): string {
  const shape = EnvSchema.shape as Record<string, z.ZodType>;
  const comments = schemaComments();
  const keys = Object.keys(shape);
  const grouped = new Set(GROUPS.flatMap((g) => g.keys));
  const groups = [...GROUPS, { title: 'Other', keys: keys.filter((k) => !grouped.has(k)) }].filter(
    (g) => g.keys.length > 0,
  );

  const out: string[] = [
    '# Configuration',
    '',
    '<!-- Generated by `npm run docs:config` (scripts/generate-config-docs.ts) from the config schema in',
    '     src/runtime/config/index.ts. Do not edit: test/unit/config-docs.test.ts fails when this page is stale. -->',
    '',
    'What you get from this page: every environment variable the worker reads, with its default, its allowed',
    'values and what it does, then the variables of the other processes (Temporal connection, codec server, the',
    'local stack, the sandbox) and the supplier profile.',
    '',
    'The worker reads one zod schema (`src/runtime/config/index.ts`) once at start; an error names every bad variable and',
    'never echoes a value. The Temporal connection is read by `@temporalio/envconfig`. The callback receiver reads',
    'the same schema (without the supplier credential).',
    '',
  ];
  for (const group of groups) {
    out.push(`## ${group.title}`, '');
    if ('intro' in group && group.intro) out.push(group.intro, '');
    out.push('| variable | default | values | meaning |', '| --- | --- | --- | --- |');
    for (const key of group.keys) {
      const schema = shape[key];
      if (!schema) throw new Error(`${key} is listed in a group but is not in the config schema`);
      const meaning = MEANINGS[key] ?? comments.get(key);
      if (!meaning) throw new Error(`${key}: no meaning (add a JSDoc comment in the schema or an entry in MEANINGS)`);
      const values =
        enumValues(schema)
          ?.map((v) => `\`${v}\``)
          .join(' ') ?? '';
      out.push(`| \`${key}\` | ${defaultOf(schema)} | ${values} | ${cell(meaning)} |`);
    }
    out.push('');
  }
  for (const table of OTHER_TABLES) {
    out.push(`## ${table.title}`, '', table.intro, '', '| variable | default | meaning |', '| --- | --- | --- |');
    for (const [name, def, meaning] of table.rows) out.push(`| ${name} | ${def} | ${cell(meaning)} |`);
    out.push('');
  }
  out.push('## The sandbox supplier', '', SANDBOX_VARIABLES, '');
  out.push('## The supplier profile', '', SUPPLIER_PROFILE_TEXT, '');
  return out.join('\n');
}

/**
 * docs/configuration.md, exactly: the Markdown formatted by the project's Prettier (its CLI, in a child process:
 * Prettier's API loads plugins by dynamic import, which Jest does not allow), so `npm run format` keeps it.
 */
export function renderConfigurationDoc(): string {
  return execFileSync(
    process.execPath,
    [require.resolve('prettier/bin/prettier.cjs'), '--stdin-filepath', CONFIG_DOC_PATH],
    { input: renderConfigurationMarkdown(), encoding: 'utf8' },
  );
}

if (require.main === module) {
  writeFileSync(CONFIG_DOC_PATH, renderConfigurationDoc());
  console.log(`wrote ${path.relative(ROOT, CONFIG_DOC_PATH)}`);
}
