/**
 * Runs the conformance kit as docs/supplier-onboarding.md gives it (`npm run conformance -- ...`), with its
 * credential in the worker's own variable, against a supplier of these checks, and reads the report it writes.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runProgram, type ProgramRun } from '../../harness/program';
import type { SpecSupplier } from './supplier';

export interface KitRun {
  run: ProgramRun;
  dir: string;
  report: {
    clauses: { id: string; result: string; observed?: unknown }[];
    proposedProfile?: unknown;
    notRun?: unknown[];
  };
  profileFile: string;
}

/** One run: 20 requests a second (the supplier is ours and private) and short settle waits. */
export async function runKit(supplier: SpecSupplier): Promise<KitRun> {
  const dir = mkdtempSync(path.join(tmpdir(), 'indep-kit-'));
  const profileFile = path.join(dir, 'profile.json');
  const run = await runProgram(
    'npm',
    [
      'run',
      '-s',
      'conformance',
      '--',
      '--base-url',
      supplier.url,
      '--rate-pkg',
      'pkg-indep-a',
      'pkg-indep-b',
      '--test-environment',
      '--rate',
      '20',
      '--stable-after',
      '1',
      '--settle-timeout',
      '30',
      '--out',
      path.join(dir, 'report'),
      '--write-profile',
      profileFile,
    ],
    {
      cwd: path.resolve(__dirname, '../../..'),
      env: { PATH: process.env.PATH ?? '', SUPPLIER_TOKEN: supplier.token },
      timeoutMs: 60_000,
    },
  );
  const report = JSON.parse(readFileSync(path.join(dir, 'report', 'report.json'), 'utf8')) as KitRun['report'];
  return { run, dir, report, profileFile };
}

export const resultOf = (kit: KitRun, id: string): string | undefined =>
  kit.report.clauses.find((c) => c.id === id)?.result;
