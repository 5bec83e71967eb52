/**
 * CheckAvail's fallback ("R2") candidates, read tolerantly. The spec says CheckAvail returns candidates of alternative
 * suppliers and shows nothing of their form, and nothing here decides anything: they are passed on to the caller.
 * So: a list at the profile's field, each entry kept when it carries a package id, its price, supplier and a name
 * taken when they read as such, and everything else (nulls, retyped or unknown fields, entries that are not objects)
 * left out. Never throws: an unreadable list is no list.
 */
import { MAX_FALLBACK_CANDIDATES, type FallbackCandidate, type Money } from '../../api/values/index';
import { plainNumber } from './read';

/** The candidates at `field` of CheckAvail's `data` (the profile's fallbackCandidatesField), read as below. */
export function candidatesIn(data: unknown, field: string): FallbackCandidate[] {
  return readCandidates(isRecord(data) ? data[field] : undefined);
}

export function readCandidates(raw: unknown): FallbackCandidate[] {
  if (!Array.isArray(raw)) return [];
  const read: FallbackCandidate[] = [];
  for (const entry of raw) {
    if (read.length >= MAX_FALLBACK_CANDIDATES) break;
    const candidate = candidateOf(entry);
    if (candidate) read.push(candidate);
  }
  return read;
}

function candidateOf(entry: unknown): FallbackCandidate | undefined {
  if (!isRecord(entry)) return undefined;
  const ratePkgId = text(entry['ratePkgId']);
  if (!ratePkgId) return undefined;
  const totalRate = isRecord(entry['totalRate']) ? entry['totalRate'] : {};
  const price = money(totalRate['grossRate']) ?? money(totalRate['netRate']) ?? money(entry['price']);
  // A package names its room and supplier in `originalRoomNaming` (the spec's RoomRatePkg); a list of its own may not.
  const naming = isRecord(entry['originalRoomNaming']) ? entry['originalRoomNaming'] : {};
  const supplier = supplierOf(entry['supplier']) ?? supplierOf(naming['supplier']);
  const name = text(entry['name']) ?? text(naming['name']);
  return {
    ratePkgId,
    ...(supplier !== undefined ? { supplier } : {}),
    ...(price ? { price } : {}),
    ...(name ? { name } : {}),
  };
}

function money(value: unknown): Money | undefined {
  if (!isRecord(value)) return undefined;
  const currency = text(value['currency']);
  const raw = value['amount'];
  const amount = typeof raw === 'number' ? raw : typeof raw === 'string' ? plainNumber(raw) : undefined;
  return currency && amount !== undefined && Number.isFinite(amount) ? { currency, amount } : undefined;
}

function supplierOf(value: unknown): number | string | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : text(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
