/**
 * What the booking workflow needs from the Temporal service it runs on, checked before a worker polls:
 * the namespace, and the search attributes it writes (SEARCH_ATTRIBUTES). Without them every workflow
 * task fails with BadSearchAttributes in a WARN line, forever, while the worker looks healthy and every
 * booking hangs. Missing attributes are registered when allowed; otherwise the worker stops at once,
 * naming each one and the command that creates it.
 */
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../contract/definitions';

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;
type IndexedValueType = temporal.api.enums.v1.IndexedValueType;

/** The two services the check uses; a client Connection and a worker NativeConnection both have them. */
export type TemporalServices = Pick<Connection, 'workflowService' | 'operatorService'>;

export interface ReadinessOptions {
  services: TemporalServices;
  namespace: string;
  /** Register missing search attributes (WORKER_REGISTER_SEARCH_ATTRIBUTES); off: only check. */
  register: boolean;
  /** How long to wait for newly registered attributes to become visible. Default 15 s. */
  visibleWithinMs?: number;
}

export interface Readiness {
  namespace: string;
  /** Attributes that were there already. */
  present: string[];
  /** Attributes this call registered. */
  registered: string[];
}

export const TemporalSetupErrorKinds = [
  'NamespaceNotFound',
  'SearchAttributesMissing',
  'SearchAttributeWrongType',
  'SearchAttributeRegistrationRefused',
] as const;

/** The service is not ready for bookings; `commands` set it up (an operator runs them). */
export class TemporalSetupError extends Error {
  override readonly name = 'TemporalSetupError';
  constructor(
    readonly type: (typeof TemporalSetupErrorKinds)[number],
    message: string,
    readonly commands: string[] = [],
  ) {
    super(commands.length > 0 ? `${message}\n  ${commands.join('\n  ')}` : message);
  }
}

/** Checks the namespace and the search attributes, registering what is missing when allowed. */
export async function ensureTemporalReady(options: ReadinessOptions): Promise<Readiness> {
  const { services, namespace } = options;
  await requireNamespace(services, namespace);

  const existing = await customAttributes(services, namespace);
  const wrongType = SEARCH_ATTRIBUTES.filter(
    (sa) => existing.has(sa.name) && existing.get(sa.name) !== indexedType(sa.type),
  );
  if (wrongType.length > 0) {
    throw new TemporalSetupError(
      'SearchAttributeWrongType',
      `Temporal namespace "${namespace}" has ${wrongType.map((sa) => `${sa.name} as ${typeName(existing.get(sa.name)!)}`).join(', ')}; ` +
        `the booking workflow writes ${wrongType.map((sa) => `${sa.name} as ${sa.type}`).join(', ')}. ` +
        'A search attribute cannot change type: use another namespace, or remove and re-create it.',
    );
  }
  const missing = SEARCH_ATTRIBUTES.filter((sa) => !existing.has(sa.name));
  const present = SEARCH_ATTRIBUTES.filter((sa) => existing.has(sa.name)).map((sa) => sa.name);
  if (missing.length === 0) return { namespace, present, registered: [] };

  const commands = missing.map(
    (sa) => `temporal operator search-attribute create --namespace ${namespace} --name ${sa.name} --type ${sa.type}`,
  );
  const names = missing.map((sa) => `${sa.name} (${sa.type})`).join(', ');
  if (!options.register) {
    throw new TemporalSetupError(
      'SearchAttributesMissing',
      `Temporal namespace "${namespace}" lacks the search attributes the booking workflow writes: ${names}. ` +
        'Registering them is off (WORKER_REGISTER_SEARCH_ATTRIBUTES=off); create them with:',
      commands,
    );
  }
  try {
    await services.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((sa) => [sa.name, indexedType(sa.type)])),
    });
  } catch (err) {
    // Permission denied, or a service that does not let workers do this (Temporal Cloud): an operator must.
    throw new TemporalSetupError(
      'SearchAttributeRegistrationRefused',
      `Temporal namespace "${namespace}" lacks the search attributes the booking workflow writes: ${names}, ` +
        `and registering them was refused (${grpcReason(err)}). Create them with (in Temporal Cloud, in the ` +
        "namespace's settings):",
      commands,
    );
  }
  await waitUntilVisible(
    services,
    namespace,
    missing.map((sa) => sa.name),
    options.visibleWithinMs ?? 15_000,
  );
  return { namespace, present, registered: missing.map((sa) => sa.name) };
}

async function requireNamespace(services: TemporalServices, namespace: string): Promise<void> {
  try {
    await services.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if (grpcCode(err) !== GRPC_NOT_FOUND) throw err;
    throw new TemporalSetupError(
      'NamespaceNotFound',
      `Temporal namespace "${namespace}" does not exist. Create it with:`,
      [`temporal operator namespace create --namespace ${namespace}`],
    );
  }
}

async function customAttributes(services: TemporalServices, namespace: string): Promise<Map<string, IndexedValueType>> {
  const { customAttributes } = await services.operatorService.listSearchAttributes({ namespace });
  return new Map(Object.entries(customAttributes ?? {}) as Array<[string, IndexedValueType]>);
}

/** Registration is eventually visible: poll until every name is listed. */
async function waitUntilVisible(services: TemporalServices, namespace: string, names: string[], withinMs: number) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const now = await customAttributes(services, namespace);
    if (names.every((n) => now.has(n))) return;
    if (Date.now() > deadline) {
      throw new TemporalSetupError(
        'SearchAttributesMissing',
        `Registered ${names.join(', ')} in "${namespace}", but they were not visible after ${withinMs / 1000} s`,
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

function typeName(type: IndexedValueType): string {
  const name = IndexedValueType[type] ?? String(type);
  return name
    .replace('INDEXED_VALUE_TYPE_', '')
    .toLowerCase()
    .replace(/^./, (c) => c.toUpperCase());
}

const GRPC_NOT_FOUND = 5;

function grpcCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

function grpcReason(err: unknown): string {
  const details = (err as { details?: unknown })?.details;
  return typeof details === 'string' && details ? details : err instanceof Error ? err.message : String(err);
}
