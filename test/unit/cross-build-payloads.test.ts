/**
 * The payloads that cross builds (src/api/contract/cross-build.ts) against their frozen schemas (schema/messages/):
 *  - a payload's schema never changes under a version already frozen (builds running now were made with it);
 *  - each version reads the one before it both ways (nothing required, removed, retyped or narrowed; nothing added
 *    to a receiver that refuses unknown fields), so a breaking change must take a new name;
 *  - every signal, update and query the contract defines is in the registry;
 *  - every payload in the recorded histories (test/replay/histories, recorded by earlier builds) still parses with
 *    today's schemas.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { defaultPayloadConverter } from '@temporalio/common';
import * as messages from '../../src/api/contract/messages';
import {
  CROSS_BUILD_PAYLOADS,
  crossBuildJsonSchema,
  crossBuildSchemaFile,
  type CrossBuildPayload,
} from '../../src/api/contract/cross-build';
import { compatibilityIssues } from '../../src/api/contract/payload-compat';
import { testCodec } from '../fixtures/encryption';

const SNAPSHOTS = path.resolve(__dirname, '../../schema/messages');
const HISTORIES = path.resolve(__dirname, '../replay/histories');
const frozen = (name: string, version: number) =>
  JSON.parse(readFileSync(path.join(SNAPSHOTS, crossBuildSchemaFile(name, version)), 'utf8')) as {
    payload: unknown;
    answer?: unknown;
  };
const byName = new Map(CROSS_BUILD_PAYLOADS.map((p) => [p.name, p]));

describe('each payload at its version', () => {
  test.each(CROSS_BUILD_PAYLOADS.map((p) => [p.name, p] as const))(
    '%s: its schema is the one frozen for its version',
    (name, payload) => {
      const file = path.join(SNAPSHOTS, crossBuildSchemaFile(name, payload.version));
      expect({ file, exists: existsSync(file) }).toEqual({ file, exists: true });
      // Changed without its version moving: move it in cross-build.ts and run `npm run schema:messages`.
      // Compared as JSON, so the file may be formatted as Prettier likes.
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(crossBuildJsonSchema(payload));
    },
  );

  test.each(CROSS_BUILD_PAYLOADS.map((p) => [p.name, p] as const))(
    '%s: every version reads the one before it, both ways',
    (name, payload) => {
      const issues: string[] = [];
      for (let v = 2; v <= payload.version; v++) {
        const [older, newer] = [frozen(name, v - 1), frozen(name, v)];
        issues.push(...compatibilityIssues(older.payload, newer.payload).map((i) => `v${v}: ${i}`));
        if (older.answer || newer.answer) {
          issues.push(...compatibilityIssues(older.answer, newer.answer).map((i) => `v${v} answer: ${i}`));
        }
      }
      expect(issues).toEqual([]);
    },
  );

  test('every frozen folder and version belongs to a payload of the registry', () => {
    const strays: string[] = [];
    for (const folder of readdirSync(SNAPSHOTS, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      const payload = byName.get(folder.name);
      for (const file of readdirSync(path.join(SNAPSHOTS, folder.name))) {
        const version = Number(/^v(\d+)\.json$/.exec(file)?.[1]);
        if (!payload || !(version >= 1 && version <= payload.version)) strays.push(`${folder.name}/${file}`);
      }
      if (payload) {
        for (let v = 1; v <= payload.version; v++) {
          if (!existsSync(path.join(SNAPSHOTS, crossBuildSchemaFile(payload.name, v)))) {
            strays.push(`${payload.name}: v${v} missing (an older version's snapshot is never deleted)`);
          }
        }
      }
    }
    expect(strays).toEqual([]);
  });

  test('every signal, update and query of the contract is in the registry, as what it is', () => {
    const defined = Object.values(messages as Record<string, unknown>)
      .filter((v): v is { type: string; name: string } => typeof v === 'object' && v !== null && 'name' in v)
      .filter((v) => ['signal', 'update', 'query'].includes(v.type))
      .map((v) => `${v.type} ${v.name}`);
    expect(defined.length).toBeGreaterThanOrEqual(8);
    const registered = new Set(CROSS_BUILD_PAYLOADS.map((p) => `${p.kind} ${p.name}`));
    expect(defined.filter((d) => !registered.has(d))).toEqual([]);
  });
});

describe('the compatibility check', () => {
  const v1 = {
    type: 'object',
    properties: {
      reason: { type: 'string' },
      origin: { type: 'string', enum: ['auto', 'reconciliation'] },
      maxFee: { type: 'number' },
    },
    required: ['reason', 'origin'],
  };
  const withProps = (props: object, required = v1.required, more: object = {}) => ({
    ...v1,
    properties: { ...v1.properties, ...props },
    required,
    ...more,
  });

  test('passes an optional field added', () => {
    expect(compatibilityIssues(v1, withProps({ note: { type: 'string' } }))).toEqual([]);
  });
  test('refuses a new required field, a field removed, retyped or narrowed, a new enum value', () => {
    const required = withProps({ note: { type: 'string' } }, [...v1.required, 'note']);
    expect(compatibilityIssues(v1, required)).toEqual([
      'a newer receiver cannot read an older sender: .note: required, and the sender does not have it',
    ]);
    const { reason: _r, ...rest } = v1.properties;
    expect(compatibilityIssues(v1, { ...v1, properties: rest, required: ['origin'] })).toEqual([
      'an older receiver cannot read a newer sender: .reason: required, and the sender does not have it',
    ]);
    expect(compatibilityIssues(v1, withProps({ maxFee: { type: 'string' } }))).toHaveLength(2);
    expect(compatibilityIssues(v1, withProps({ reason: { type: 'string', minLength: 1 } }))).toEqual([
      "a newer receiver cannot read an older sender: .reason: minLength 1 is read, the sender's is none",
    ]);
    expect(
      compatibilityIssues(v1, withProps({ origin: { type: 'string', enum: ['auto', 'reconciliation', 'x'] } })),
    ).toEqual(['an older receiver cannot read a newer sender: .origin: "x" not read']);
  });
  test('refuses any field added to a receiver that refuses unknown fields', () => {
    const closed = { ...v1, additionalProperties: false };
    expect(
      compatibilityIssues(closed, { ...withProps({ note: { type: 'string' } }), additionalProperties: false }),
    ).toEqual(['an older receiver cannot read a newer sender: .note: the receiver refuses fields it does not know']);
  });
  test('reads a union branch by branch: a kind added is refused, one taken away is too', () => {
    const kind = (k: string) => ({
      type: 'object',
      properties: { kind: { type: 'string', const: k } },
      required: ['kind'],
    });
    const older = { anyOf: [kind('quote'), kind('cancel-requested')] };
    expect(compatibilityIssues(older, { anyOf: [kind('quote'), kind('cancel-requested')] })).toEqual([]);
    expect(compatibilityIssues(older, { anyOf: [kind('quote'), kind('cancel-requested'), kind('new')] })).toEqual([
      'an older receiver cannot read a newer sender: (the payload): no branch reads kind "new" (.kind: "new" not read)',
    ]);
    expect(compatibilityIssues(older, { anyOf: [kind('quote')] })).toHaveLength(1);
  });
});

// --- Recorded histories ---------------------------------------------------------------------------

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}
interface JsonEvent {
  eventId: string;
  eventType: string;
  [attributes: string]: unknown;
}

const codec = testCodec();
async function decode(payload: JsonPayload | undefined): Promise<unknown> {
  if (!payload) return undefined;
  const raw: Payload = {
    metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
  const [plain] = await codec.decode([raw]);
  return defaultPayloadConverter.fromPayload(plain!);
}

function historyFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory()
      ? historyFiles(path.join(dir, d.name))
      : d.name.endsWith('.json') && d.name !== 'recorded.json'
        ? [path.join(dir, d.name)]
        : [],
  );
}

/** What a payload of a history is, as the registry names it, and the value; unknown names are reported. */
async function payloadsOf(
  events: JsonEvent[],
): Promise<Array<{ name: string; part: 'payload' | 'answer'; value: unknown; at: string }>> {
  const found: Array<{ name: string; part: 'payload' | 'answer'; value: unknown; at: string }> = [];
  let workflowType = '';
  const updates = new Map<string, string>();
  for (const event of events) {
    const at = `event ${event.eventId}`;
    const attrs = (key: string) => (event[key] ?? {}) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    switch (event.eventType) {
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED': {
        const a = attrs('workflowExecutionStartedEventAttributes');
        workflowType = a.workflowType?.name ?? '';
        found.push({ name: `${workflowType}.input`, part: 'payload', value: await decode(a.input?.payloads?.[0]), at });
        const memo = a.memo?.fields as Record<string, JsonPayload> | undefined;
        if (memo && workflowType === 'bookingWorkflow') {
          const value: Record<string, unknown> = {};
          for (const [key, p] of Object.entries(memo)) value[key] = await decode(p);
          found.push({ name: 'bookingWorkflow.memo', part: 'payload', value, at });
        }
        break;
      }
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED': {
        const a = attrs('workflowExecutionSignaledEventAttributes');
        found.push({ name: a.signalName, part: 'payload', value: await decode(a.input?.payloads?.[0]), at });
        break;
      }
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED': {
        const a = attrs('workflowExecutionUpdateAcceptedEventAttributes');
        const name = a.acceptedRequest?.input?.name as string;
        updates.set(a.acceptedRequest?.meta?.updateId ?? a.protocolInstanceId, name);
        found.push({ name, part: 'payload', value: await decode(a.acceptedRequest?.input?.args?.payloads?.[0]), at });
        break;
      }
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED': {
        const a = attrs('workflowExecutionUpdateCompletedEventAttributes');
        const success = a.outcome?.success?.payloads?.[0];
        const name = updates.get(a.meta?.updateId) ?? '(an update never accepted)';
        if (success) found.push({ name, part: 'answer', value: await decode(success), at });
        break;
      }
      case 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED': {
        const a = attrs('workflowExecutionCompletedEventAttributes');
        found.push({
          name: `${workflowType}.result`,
          part: 'payload',
          value: await decode(a.result?.payloads?.[0]),
          at,
        });
        break;
      }
    }
  }
  return found;
}

/** The workflow types whose payloads cross builds; the others' (sweep, note, gate) stay with the operator's build. */
const CROSSING_TYPES = new Set(CROSS_BUILD_PAYLOADS.map((p) => p.workflow as string));

test("every payload in the recorded histories parses with today's schemas", async () => {
  const files = historyFiles(HISTORIES);
  expect(files.length).toBeGreaterThan(100);
  const failures: string[] = [];
  let read = 0;
  for (const file of files) {
    const { history } = JSON.parse(readFileSync(file, 'utf8')) as { history: { events: JsonEvent[] } };
    const type = (
      history.events[0]?.['workflowExecutionStartedEventAttributes'] as { workflowType?: { name?: string } }
    )?.workflowType?.name;
    if (!type || !CROSSING_TYPES.has(type)) continue;
    for (const found of await payloadsOf(history.events)) {
      const payload: CrossBuildPayload | undefined = byName.get(found.name);
      const where = `${path.relative(HISTORIES, file)} ${found.at} ${found.name}`;
      // A message (signal, update) not in the registry is one nobody versioned; a start or result not in it stays
      // on one build (the sweep's result, say).
      if (!payload) {
        if (!/\.(input|result|memo)$/.test(found.name)) failures.push(`${where}: not in the registry`);
        continue;
      }
      const schema = found.part === 'answer' ? payload.answer : payload.schema;
      if (!schema) continue;
      read++;
      const parsed = schema.safeParse(found.value);
      if (!parsed.success) {
        failures.push(`${where}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
      }
    }
  }
  expect(failures).toEqual([]);
  expect(read).toBeGreaterThan(300);
}, 60_000);
