/**
 * The booking CLI's usage text and command line (src/operators/cli/command-line.ts): `--help`, `help <verb>` and
 * `<verb> --help` print usage and exit 0, the text names every verb and each verb's flags from the same table
 * the parser reads, and a malformed command line is a usage error naming what is wrong.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { COMMON_FLAGS, FLAGS, helpText, readCommandLine, VERBS, type Verb } from '../../src/operators/cli/command-line';
import { CliError, EXIT } from '../../src/operators/cli/common';

const VERB_NAMES = Object.keys(VERBS) as Verb[];

function usageError(args: string[]): CliError {
  try {
    readCommandLine(args);
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error(`no usage error for ${JSON.stringify(args)}`);
}

describe('help', () => {
  test('--help, -h and help alone print every verb with its summary', () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const line = readCommandLine(args);
      expect(line).toEqual({ kind: 'help', text: helpText() });
    }
    const text = helpText();
    for (const verb of VERB_NAMES) expect(text).toMatch(new RegExp(`^  ${verb} +${escape(VERBS[verb].summary)}$`, 'm'));
    for (const flag of COMMON_FLAGS) expect(text).toContain(`--${flag}`);
  });

  test.each(VERB_NAMES)(
    '%s: help <verb> and <verb> --help print its usage line and each of its flags, described',
    (verb) => {
      const text = helpText(verb);
      expect(readCommandLine(['help', verb])).toEqual({ kind: 'help', text });
      expect(readCommandLine([verb, '--help'])).toEqual({ kind: 'help', text });
      expect(text).toMatch(new RegExp(`^Usage: npm run book -- \\[?${verb}\\]? `));
      for (const flag of [...VERBS[verb].flags, ...COMMON_FLAGS])
        expect(text).toMatch(new RegExp(`^  --${flag}\\b.*  \\S`, 'm'));
      // No flag of another verb is offered.
      const offered = [...text.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]);
      expect(offered.sort()).toEqual([...VERBS[verb].flags, ...COMMON_FLAGS].sort());
    },
  );

  test('every flag the parser knows belongs to some verb, so the help shows each one somewhere', () => {
    const shown = new Set<string>([...COMMON_FLAGS, ...VERB_NAMES.flatMap((verb) => VERBS[verb].flags)]);
    expect(Object.keys(FLAGS).filter((flag) => !shown.has(flag))).toEqual([]);
  });

  test('a required flag is written without brackets in the usage line', () => {
    expect(helpText('approve')).toMatch(
      /^Usage: npm run book -- approve --ref <ref> --price <amount><CURRENCY> \[--by/,
    );
    expect(helpText('reject')).toMatch(/^Usage: npm run book -- reject --ref <ref> \[--price <amount><CURRENCY>\]/);
  });
});

describe('the command line', () => {
  test('no verb is book; a verb runs with its flags, the defaulted ones filled in', () => {
    expect(readCommandLine([])).toMatchObject({ kind: 'run', verb: 'book', values: { 'rate-pkg': 'pkg-demo-deluxe' } });
    expect(readCommandLine(['status', '--ref', 'r1', '--json'])).toMatchObject({
      kind: 'run',
      verb: 'status',
      values: { ref: 'r1', json: true },
    });
  });

  test.each([
    [['status', '--ref', 'r1', '--price', '1USD'], /^status: --price is not one of its flags/],
    // Defaulted flags (yes, rate-pkg) count only when written.
    [['status', '--ref', 'r1', '--yes'], /^status: --yes is not one of its flags/],
    [['list', '--stage', 'unresolved', '--rate-pkg', 'x'], /^list: --rate-pkg is not one of its flags/],
    [['status', '--frobnicate'], /^Unknown option '--frobnicate'.*--help lists the flags/],
    [['refund'], /^unknown command "refund": one of book, status/],
    [['help', 'refund'], /^unknown command "refund"/],
    [['status', 'extra'], /^unexpected arguments: extra/],
  ])('%j is a usage error', (args, message) => {
    const err = usageError(args);
    expect(err.exitCode).toBe(EXIT.USAGE);
    expect(err.message).toMatch(message);
  });
});

describe('the entry point', () => {
  const run = promisify(execFile);
  const ROOT = path.resolve(__dirname, '../..');
  const cli = (...args: string[]) =>
    run(
      process.execPath,
      [require.resolve('ts-node/dist/bin'), '--transpile-only', 'src/operators/cli/main.ts', ...args],
      {
        cwd: ROOT,
        timeout: 60_000,
      },
    );

  test.each([[['--help']], [['help', 'cancel']], [['cancel', '--help']]])(
    '%j prints usage on stdout and exits 0',
    async (args) => {
      // execFile rejects on a non-zero exit.
      const { stdout, stderr } = await cli(...args);
      expect(stdout).toMatch(/^Usage: npm run book -- /);
      expect(stderr).toBe('');
    },
    60_000,
  );
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
