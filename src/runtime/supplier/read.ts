/**
 * Reads a supplier answer the way ./schemas.ts describes: strict where a decision reads, tolerant
 * everywhere else.
 *
 * 1. Nulls in objects are dropped: a null field is an absent one (suppliers send both for "nothing").
 * 2. The decision schema must pass on the answer as sent; if not, the answer is unreadable and the issues
 *    name the JSON paths. Nothing is converted before this: a status `"2"` is not taken for 2.
 * 3. The full schema is applied; a field of another JSON type whose value is plain is converted (a whole
 *    number where text is expected becomes its digits, a plain decimal string where a number is expected
 *    becomes that number), any other field that fails is pruned (removed, or its array element removed);
 *    either way its path is returned as drift, until what is left passes. Unknown fields are dropped.
 * A decision field is never pruned or changed: the result is checked against the decision schema once more.
 */
import type { z } from 'zod';
import { describeIssues } from '../../api/values/issues';
import { foldIndices } from './drift';

export type Reading<T> = { ok: true; value: T; drift: string[] } | { ok: false; issues: string[] };

export interface AnswerShape<T> {
  /** The fields a decision reads; strict. */
  decision: z.ZodType;
  /** Every field the spec gives, tolerantly (all but the decision fields optional). */
  full: z.ZodType<T>;
}

/** More rounds than any nesting in the spec needs; a shape that still fails is read as its decision fields only. */
const MAX_PRUNE_ROUNDS = 32;
const PRUNED = Symbol('pruned');

/** Reads `raw` (already JSON) against `shape`; `at` is the JSON path of `raw` in the body, e.g. `data`. */
export function readAnswer<T>(raw: unknown, shape: AnswerShape<T>, at: string): Reading<T> {
  const value = withoutNulls(raw);
  const decision = shape.decision.safeParse(value);
  if (!decision.success) return { ok: false, issues: describeIssues(decision.error, at) };

  const drift = new Set<string>();
  const decided = JSON.stringify(decision.data);
  for (let round = 0; round < MAX_PRUNE_ROUNDS; round++) {
    const full = shape.full.safeParse(value);
    if (full.success) {
      // Pruning never reaches a decision field by construction; this makes sure the decision is untouched.
      const again = shape.decision.safeParse(full.data);
      if (!again.success || JSON.stringify(again.data) !== decided) break;
      return { ok: true, value: full.data, drift: [...drift] };
    }
    // Targets are chosen before anything is removed: one field can carry several issues.
    const targets = new Map<string, PropertyKey[]>();
    for (const issue of full.error.issues) {
      drift.add(foldIndices(issue.path, at));
      if (issue.code === 'invalid_type' && convert(value, issue.path, issue.expected)) continue;
      const target = pruneTarget(value, issue.path);
      if (target) targets.set(JSON.stringify(target), target);
    }
    for (const target of targets.values()) prune(value, target);
    removePrunedElements(value);
  }
  // Unreachable with the spec's shapes; keep the decision fields rather than fail a readable answer.
  return { ok: true, value: decision.data as T, drift: [...drift, foldIndices([], at)] };
}

/** A plain decimal: an optional minus, digits, an optional fraction; no exponent, sign, spaces or separators. */
const PLAIN_DECIMAL = /^-?\d+(?:\.\d+)?$/;
/** Significant digits a double carries faithfully from decimal text and back. */
const FAITHFUL_DIGITS = 15;

/**
 * The number a plain decimal text stands for ("120.50" → 120.5), or undefined when the text is anything else
 * or has more significant digits than a double keeps (the number would not be the one sent).
 */
export function plainNumber(text: string): number | undefined {
  if (!PLAIN_DECIMAL.test(text)) return undefined;
  const significant = text.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return significant.length <= FAITHFUL_DIGITS ? Number(text) : undefined;
}

/**
 * Replaces the value at `path` with the `expected` JSON type when it converts without a guess; returns
 * whether it did. Numbers become text only when whole and safe: beyond 2^53 JSON parsing has already
 * changed the digits, and a reference made of them would name another order.
 */
function convert(root: unknown, path: readonly PropertyKey[], expected: string): boolean {
  if (path.length === 0) return false;
  const parent = walk(root, path.slice(0, -1));
  if (parent === null || typeof parent !== 'object') return false;
  const key = path[path.length - 1]!;
  const current = (parent as Record<PropertyKey, unknown>)[key];
  let converted: string | number | undefined;
  if (expected === 'string' && typeof current === 'number' && Number.isSafeInteger(current)) {
    converted = String(current);
  } else if (expected === 'number' && typeof current === 'string') {
    converted = plainNumber(current);
  }
  if (converted === undefined) return false;
  (parent as Record<PropertyKey, unknown>)[key] = converted;
  return true;
}

/** A deep copy without null object properties (array elements stay: a null order or room is not "absent"). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) if (v !== null) out[key] = withoutNulls(v);
    return out;
  }
  return value;
}

/**
 * What to remove for an issue at `path`: the field itself, or, for a missing required field (nothing
 * there), the nearest enclosing value that is there: an informational object without a field its shape
 * requires, say a Money without `amount`, is no use.
 */
function pruneTarget(root: unknown, path: readonly PropertyKey[]): PropertyKey[] | undefined {
  for (let depth = path.length; depth > 0; depth--) {
    const target = path.slice(0, depth);
    if (walk(root, target) !== undefined) return target;
  }
  return undefined;
}

function prune(root: unknown, path: readonly PropertyKey[]): void {
  const parent = walk(root, path.slice(0, -1));
  if (parent === null || typeof parent !== 'object') return;
  const key = path[path.length - 1]!;
  if (Array.isArray(parent)) (parent as unknown[])[key as number] = PRUNED;
  else delete (parent as Record<PropertyKey, unknown>)[key];
}

function walk(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function removePrunedElements(node: unknown): void {
  if (Array.isArray(node)) {
    for (let i = node.length - 1; i >= 0; i--) {
      if (node[i] === PRUNED) node.splice(i, 1);
      else removePrunedElements(node[i]);
    }
  } else if (node !== null && typeof node === 'object') {
    for (const v of Object.values(node)) removePrunedElements(v);
  }
}
