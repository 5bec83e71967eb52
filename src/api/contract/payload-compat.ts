/**
 * Whether two versions of a payload's JSON Schema can be read across builds, both ways: an older receiver reading
 * what a newer sender sends, and a newer receiver reading what an older sender sent. The schemas are the ones
 * ./cross-build.ts freezes (zod's JSON Schema: objects, unions, enums, consts, arrays, strings and numbers with
 * bounds); anything else is compared as equal-or-incompatible, so an unknown construct never passes by accident.
 */

type Schema = Record<string, unknown>;

/**
 * Each reason the newer schema cannot stand in for the older one, `<path>: <why>`; empty when every payload of
 * either version is read by a receiver of the other. A receiver tolerates fields it does not know unless its
 * schema says `additionalProperties: false`.
 */
export function compatibilityIssues(older: unknown, newer: unknown): string[] {
  return [
    ...readIssues(asSchema(older), asSchema(newer), '').map(
      (i) => `an older receiver cannot read a newer sender: ${i}`,
    ),
    ...readIssues(asSchema(newer), asSchema(older), '').map(
      (i) => `a newer receiver cannot read an older sender: ${i}`,
    ),
  ];
}

/** Why some value the writer's schema allows would be refused by the reader's schema. */
function readIssues(reader: Schema, writer: Schema, at: string): string[] {
  const where = at || '(the payload)';
  if (Object.keys(reader).length === 0) return [];
  const writerBranches = branches(writer);
  if (writerBranches.length > 1 || writer !== writerBranches[0]) {
    return writerBranches.flatMap((branch) => readIssues(reader, branch, at));
  }
  const readerBranches = branches(reader);
  if (reader['anyOf'] || reader['oneOf']) {
    // One reader branch must take the whole writer's value; a discriminated union is matched by its tag.
    const tried = readerBranches.map((branch) => readIssues(branch, writer, at));
    if (tried.some((issues) => issues.length === 0)) return [];
    // The why of the branch of the same kind, when there is one: the others refuse it for its kind alone.
    const tag = discriminatorOf(writer);
    const same = readerBranches.findIndex((branch) => tag !== undefined && discriminatorOf(branch) === tag);
    const why = tried[same === -1 ? 0 : same]?.[0] ?? 'no branch';
    return [`${where}: no branch reads ${tag ? `kind "${tag}"` : 'this value'} (${why})`];
  }
  const issues: string[] = [];
  const rTypes = typesOf(reader);
  const wTypes = typesOf(writer);
  if (rTypes && !wTypes) issues.push(`${where}: may be any type, read as ${rTypes.join('|')}`);
  if (rTypes && wTypes) {
    const refused = wTypes.filter((t) => !rTypes.includes(t) && !(t === 'integer' && rTypes.includes('number')));
    if (refused.length > 0) issues.push(`${where}: ${refused.join('|')} is read as ${rTypes.join('|')}`);
  }
  issues.push(...valueIssues(reader, writer, where));
  issues.push(...boundIssues(reader, writer, where));
  if (reader['type'] === 'object' || reader['properties']) issues.push(...objectIssues(reader, writer, at));
  if (reader['type'] === 'array' && reader['items']) {
    issues.push(...readIssues(asSchema(reader['items']), asSchema(writer['items'] ?? {}), `${at}[]`));
  }
  const known = new Set([
    'type',
    'enum',
    'const',
    'properties',
    'required',
    'additionalProperties',
    'items',
    'anyOf',
    'oneOf',
    'default',
    'description',
    'title',
    ...BOUNDS.map((b) => b.key),
    'pattern',
    'format',
  ]);
  for (const key of Object.keys(reader)) {
    if (!known.has(key) && JSON.stringify(reader[key]) !== JSON.stringify(writer[key])) {
      issues.push(`${where}: "${key}" differs, and is not compared here`);
    }
  }
  return issues;
}

function objectIssues(reader: Schema, writer: Schema, at: string): string[] {
  const issues: string[] = [];
  const rProps = asSchema(reader['properties'] ?? {});
  const wProps = asSchema(writer['properties'] ?? {});
  const rRequired = new Set((reader['required'] as string[] | undefined) ?? []);
  const wRequired = new Set((writer['required'] as string[] | undefined) ?? []);
  for (const key of rRequired) {
    if (!(key in wProps)) issues.push(`${at}.${key}: required, and the sender does not have it`);
    else if (!wRequired.has(key)) issues.push(`${at}.${key}: required, and the sender may leave it out`);
  }
  for (const [key, wSchema] of Object.entries(wProps)) {
    if (key in rProps) issues.push(...readIssues(asSchema(rProps[key]), asSchema(wSchema), `${at}.${key}`));
    else if (reader['additionalProperties'] === false) {
      issues.push(`${at}.${key}: the receiver refuses fields it does not know`);
    }
  }
  return issues;
}

/** A reader with `enum` or `const` takes only those values: the writer's must be among them. */
function valueIssues(reader: Schema, writer: Schema, where: string): string[] {
  const allowed = valuesOf(reader);
  if (!allowed) return [];
  const sent = valuesOf(writer);
  if (!sent) return [`${where}: any value may come, only ${allowed.map((v) => JSON.stringify(v)).join(', ')} is read`];
  const refused = sent.filter((v) => !allowed.some((a) => JSON.stringify(a) === JSON.stringify(v)));
  return refused.length > 0 ? [`${where}: ${refused.map((v) => JSON.stringify(v)).join(', ')} not read`] : [];
}

const BOUNDS = [
  { key: 'minLength', lower: true },
  { key: 'minimum', lower: true },
  { key: 'exclusiveMinimum', lower: true },
  { key: 'minItems', lower: true },
  { key: 'maxLength', lower: false },
  { key: 'maximum', lower: false },
  { key: 'exclusiveMaximum', lower: false },
  { key: 'maxItems', lower: false },
] as const;

/** A reader's bound must be no tighter than the writer's; a pattern or format must be the writer's own. */
function boundIssues(reader: Schema, writer: Schema, where: string): string[] {
  const issues: string[] = [];
  for (const { key, lower } of BOUNDS) {
    const r = reader[key];
    if (typeof r !== 'number') continue;
    const w = writer[key];
    if (typeof w !== 'number' || (lower ? w < r : w > r)) {
      issues.push(`${where}: ${key} ${r} is read, the sender's is ${w ?? 'none'}`);
    }
  }
  for (const key of ['pattern', 'format']) {
    if (reader[key] !== undefined && reader[key] !== writer[key]) {
      issues.push(`${where}: ${key} ${String(reader[key])} is read, the sender's is ${String(writer[key] ?? 'none')}`);
    }
  }
  return issues;
}

function branches(schema: Schema): Schema[] {
  const union = (schema['anyOf'] ?? schema['oneOf']) as unknown[] | undefined;
  return union ? union.map(asSchema) : [schema];
}

function typesOf(schema: Schema): string[] | undefined {
  const type = schema['type'];
  if (type === undefined) return undefined;
  return Array.isArray(type) ? (type as string[]) : [type as string];
}

function valuesOf(schema: Schema): unknown[] | undefined {
  if ('const' in schema) return [schema['const']];
  return Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
}

function discriminatorOf(schema: Schema): string | undefined {
  const kind = asSchema(asSchema(schema['properties'] ?? {})['kind'] ?? {});
  return typeof kind['const'] === 'string' ? kind['const'] : undefined;
}

function asSchema(value: unknown): Schema {
  return typeof value === 'object' && value !== null ? (value as Schema) : {};
}
