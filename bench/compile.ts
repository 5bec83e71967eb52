/**
 * Compiles the TypeScript the benchmark's child processes run (src/, bench/, test/harness/) to
 * plain JavaScript in a temp directory, so a child runs as `node lib/worker.js` does in the Docker
 * image, without ts-node: ts-node loads the TypeScript compiler into every process, some 70 MB of
 * RSS that would be charged to the worker being measured.
 *
 * Transpile only (no type check: `npx tsc --noEmit` does that), one file at a time. Once per process
 * (compiledForChildren): every stack a process starts (throughput's variants, compare's parts, a test file's
 * benchmarks) runs the same snapshot of the tree, and none pays the ~1.5 s again.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  readFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..');
const SOURCES = ['src', 'dev', 'bench', 'test/harness'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'results' || name === 'node_modules' ? [] : tsFiles(file);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Writes the JavaScript tree under `outDir` and returns it; `outDir/bench/x.js` is bench/x.ts. */
export function compileForChildren(outDir: string): string {
  const compilerOptions: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    esModuleInterop: true,
    resolveJsonModule: true,
  };
  for (const source of SOURCES) {
    for (const file of tsFiles(path.join(ROOT, source))) {
      const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file });
      const out = path.join(outDir, path.relative(ROOT, file)).replace(/\.ts$/, '.js');
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, outputText);
    }
  }
  // Packages resolve from the repository's node_modules, as they would from lib/ in the image.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(outDir, 'node_modules'), 'dir');
  return outDir;
}

let shared: string | undefined;

/**
 * The tree compiled once for this process, in a temp directory removed when the process exits: what every stack's
 * children run. The first call compiles (a snapshot of the tree then); later calls return the same directory.
 */
export function compiledForChildren(): string {
  if (shared) return shared;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-js-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  shared = compileForChildren(path.join(dir, 'js'));
  return shared;
}
