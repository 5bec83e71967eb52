/**
 * The booking CLI's command line: each flag and each verb is declared once here, and the parser, the check of
 * which verb takes which flag and the `--help` text all read these tables, so they cannot drift apart.
 * docs/cli.md has the examples, the exit codes in full and the JSON each verb prints.
 */
import { parseArgs } from 'node:util';
import { usage } from './common';

/** Every flag: `type`, `short` and `default` are parseArgs'; `value` and `help` are what `--help` prints. */
export const FLAGS = {
  ref: { type: 'string', value: '<ref>', help: 'the booking reference' },
  'rate-pkg': {
    type: 'string',
    default: 'pkg-demo-deluxe',
    value: '<id>',
    help: 'rate package (default pkg-demo-deluxe)',
  },
  'expected-price': { type: 'string', value: '<amount><currency>', help: 'the price the user saw, e.g. 180USD' },
  supplier: {
    type: 'string',
    value: '<account>',
    help: "the supplier account to book on (SUPPLIER_ACCOUNTS_FILE); default: the partner's",
  },
  'on-price-exceeded': {
    type: 'string',
    value: 'reject|ask',
    help: 'when the price rose past the policy: refuse it, or wait for approve/reject',
  },
  'max-increase-percent': { type: 'string', value: '<n>', help: 'the rise the price-change policy accepts, in %' },
  scenario: {
    type: 'string',
    value: '<Test header>',
    help: "a sandbox supplier scenario, e.g. 'book=504AfterCreate&confirmAfterQueries=3'",
  },
  'reconnect-seconds': {
    type: 'string',
    default: '60',
    value: '<n>',
    help: 'how long to keep trying when Temporal goes away (default 60)',
  },
  price: { type: 'string', value: '<amount><CURRENCY>', help: 'the price answered, exactly, e.g. 250.66USD' },
  by: {
    type: 'string',
    value: '<name>',
    help: 'on whose behalf; recorded beside your certificate subject (or OS account)',
  },
  yes: { type: 'boolean', default: false, help: 'do not ask (without it and without a terminal, nothing is sent)' },
  'accept-fee': {
    type: 'string',
    value: '<amount><CURRENCY>',
    help: 'cancel only if the fresh quote is exactly this fee, e.g. 12.50EUR',
  },
  'max-fee': {
    type: 'string',
    value: '<amount><currency>',
    help: 'cancel only if the fee is known, in this currency and at most this much',
  },
  reason: { type: 'string', value: '<text>', help: 'why, recorded on the cancellation' },
  stage: {
    type: 'string',
    value: '<stage>',
    help: 'a BookingStage, e.g. unresolved, recovering, order-cancel-failed',
  },
  limit: { type: 'string', value: '<n>', help: 'at most this many, newest first (1 to 1000, default 50)' },
  json: { type: 'boolean', default: false, help: 'print exactly one JSON object on stdout (notices go to stderr)' },
  'task-queue': {
    type: 'string',
    value: '<name>',
    help: 'the task queue to start on (default BOOKING_TASK_QUEUE, else hotel-booking)',
  },
  help: { type: 'boolean', short: 'h', default: false, help: 'print this usage and exit' },
} as const;

export type Flag = keyof typeof FLAGS;

/** What a verb is for and which flags it takes; `notes` replace a flag's help where this verb reads it differently. */
interface VerbSpec {
  summary: string;
  flags: readonly Flag[];
  /** Listed without brackets in the usage line; each verb checks its own (the message names the flag). */
  required?: readonly Flag[];
  notes?: Partial<Record<Flag, string>>;
}

/** The verbs, `book` (the default) first. */
export const VERBS = {
  book: {
    summary: 'start a booking (the sandbox demo traveller) and follow it to its outcome; the default verb',
    flags: [
      'ref',
      'rate-pkg',
      'supplier',
      'expected-price',
      'on-price-exceeded',
      'max-increase-percent',
      'scenario',
      'reconnect-seconds',
    ],
    notes: {
      ref: 'the booking reference (default: a new one, printed); one that has a workflow already is followed, never booked twice',
    },
  },
  status: {
    summary: "the booking's state (or its outcome once closed) and its latest order run's",
    flags: ['ref'],
    required: ['ref'],
  },
  approve: {
    summary: "answer the booking's price question: yes, at exactly this price",
    flags: ['ref', 'price', 'by'],
    required: ['ref', 'price'],
    notes: { price: 'the price awaiting approval, exactly, e.g. 250.66USD (another price is refused)' },
  },
  reject: {
    summary: "answer the booking's price question: no",
    flags: ['ref', 'price', 'by'],
    required: ['ref'],
    notes: { price: 'the price rejected, exactly (default: the one awaiting approval)' },
  },
  quote: {
    summary: 'what cancelling the confirmed booking costs now (nothing is sent)',
    flags: ['ref'],
    required: ['ref'],
  },
  cancel: {
    summary: 'quote, ask for confirmation (a terminal, or --yes), and cancel at that fee',
    flags: ['ref', 'yes', 'accept-fee', 'max-fee', 'reason'],
    required: ['ref'],
  },
  list: {
    summary: 'the workflows in a stage, e.g. the unresolved bookings (a visibility query)',
    flags: ['stage', 'limit'],
    required: ['stage'],
  },
} as const satisfies Record<string, VerbSpec>;

export type Verb = keyof typeof VERBS;

/** The flags every verb takes. */
export const COMMON_FLAGS = ['json', 'task-queue', 'help'] as const satisfies readonly Flag[];

const VERB_NAMES = Object.keys(VERBS) as Verb[];
const isVerb = (text: string): text is Verb => (VERB_NAMES as string[]).includes(text);

function parse(args: string[]) {
  return parseArgs({ args, allowPositionals: true, options: FLAGS, tokens: true });
}

/** The parsed flags; the defaulted ones (FLAGS' `default`) always have a value. */
export type FlagValues = ReturnType<typeof parse>['values'];

/** What the command line asks for: a usage text to print, or a verb to run with its flags. */
export type CommandLine = { kind: 'help'; text: string } | { kind: 'run'; verb: Verb; values: FlagValues };

/**
 * Reads the arguments after `npm run book --`. `help [verb]`, `--help` and `-h` ask for usage; anything
 * malformed (an unknown flag or verb, a flag the verb does not take) is a usage error that names it.
 */
export function readCommandLine(args: string[]): CommandLine {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (err) {
    // parseArgs' own message names the flag ("Unknown option '--x'"); --help then says which there are. Its
    // error is read by shape: under a test runner's sandbox it is another realm's TypeError.
    const message = (err as { message?: unknown } | null)?.message;
    throw usage(`${typeof message === 'string' ? message : String(err)} (npm run book -- --help lists the flags)`);
  }
  const { values, positionals, tokens } = parsed;
  const [first, ...rest] = positionals;
  if (first === 'help') {
    if (rest.length > 1) throw usage(`unexpected arguments: ${rest.slice(1).join(' ')}`);
    return { kind: 'help', text: helpText(rest[0] === undefined ? undefined : knownVerb(rest[0])) };
  }
  if (rest.length > 0) throw usage(`unexpected arguments: ${rest.join(' ')}`);
  const verb = knownVerb(first ?? 'book');
  if (values.help) return { kind: 'help', text: helpText(first === undefined ? undefined : verb) };
  // Only flags written on the command line count: the defaulted ones are in `values` for every verb.
  const written = tokens.flatMap((t) => (t.kind === 'option' ? [t.name as Flag] : []));
  const allowed = new Set<Flag>([...VERBS[verb].flags, ...COMMON_FLAGS]);
  const wrong = written.find((flag) => !allowed.has(flag));
  if (wrong !== undefined) throw usage(`${verb}: --${wrong} is not one of its flags (npm run book -- ${verb} --help)`);
  return { kind: 'run', verb, values };
}

function knownVerb(text: string): Verb {
  if (isVerb(text)) return text;
  throw usage(`unknown command "${text}": one of ${VERB_NAMES.join(', ')} (book is the default)`);
}

/** `--ref <ref>`, or `--yes` for a boolean flag. */
function flagSyntax(flag: Flag): string {
  const spec = FLAGS[flag];
  return 'value' in spec ? `--${flag} ${spec.value}` : `--${flag}`;
}

function usageLine(verb: Verb): string {
  const spec: VerbSpec = VERBS[verb];
  const required = new Set(spec.required ?? []);
  const flags = [...spec.flags, ...COMMON_FLAGS.filter((f) => f !== 'help')].map((flag) =>
    required.has(flag) ? flagSyntax(flag) : `[${flagSyntax(flag)}]`,
  );
  // `book` is what runs when no verb is given.
  return `npm run book -- ${verb === 'book' ? '[book]' : verb} ${flags.join(' ')}`;
}

/** Rows of `left  right`, the right column aligned. */
function table(rows: Array<[string, string]>): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
}

/** The exit codes in one line each (./common.ts EXIT; `book` keeps the meanings it always had). */
const EXIT_CODES = {
  verbs: 'Exit codes: 0 done, 1 usage or an error, 2 refused, 3 not found, 4 needs a person.',
  book: 'Exit codes: 0 confirmed, 1 an error, 2 any other outcome, 3 the connection to Temporal lost while following.',
};

/** The usage text: every verb with its summary, or one verb with each of its flags. */
export function helpText(verb?: Verb): string {
  if (verb === undefined)
    return [
      'Usage: npm run book -- [verb] [flags]',
      '       npm run book -- help <verb>    (or: <verb> --help) for a verb and its flags',
      '',
      'Verbs:',
      ...table(VERB_NAMES.map((name) => [name, VERBS[name].summary])),
      '',
      'Every verb takes:',
      ...table(COMMON_FLAGS.map((flag) => [flag === 'help' ? '--help, -h' : flagSyntax(flag), FLAGS[flag].help])),
      '',
      EXIT_CODES.verbs,
      `book's ${EXIT_CODES.book.charAt(0).toLowerCase()}${EXIT_CODES.book.slice(1)}`,
      'More, with examples and the JSON each verb prints: docs/cli.md',
    ].join('\n');
  const spec: VerbSpec = VERBS[verb];
  const required = new Set(spec.required ?? []);
  return [
    `Usage: ${usageLine(verb)}`,
    '',
    `${spec.summary.charAt(0).toUpperCase()}${spec.summary.slice(1)}.`,
    '',
    'Flags:',
    ...table(
      [...spec.flags, ...COMMON_FLAGS].map((flag) => [
        flag === 'help' ? '--help, -h' : flagSyntax(flag),
        `${required.has(flag) ? 'required: ' : ''}${spec.notes?.[flag] ?? FLAGS[flag].help}`,
      ]),
    ),
    '',
    verb === 'book' ? EXIT_CODES.book : EXIT_CODES.verbs,
    `More: docs/cli.md#${verb === 'approve' || verb === 'reject' ? 'approve-and-reject' : verb}`,
  ].join('\n');
}
