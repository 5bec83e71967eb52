/**
 * Keeps in lib/ only what the package's entry points reach, so the tarball holds the client, contract and codec
 * and nothing of the worker. tsc emits every file of its program, and src/client's `import type` of src/workflows
 * brings the workflows, activities and supplier into the program; their JavaScript is never required, and only the
 * declarations that the entries' declarations import are kept.
 *
 * Reached means: from each entry, the relative specifiers of `require(...)` and `require.resolve(...)` in
 * JavaScript (failure-converter is loaded by path), and of `from '...'` and `import('...')` in declarations.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.join(here, 'lib');
const pkg = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));

const entries = new Set([pkg.main, pkg.types]);
for (const target of Object.values(pkg.exports))
  if (typeof target === 'object') for (const file of Object.values(target)) entries.add(file);

const SPECIFIERS = {
  '.js': /\brequire(?:\.resolve)?\(\s*['"](\.[^'"]*)['"]\s*\)/g,
  '.d.ts': /(?:\bfrom\s+|\bimport\s*\(\s*)['"](\.[^'"]*)['"]/g,
};
const kindOf = (file) => (file.endsWith('.d.ts') ? '.d.ts' : '.js');

function resolve(fromFile, specifier) {
  const kind = kindOf(fromFile);
  const base = path.resolve(path.dirname(fromFile), specifier);
  const found = [base + kind, path.join(base, 'index' + kind)].find((f) => fs.existsSync(f));
  if (!found) throw new Error(`${path.relative(here, fromFile)}: ${specifier} is not in lib/`);
  return found;
}

const kept = new Set();
const todo = [...entries]
  .filter((f) => f.startsWith('./lib/') || f.startsWith('lib/'))
  .map((f) => path.resolve(here, f));
while (todo.length > 0) {
  const file = todo.pop();
  if (kept.has(file)) continue;
  kept.add(file);
  for (const [, specifier] of fs.readFileSync(file, 'utf8').matchAll(SPECIFIERS[kindOf(file)]))
    todo.push(resolve(file, specifier));
}

let removed = 0;
(function prune(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(full);
      if (fs.readdirSync(full).length === 0) fs.rmdirSync(full);
    } else if (!kept.has(full)) {
      fs.rmSync(full);
      removed++;
    }
  }
})(lib);
console.log(`lib/: kept ${kept.size} files the entry points reach, removed ${removed}`);
