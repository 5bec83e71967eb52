/**
 * Every key of the supplier profile is read by the code: a key nothing reads can be set, accepted and mean
 * nothing, which is the silent kind of misconfiguration the strict schema exists to prevent. A tripwire, by
 * text: a key passes when src (outside the profile itself) reads it by name, or reads its group by a computed
 * key whose names are the group's keys.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultSupplierProfile, SupplierProfile } from '../../src/runtime/config/supplier-profile';

const SRC = path.join(__dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}
const code = sources(SRC)
  .filter((f) => f !== path.join(SRC, 'supplier/profile.ts'))
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n');

/** Groups read by a computed key: `profile.timeoutsMs[operation]`, `profile.codes[name]` and the like. */
const READ_BY_COMPUTED_KEY: Record<string, RegExp> = {
  paths: /profile\.paths\[operation\]/,
  timeoutsMs: /profile\.timeoutsMs\[operation\]/,
  rateLimits: /this\.buckets\[operation\]/,
};

/** Keys read only as the names a list of names may hold (book.surelyNotMadeCodes holds names of `codes`). */
const READ_AS_A_NAME: Record<string, string> = {
  'codes.duplicate': 'a Book answer surely not made when listed in book.surelyNotMadeCodes',
};

/** Keys kept for the reader, read by nothing; each with why it stays. */
const DOCUMENTATION_ONLY: Record<string, string> = {
  'checkAvailStatus.unavailable': 'any status but `available` is unavailable: the value documents the usual one',
};

function leafPaths(value: unknown, prefix: string[] = []): string[][] {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...prefix, k]));
  }
  return [prefix];
}

const optionalKeys = [['rateLimits', 'cancel']];
const keys = [...leafPaths(defaultSupplierProfile), ...optionalKeys];

test.each(keys.map((k) => [k.join('.'), k] as const))('%s is read by the code', (name, keyPath) => {
  // A group's key (`timeoutsMs.book`), or a key of the profile's own (`testHeader`).
  const [group, key] = [keyPath[0], keyPath[keyPath.length - 1]];
  if (name in DOCUMENTATION_ONLY || name in READ_AS_A_NAME) return;
  const computed = READ_BY_COMPUTED_KEY[group!];
  const byName = new RegExp(`\\.${key}\\b|\\[['"]${key}['"]\\]`).test(code);
  expect({ name, read: byName || Boolean(computed?.test(code)) }).toEqual({ name, read: true });
});

test('the exceptions name keys the profile has', () => {
  const names = new Set(keys.map((k) => k.join('.')));
  for (const name of [...Object.keys(DOCUMENTATION_ONLY), ...Object.keys(READ_AS_A_NAME)]) {
    expect({ name, known: names.has(name) }).toEqual({ name, known: true });
  }
  expect(Object.keys(SupplierProfile.shape).sort()).toEqual(Object.keys(defaultSupplierProfile).sort());
});
