/**
 * The proposed profile: the profile under test with every clause's proposal laid over it, written as the
 * SUPPLIER_PROFILE a worker takes (only what differs from the documented defaults), and checked by the product's
 * own profile schema, so a proposal the worker would refuse never reaches the report.
 */
import { defaultSupplierProfile, SupplierProfile } from '../../runtime/config/supplier-profile';
import type { ProfilePatch } from './types';

type Json = { [key: string]: unknown };
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `base` with `patches` laid over it in order (objects merged, everything else replaced), as overrides of the defaults. */
export function proposeProfile(base: SupplierProfile, patches: readonly ProfilePatch[]): ProfilePatch {
  const merged = patches.reduce<Json>((acc, patch) => mergeInto(acc, patch), structuredClone(base) as Json);
  const parsed = SupplierProfile.parse(merged);
  return overridesOf(parsed as Json, defaultSupplierProfile as Json);
}

function mergeInto(target: Json, patch: Json): Json {
  const out: Json = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? mergeInto(current, value) : value;
  }
  return out;
}

/** What `profile` says that `defaults` does not, key by key (arrays whole). */
export function overridesOf(profile: Json, defaults: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(profile)) {
    const fallback = defaults[key];
    if (isObject(value) && isObject(fallback)) {
      const inner = overridesOf(value, fallback);
      if (Object.keys(inner).length > 0) out[key] = inner;
    } else if (JSON.stringify(value) !== JSON.stringify(fallback)) {
      out[key] = value;
    }
  }
  return out;
}
