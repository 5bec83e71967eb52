/**
 * How a benchmark reports: the machine and versions it ran on (figures mean little without them),
 * plain-text tables for the terminal, and one JSON file per benchmark under bench/results/.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalVersion } from './stack';

export interface Setup {
  cores: number;
  cpuModel: string;
  totalMemoryMb: number;
  /** 1/5/15-minute load averages when the benchmark started: other work on the machine skews results. */
  loadAverageAtStart: number[];
  node: string;
  temporalSdk: Record<string, string>;
  temporalCli: string;
  gitCommit?: string;
  platform: string;
}

const SDK_PACKAGES = ['client', 'worker', 'workflow', 'activity', 'common'];

export function collectSetup(): Setup {
  const cpus = os.cpus();
  const temporalSdk: Record<string, string> = {};
  for (const name of SDK_PACKAGES) {
    try {
      const file = require.resolve(`@temporalio/${name}/package.json`);
      temporalSdk[`@temporalio/${name}`] = (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
    } catch {
      temporalSdk[`@temporalio/${name}`] = 'not installed';
    }
  }
  let gitCommit: string | undefined;
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: path.resolve(__dirname, '..'),
      encoding: 'utf8',
    }).trim();
  } catch {
    gitCommit = undefined;
  }
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    totalMemoryMb: Math.round(os.totalmem() / (1024 * 1024)),
    loadAverageAtStart: os.loadavg().map((l) => Math.round(l * 100) / 100),
    node: process.version,
    temporalSdk,
    temporalCli: temporalVersion(),
    ...(gitCommit ? { gitCommit } : {}),
    platform: `${os.platform()} ${os.release()}`,
  };
}

export type Cell = string | number | undefined;

/** A fixed-width table; numbers right-aligned. */
export function table(title: string, headers: string[], rows: Cell[][]): string {
  const text = (c: Cell) => (c === undefined ? '' : typeof c === 'number' ? (Number.isFinite(c) ? String(c) : '-') : c);
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => text(r[i]).length)));
  const line = (cells: Cell[]) =>
    cells
      .map((c, i) => (typeof c === 'number' ? text(c).padStart(widths[i]!) : text(c).padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [title, line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export interface BenchmarkResult<Options, Figures> {
  benchmark: string;
  startedAt: string;
  durationSeconds: number;
  /** 1/5/15-minute load averages at the end; compare with setup.loadAverageAtStart. */
  loadAverageAtEnd: number[];
  setup: Setup;
  options: Options;
  figures: Figures;
  /** The tables as printed. */
  tables: string[];
  notes: string[];
}

export const DEFAULT_RESULTS_DIR = path.resolve(__dirname, 'results');

export function writeResult(result: BenchmarkResult<unknown, unknown>, dir = DEFAULT_RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const engine = (result.options as { engine?: string } | undefined)?.engine;
  const file = path.join(dir, `${result.benchmark}${engine === 'prod' ? '-prod' : ''}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}

/** What each benchmark function returns; bench/main.ts adds the setup and writes the file. */
export interface BenchOutput<Figures> {
  figures: Figures;
  tables: string[];
  notes: string[];
}

/** Progress lines go to stderr, so stdout holds only the tables. */
export interface BenchContext {
  progress(message: string): void;
}
