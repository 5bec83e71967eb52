/**
 * `npm run conformance -- --base-url URL --rate-pkg ID… [--profile FILE] [--out DIR] --test-environment`: certifies
 * a supplier's test environment against the supplier profile, with the worker's credential variables
 * (SUPPLIER_TOKEN, or SUPPLIER_APP_KEY + SUPPLIER_APP_SECRET). docs/supplier-onboarding.md walks through it.
 *
 * Exit codes: 0 every automatic clause passed; 1 a clause differs or is a blocker; 2 the command was refused; 3 the run
 * stopped before its end (budget spent, rate limited): not a pass.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../../runtime/config/index';
import { formatPlan } from './plan';
import { writeReport } from './report/write';
import { runConformance, type ConformanceOptions, type ConformanceReport } from './run';

const USAGE = `Usage: npm run conformance -- --base-url URL --rate-pkg ID [ID…] --test-environment [options]

  --base-url URL        the supplier's test environment
  --rate-pkg ID         rate packages the kit may book (repeat, or list after it); the first is booked and cancelled
  --test-environment    your statement that the URL books nothing real; the kit refuses to start without it
  --profile FILE        the SUPPLIER_PROFILE (JSON) under test; default: SUPPLIER_PROFILE, else the documented defaults
  --out DIR             where report.json, report.md and junit.xml go (default: conformance-report)
  --accept FILE         differences accepted before (JSON: {"clause.id": "why it is tolerated"}): reported, not failing
  --write-profile FILE  writes the proposed SUPPLIER_PROFILE (JSON) there, when the run finished with no blocker
  --max-requests N      the request budget (default 120)
  --rate N              requests per second at most (default 1)
  --settle-timeout S    seconds an order may take to be listed and settle (default 900)
  --stable-after S      seconds a status the profile does not call final must hold to count as settled (default 300)
  --test-flags FLAGS    Test header flags the supplier's test environment documents, added to CheckAvail, Book and Cancel

Credentials: SUPPLIER_TOKEN, or SUPPLIER_APP_KEY and SUPPLIER_APP_SECRET, as for the worker.`;

class UsageError extends Error {}

/** What a test may set that the command line does not offer: a faster rate and polling than a real supplier allows. */
export type Overrides = Partial<Pick<ConformanceOptions, 'polling'>> & { rate?: number };

function optionsFrom(
  argv: string[],
  env: NodeJS.ProcessEnv,
  overrides: Overrides,
): { options: ConformanceOptions; out: string; writeProfile?: string } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      'rate-pkg': { type: 'string', multiple: true },
      'test-environment': { type: 'boolean' },
      profile: { type: 'string' },
      out: { type: 'string' },
      'write-profile': { type: 'string' },
      accept: { type: 'string' },
      'max-requests': { type: 'string' },
      rate: { type: 'string' },
      'settle-timeout': { type: 'string' },
      'stable-after': { type: 'string' },
      'test-flags': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) throw new UsageError(USAGE);
  if (!values['test-environment']) {
    throw new UsageError(
      'Refused: state that the URL is a test environment that books nothing real with --test-environment.\n\n' + USAGE,
    );
  }
  const baseUrl = values['base-url'];
  // `--rate-pkg A B` leaves B as a positional: both are packages.
  const ratePkgIds = [...(values['rate-pkg'] ?? []), ...positionals];
  if (!baseUrl || ratePkgIds.length === 0) throw new UsageError(`--base-url and --rate-pkg are required.\n\n${USAGE}`);
  const profileText = values.profile ? readFileSync(values.profile, 'utf8') : env.SUPPLIER_PROFILE;
  // The worker's own configuration reads the credential and checks the profile, so both mean what they mean there.
  const config = loadConfig({ ...env, SUPPLIER_BASE_URL: baseUrl, SUPPLIER_PROFILE: profileText });
  const settleSeconds = positive(values['settle-timeout'], 900, '--settle-timeout');
  const stableSeconds = positive(values['stable-after'], 300, '--stable-after');
  return {
    out: values.out ?? 'conformance-report',
    ...(values['write-profile'] ? { writeProfile: values['write-profile'] } : {}),
    options: {
      baseUrl,
      credentials: config.supplier.credentials,
      profile: config.supplier.profile,
      ratePkgIds,
      budget: positive(values['max-requests'], 120, '--max-requests'),
      ratePerSecond: overrides.rate ?? positive(values.rate, 1, '--rate'),
      polling: overrides.polling ?? {
        firstIntervalMs: 2_000,
        maxIntervalMs: 60_000,
        settleTimeoutMs: settleSeconds * 1000,
        stableAfterMs: stableSeconds * 1000,
      },
      ...(values['test-flags'] ? { testFlags: values['test-flags'] } : {}),
      ...(values.accept ? { accepted: acceptedIn(values.accept) } : {}),
      log: (line) => console.log(line),
    },
  };
}

/** The accept file: clause ids, each with the reason a person gave for tolerating its difference. */
function acceptedIn(file: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`--accept ${file}: ${(err as Error).message}`);
  }
  const entries = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.entries(parsed) : undefined;
  if (!entries || entries.some(([, why]) => typeof why !== 'string' || why.trim() === '')) {
    throw new UsageError(`--accept ${file}: expected {"clause.id": "why the difference is tolerated", …}`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function positive(text: string | undefined, fallback: number, flag: string): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag}: expected a positive number, got "${text}"`);
  return n;
}

export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  overrides: Overrides = {},
): Promise<number> {
  let parsed: ReturnType<typeof optionsFrom>;
  try {
    parsed = optionsFrom(argv, env, overrides);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    throw err;
  }
  const { options, out } = parsed;
  console.log(formatPlan(options));
  console.log('');
  const report = await runConformance(options);
  const files = await writeReport(report, out);
  const s = report.summary;
  console.log(`\n${s.pass} pass, ${s.differs} differ, ${s.blocker} blocker, ${s.manual} manual, ${s.skipped} skipped`);
  if (report.stoppedEarly || report.notRun.length > 0) {
    console.log(
      `Unfinished, not a pass: ${report.stoppedEarly ?? 'stopped early'}; not run: ${report.notRun.join(', ') || '(none)'}`,
    );
  }
  console.log(`Report: ${files.join(', ')}`);
  if (parsed.writeProfile) console.log(await writeProfile(report, parsed.writeProfile));
  return exitCode(report);
}

/**
 * The proposed profile as a file SUPPLIER_PROFILE takes (`SUPPLIER_PROFILE="$(cat FILE)"`), written only from a run
 * that finished with no blocker: a profile from half a run, or for a supplier the product cannot serve, is not one
 * to deploy.
 */
async function writeProfile(report: ConformanceReport, file: string): Promise<string> {
  if (report.stoppedEarly || report.notRun.length > 0) return `Profile not written to ${file}: the run did not finish`;
  if (report.summary.blocker > 0) return `Profile not written to ${file}: ${report.summary.blocker} blocker(s)`;
  await writeFile(file, `${JSON.stringify(report.proposedProfile, null, 2)}\n`);
  return `Proposed profile written to ${file} (review the differences and manual clauses before signing it off)`;
}

/** 1: a clause differs or is a blocker; 3: none does, but the run did not finish (budget, rate limit); 0: a pass. */
export function exitCode(report: ConformanceReport): number {
  if (report.summary.blocker + report.summary.differs - report.accepted.length > 0) return 1;
  return report.stoppedEarly || report.notRun.length > 0 ? 3 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(err);
      process.exit(2);
    },
  );
}
