/**
 * The direction data flows in, checked on the sources: what ships never imports the development tooling,
 * the public contract and the supplier's wire model build on src/api/values and never import each other, and
 * workflow code imports no zod schema at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(__dirname, '../../src');

function importsOf(folder: string): Array<{ file: string; from: string; typeOnly: boolean }> {
  const dir = path.join(SRC, folder);
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((file) =>
      [
        ...readFileSync(path.join(dir, file), 'utf8').matchAll(/^(?:import|export)(\s+type)?[^;]*?from\s+'([^']+)'/gms),
      ].map((m) => ({ file: `${folder}/${file}`, from: m[2]!, typeOnly: Boolean(m[1]) })),
    );
}

test('what ships (src/) imports nothing from the development tooling (dev/)', () => {
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name);
  const fromDev = folders.flatMap(importsOf).filter((i) => /(^|\/)dev\//.test(i.from));
  expect(fromDev).toEqual([]);
});

test('src/api/contract imports nothing from src/runtime/supplier', () => {
  expect(importsOf('api/contract').filter((i) => /\/supplier(\/|$)/.test(i.from))).toEqual([]);
});

test('src/runtime/supplier imports nothing from src/api/contract', () => {
  expect(importsOf('runtime/supplier').filter((i) => /\/contract(\/|$)/.test(i.from))).toEqual([]);
});

test('workflow code takes values only from zod-free modules (schemas as types only)', () => {
  // src/api/values/timestamp.ts is the one module of src/api/values written without zod (and without imports).
  const zodFree = (from: string) => /\/values\/timestamp$/.test(from);
  const valueImports = importsOf('workflows').filter(
    (i) => !i.typeOnly && /schemas|values|zod/.test(i.from) && !zodFree(i.from),
  );
  expect(valueImports).toEqual([]);
});

test('activities take nothing from workflow code (shared rules live where both may import them)', () => {
  // Types only (`import type`) are erased; a value import would run workflow code in the activity worker.
  expect(importsOf('activities').filter((i) => !i.typeOnly && /\/workflows(\/|$)/.test(i.from))).toEqual([]);
});
