/**
 * What the booking workflow needs from the Temporal service it runs on, checked before a worker polls:
 * the namespace, and the search attributes it writes (SEARCH_ATTRIBUTES). Without them every workflow
 * task fails with BadSearchAttributes in a WARN line, forever, while the worker looks healthy and every
 * booking hangs. Missing attributes are registered when allowed; otherwise the worker stops at once,
 * naming each one and the command that creates it. A check the service cannot answer (a method it does not
 * implement, as the Java test server's ListSearchAttributes; a permission the worker lacks) stops nothing: it
 * is returned as unverified, with the commands that set it up, for the caller to warn about.
 */
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../api/contract/definitions';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;
type IndexedValueType = temporal.api.enums.v1.IndexedValueType;
type SearchAttribute = (typeof SEARCH_ATTRIBUTES)[number];

/** The two services the check uses; a client Connection and a worker NativeConnection both have them. */
export type TemporalServices = Pick<Connection, 'workflowService' | 'operatorService'>;

export interface ReadinessOptions {
  services: TemporalServices;
  namespace: string;
  /** Register missing search attributes (WORKER_REGISTER_SEARCH_ATTRIBUTES); false: only check. */
  register: boolean;
  /** Why nothing is registered when `register` is false, for the error (default: the worker's variable). */
  checkOnlyReason?: string;
  /** How long to wait for newly registered attributes to become visible. Default 15 s. */
  visibleWithinMs?: number;
}

export interface Readiness {
  namespace: string;
  /** Attributes that were there already, with the right type. */
  present: string[];
  /** Attributes this call registered (empty when another worker or operator did it meanwhile). */
  registered: string[];
  /** Checks the service could not answer: nothing is known to be wrong, nothing is known to be right. */
  unverified: Unverified[];
}

/** A check the service could not answer, why, and the commands that set up what it would have checked. */
export interface Unverified {
  /** What could not be verified, and why, as one sentence. */
  message: string;
  commands: string[];
}

/** One text for the unverified checks (a WARN line's message): each with its commands, indented. */
export function describeUnverified(unverified: readonly Unverified[]): string {
  return unverified.map((u) => [u.message, ...u.commands].join('\n  ')).join('\n');
}

export const TemporalSetupErrorKinds = [
  'NamespaceNotFound',
  'SearchAttributesMissing',
  'SearchAttributeWrongType',
  'SearchAttributeRegistrationRefused',
] as const;
export type TemporalSetupErrorKind = (typeof TemporalSetupErrorKinds)[number];

/** The service is not ready for bookings; `commands` set it up (an operator runs them). */
export class TemporalSetupError extends Error {
  override readonly name = 'TemporalSetupError';
  constructor(
    readonly type: TemporalSetupErrorKind,
    message: string,
    readonly commands: string[] = [],
    options?: { cause?: unknown },
  ) {
    super(commands.length > 0 ? `${message}\n  ${commands.join('\n  ')}` : message, options);
  }
}

/** Checks the namespace and the search attributes, registering what is missing when allowed. */
export async function ensureTemporalReady(options: ReadinessOptions): Promise<Readiness> {
  const { services, namespace } = options;
  const unverified: Unverified[] = [];
  const namespaceUnverified = await requireNamespace(services, namespace);
  if (namespaceUnverified) unverified.push(namespaceUnverified);

  let existing: Map<string, IndexedValueType>;
  try {
    existing = await customAttributes(services, namespace);
  } catch (err) {
    const why = unanswered(err, 'ListSearchAttributes')?.reason;
    if (!why) throw err;
    unverified.push({
      message:
        `Could not verify that Temporal namespace "${namespace}" has the search attributes the booking workflow ` +
        `writes (${SEARCH_ATTRIBUTES.map((sa) => `${sa.name} (${sa.type})`).join(', ')}): ${why}. Polling all the ` +
        'same; if they are missing, every workflow task fails with BadSearchAttributes. Create them with:',
      commands: createCommands(namespace, SEARCH_ATTRIBUTES),
    });
    return { namespace, present: [], registered: [], unverified };
  }
  const ready = await ensureSearchAttributes(options, existing);
  return { ...ready, unverified };
}

/** The attributes' half of the check, once the service has listed what it has. */
async function ensureSearchAttributes(
  options: ReadinessOptions,
  existing: Map<string, IndexedValueType>,
): Promise<Omit<Readiness, 'unverified'>> {
  const { services, namespace } = options;
  const found = classify(existing);
  requireNoWrongType(namespace, found.wrongType);
  if (found.missing.length === 0) return { namespace, present: found.present, registered: [] };

  const names = found.missing.map((sa) => `${sa.name} (${sa.type})`).join(', ');
  const lacks = `Temporal namespace "${namespace}" lacks the search attributes the booking workflow writes: ${names}`;
  if (!options.register) {
    throw new TemporalSetupError(
      'SearchAttributesMissing',
      `${lacks}. ${options.checkOnlyReason ?? 'Registering them is off (WORKER_REGISTER_SEARCH_ATTRIBUTES=off)'}; create them with:`,
      createCommands(namespace, found.missing),
    );
  }
  try {
    await services.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(found.missing.map((sa) => [sa.name, indexedType(sa.type)])),
    });
  } catch (err) {
    // Another worker starting at the same moment may have registered them first (some servers then
    // answer AlreadyExists): what counts is whether they are there now.
    const now = classify(await customAttributes(services, namespace));
    requireNoWrongType(namespace, now.wrongType);
    if (now.missing.length === 0) return { namespace, present: now.present, registered: [] };
    // Permission denied, or a service that does not let workers do this (Temporal Cloud): an operator must.
    throw new TemporalSetupError(
      'SearchAttributeRegistrationRefused',
      `${lacks}, and registering them was refused (${grpcReason(err)}). Create them with:`,
      createCommands(namespace, now.missing),
      { cause: err },
    );
  }
  await waitUntilRegistered(services, namespace, found.missing, options.visibleWithinMs ?? 15_000);
  return { namespace, present: found.present, registered: found.missing.map((sa) => sa.name) };
}

/** The commands that create the attributes: the temporal CLI, and tcld for a Temporal Cloud namespace. */
export function createCommands(namespace: string, attributes: readonly SearchAttribute[]): string[] {
  return [
    ...attributes.map(
      (sa) => `temporal operator search-attribute create --namespace ${namespace} --name ${sa.name} --type ${sa.type}`,
    ),
    `(Temporal Cloud: tcld namespace search-attributes add --namespace ${namespace} ` +
      `${attributes.map((sa) => `--search-attribute ${sa.name}=${sa.type}`).join(' ')})`,
  ];
}

/** Throws when the namespace does not exist; returns what could not be verified when the service cannot say. */
async function requireNamespace(services: TemporalServices, namespace: string): Promise<Unverified | undefined> {
  try {
    await services.workflowService.describeNamespace({ namespace });
    return undefined;
  } catch (err) {
    const why = unanswered(err, 'DescribeNamespace')?.reason;
    if (why) {
      return {
        message: `Could not verify that Temporal namespace "${namespace}" exists: ${why}. Polling all the same; if it does not exist, create it with:`,
        commands: [`temporal operator namespace create --namespace ${namespace}`],
      };
    }
    if (grpcCode(err) !== GRPC_NOT_FOUND) throw err;
    throw new TemporalSetupError(
      'NamespaceNotFound',
      `Temporal namespace "${namespace}" does not exist. Create it with:`,
      [`temporal operator namespace create --namespace ${namespace}`],
      { cause: err },
    );
  }
}

interface Classified {
  present: string[];
  missing: SearchAttribute[];
  wrongType: Array<SearchAttribute & { actual: IndexedValueType }>;
}

function classify(existing: Map<string, IndexedValueType>): Classified {
  const result: Classified = { present: [], missing: [], wrongType: [] };
  for (const sa of SEARCH_ATTRIBUTES) {
    const actual = existing.get(sa.name);
    if (actual === undefined) result.missing.push(sa);
    else if (actual !== indexedType(sa.type)) result.wrongType.push({ ...sa, actual });
    else result.present.push(sa.name);
  }
  return result;
}

/** A search attribute cannot change type, and upserting a Keyword into a Text one fails every workflow task. */
function requireNoWrongType(namespace: string, wrongType: Classified['wrongType']): void {
  if (wrongType.length === 0) return;
  throw new TemporalSetupError(
    'SearchAttributeWrongType',
    `Temporal namespace "${namespace}" has ${wrongType.map((sa) => `${sa.name} as ${typeName(sa.actual)}`).join(', ')}; ` +
      `the booking workflow writes ${wrongType.map((sa) => `${sa.name} as ${sa.type}`).join(', ')}. ` +
      'A search attribute cannot change type: use another namespace, or remove it (existing workflows lose the ' +
      'indexed value) and re-create it:',
    wrongType.flatMap((sa) => [
      `temporal operator search-attribute remove --namespace ${namespace} --name ${sa.name}`,
      `temporal operator search-attribute create --namespace ${namespace} --name ${sa.name} --type ${sa.type}`,
    ]),
  );
}

async function customAttributes(services: TemporalServices, namespace: string): Promise<Map<string, IndexedValueType>> {
  const { customAttributes } = await services.operatorService.listSearchAttributes({ namespace });
  return new Map(Object.entries(customAttributes ?? {}) as Array<[string, IndexedValueType]>);
}

/**
 * Registration is eventually visible: poll until every attribute is listed. With its type, too: a server
 * may accept an add for a name it already has under another type and keep the old type.
 */
async function waitUntilRegistered(
  services: TemporalServices,
  namespace: string,
  attributes: readonly SearchAttribute[],
  withinMs: number,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = classify(await customAttributes(services, namespace));
    requireNoWrongType(namespace, now.wrongType);
    const stillMissing = attributes.filter((sa) => now.missing.some((m) => m.name === sa.name));
    if (stillMissing.length === 0) return;
    if (Date.now() > deadline) {
      throw new TemporalSetupError(
        'SearchAttributesMissing',
        `Registered ${stillMissing.map((sa) => sa.name).join(', ')} in "${namespace}", but they were not listed ` +
          `after ${withinMs / 1000} s; check with: temporal operator search-attribute list --namespace ${namespace}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function indexedType(type: string): IndexedValueType {
  const value = IndexedValueType[`INDEXED_VALUE_TYPE_${type.toUpperCase()}` as keyof typeof IndexedValueType];
  if (typeof value !== 'number') throw new Error(`unknown search attribute type ${type}`);
  return value;
}

/** The CLI's spelling of a type (INDEXED_VALUE_TYPE_KEYWORD_LIST → KeywordList). */
function typeName(type: IndexedValueType): string {
  const name = IndexedValueType[type] ?? String(type);
  return name
    .replace('INDEXED_VALUE_TYPE_', '')
    .toLowerCase()
    .replace(/(^|_)(.)/g, (_m, _sep: string, c: string) => c.toUpperCase());
}

const GRPC_NOT_FOUND = 5;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNIMPLEMENTED = 12;

/** A check the service cannot answer, and why, in words for a log line. */
export interface Unanswered {
  status: 'UNIMPLEMENTED' | 'PERMISSION_DENIED';
  reason: string;
}

/**
 * Whether `err` says the service cannot answer a call (and why): it does not implement the method (the Java test
 * server lacks parts of the operator API), or this worker's identity may not call it. Undefined for every other
 * failure, which stays a failure (a server down is not a check passed). Reads a wrapped gRPC error's cause too.
 */
export function unanswered(err: unknown, method: string): Unanswered | undefined {
  const code = grpcCode(err) ?? grpcCode((err as { cause?: unknown })?.cause);
  if (code === GRPC_UNIMPLEMENTED) {
    return { status: 'UNIMPLEMENTED', reason: `the service does not implement ${method} (UNIMPLEMENTED)` };
  }
  if (code === GRPC_PERMISSION_DENIED) {
    const cause = grpcCode(err) === undefined ? (err as { cause?: unknown }).cause : err;
    return {
      status: 'PERMISSION_DENIED',
      reason: `this worker may not call ${method} (PERMISSION_DENIED: ${grpcReason(cause)})`,
    };
  }
  return undefined;
}

function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

function grpcReason(err: unknown): string {
  const details = (err as { details?: unknown })?.details;
  return typeof details === 'string' && details ? details : err instanceof Error ? err.message : String(err);
}

/**
 * Checks (and, when allowed, prepares) the namespace, and logs what it found; throws TemporalSetupError. What the
 * service cannot answer (the Java test server's operator API, a worker without the permission to read) is one
 * WARN naming it and the commands that set it up, and the worker goes on: refusing would make such a service
 * unusable, and the service has not said anything is wrong.
 */
export async function reportReadiness(
  services: TemporalServices,
  options: { namespace: string; register: boolean },
  log: { say(line: string): void; warn(line: string): void },
): Promise<void> {
  const ready = await ensureTemporalReady({ services, ...options });
  if (ready.registered.length > 0) {
    log.say(`Registered search attributes ${ready.registered.join(', ')} in namespace "${ready.namespace}"`);
  }
  if (ready.unverified.length > 0) log.warn(describeUnverified(ready.unverified));
}
