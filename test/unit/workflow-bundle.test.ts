/**
 * The modules the workflow bundle preloads (src/workflow-bundle.ts) are shared by every workflow of a V8 context:
 * each must keep no state at module level, and so must everything it imports (a preloaded module's imports are
 * shared with it). Read on the sources, so a `let` or a cache added to one of them later fails here first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { OWN_PRELOAD_MODULES, SDK_PRELOAD_MODULES, workflowBundlerOptions } from '../../src/workflow-bundle';

/** The source without comments and string contents, so prose that says "let" or "new Map" does not count. */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, "''");
}

/** Relative imports that bring values (type-only imports are erased), resolved to files. */
function valueImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/^(?:import|export)(\s+type)?\s[^;]*?from\s+'(\.[^']+)'/gms)]
    .filter((m) => !m[1])
    .map((m) => require.resolve(path.resolve(path.dirname(file), m[2]!)));
}

test('the SDK and our stateless modules are preloaded, each resolvable', () => {
  expect(workflowBundlerOptions().preloadModules).toEqual([...SDK_PRELOAD_MODULES, ...OWN_PRELOAD_MODULES]);
  expect(OWN_PRELOAD_MODULES.map((f) => path.relative(path.resolve(__dirname, '../../src'), f))).toEqual(
    expect.arrayContaining(['api/contract/definitions.ts', 'runtime/rules/cancel-fee.ts', 'runtime/rules/price.ts']),
  );
});

test.each(OWN_PRELOAD_MODULES.map((f) => [path.relative(process.cwd(), f), f]))(
  '%s keeps no state at module level and imports only preloaded modules',
  (_name, file) => {
    const text = code(file);
    // Top level: a line that starts without indentation.
    expect(text.match(/^(?:export\s+)?(?:let|var)\s/gm) ?? []).toEqual([]);
    expect(text.match(/new\s+(?:Map|Set|WeakMap|WeakSet)\b/g) ?? []).toEqual([]);
    // No call into the workflow API at load time other than the define* helpers (a pure object each).
    expect(
      (text.match(/^(?:export\s+)?const\s[^=]+=\s*([A-Za-z_$][\w$]*)\(/gm) ?? []).filter(
        (line) => !/=\s*(defineQuery|defineSignal|defineUpdate|defineSearchAttributeKey|define)\(/.test(line),
      ),
    ).toEqual([]);
    for (const imported of valueImports(file)) expect(OWN_PRELOAD_MODULES).toContain(imported);
  },
);

test('the workflow counters module, which caches counters at module level, is not preloaded', () => {
  expect(OWN_PRELOAD_MODULES).not.toContain(path.resolve(__dirname, '../../src/workflows/counters.ts'));
});
