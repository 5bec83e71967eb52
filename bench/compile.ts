/**
 * Compiles the TypeScript the benchmark's child processes run (src/, bench/, test/harness/) to
 * plain JavaScript in a temp directory, so a child runs as `node lib/worker.js` does in the Docker
 * image, without ts-node: ts-node loads the TypeScript compiler into every process, some 70 MB of
 * RSS that would be charged to the worker being measured.
 *
 * Transpile only (no type check: `npx tsc --noEmit` does that), one file at a time.
 */
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync, readFileSync } from 'node:fs';
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
