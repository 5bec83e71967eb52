/**
 * Replays every committed history (test/replay/histories/<type>/<version>/, recorded from real runs on the
 * dev server by `npm run record-histories`) against the current workflow code, with its real workflow id. Each
 * version folder is one shape of history that running workflows of that type may have (before and after each
 * patch). A failure here means a change would break workflows already running: use patching (see
 * docs/testing.md, "Changing the workflow safely"). Every workflow type the worker registers has histories, and
 * code that changed since its type's newest histories were recorded fails until they are recorded again.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { workflowBundle } from '../harness/temporal';
import { bookingRequest, personalValues } from '../harness/booking';
import { scanHistory } from '../../dev/codec/scan';
import { testDataConverter } from '../fixtures/encryption';
import * as registered from '../../src/workflows';
import {
  byVersion,
  foldersLeftToTheirBuild,
  WORKFLOW_TYPES,
  workflowFingerprint,
  type WorkflowFolder,
} from './fingerprint';

const dir = path.join(__dirname, 'histories');
const folders = Object.keys(WORKFLOW_TYPES) as WorkflowFolder[];
const subdirs = (at: string) =>
  readdirSync(at, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort(byVersion);
/** `<type>/<version>` for every version folder, oldest first within a type. */
const versions = folders.flatMap((folder) =>
  existsSync(path.join(dir, folder)) ? subdirs(path.join(dir, folder)).map((v) => `${folder}/${v}`) : [],
);
/** Folders left to the builds that recorded them (`--new-build`): this code never continues their runs. */
const leftToTheirBuild = foldersLeftToTheirBuild(dir);
/** Every history on disk; `files` those the current code must replay. */
const allFiles = versions
  .flatMap((version) => readdirSync(path.join(dir, version)).map((f) => `${version}/${f}`))
  .filter((f) => f.endsWith('.json') && !f.endsWith('/recorded.json'))
  .sort();
const files = versions
  .filter((version) => !leftToTheirBuild.has(version))
  .flatMap((version) => readdirSync(path.join(dir, version)).map((f) => `${version}/${f}`))
  .filter((f) => f.endsWith('.json') && !f.endsWith('/recorded.json'))
  .sort();

function load(file: string) {
  const { workflowId, history } = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  return { workflowId: workflowId as string, history: historyFromJSON(history) };
}

/** The fewest histories a version folder holds: the booking's scenarios, and the few of an order or a sweep. */
const FEWEST: Record<WorkflowFolder, number> = { booking: 10, order: 4, sweep: 2, note: 1, gate: 1 };

test('every workflow type the worker registers has recorded histories', () => {
  expect(Object.keys(registered).sort()).toEqual(folders.map((f) => WORKFLOW_TYPES[f].type).sort());
  for (const folder of folders) {
    const own = versions.filter((v) => v.startsWith(`${folder}/`));
    expect({ folder, versions: own.length > 0 }).toEqual({ folder, versions: true });
    for (const version of own) {
      expect({
        version,
        histories: allFiles.filter((f) => f.startsWith(`${version}/`)).length >= FEWEST[folder],
      }).toEqual({ version, histories: true });
    }
  }
});

test.each(folders)("the %s workflow's code is the code its newest histories were recorded from", (folder) => {
  const newest = versions.filter((v) => v.startsWith(`${folder}/`)).at(-1)!;
  const recordedPath = path.join(dir, newest, 'recorded.json');
  const recorded = existsSync(recordedPath)
    ? (JSON.parse(readFileSync(recordedPath, 'utf8')) as { fingerprint: string }).fingerprint
    : 'none';
  const now = workflowFingerprint(folder);
  if (recorded !== now) {
    throw new Error(
      `${WORKFLOW_TYPES[folder].type}'s code changed since test/replay/histories/${newest} was recorded ` +
        `(fingerprint ${recorded}, now ${now}). If the change alters commands, guard it with patched() and record ` +
        `a new folder: npm run record-histories -- ${folder} <next-version>. Otherwise record the newest again: ` +
        `npm run record-histories -- ${folder} (it refuses to overwrite histories the new code cannot replay).`,
    );
  }
});

test.each(files)('%s replays against the current workflow', async (file) => {
  const { workflowId, history } = load(file);
  const folder = file.split('/')[0] as WorkflowFolder;
  expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name).toBe(
    WORKFLOW_TYPES[folder].type,
  );
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: workflowBundle(), dataConverter: testDataConverter() },
      history,
      workflowId,
    ),
  ).resolves.toBeUndefined();
});

test('the histories on disk hold no personal data in clear: payloads are encrypted', () => {
  const needles = { secrets: [], personal: personalValues(bookingRequest()) };
  for (const file of files) {
    const raw = readFileSync(path.join(dir, file), 'utf8');
    expect(scanHistory(file, raw, needles)).toEqual([]);
    expect(raw).toContain(Buffer.from('binary/encrypted').toString('base64'));
  }
});

test('a deliberately changed workflow fails replay with a nondeterminism error', async () => {
  const { workflowId, history } = load(files.find((f) => f.includes('/confirmed-at-once')) ?? files[0]!);
  const error = await Worker.runReplayHistory(
    { workflowsPath: require.resolve('./fixtures/changed-workflow'), dataConverter: testDataConverter() },
    history,
    workflowId,
  ).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DeterminismViolationError);
});

/**
 * A cancel that reaches a run resumed from continue-as-new with its very first task: Book was sent long
 * before, so the run must go on resolving the order (the input check of a resumed run is not cancellable).
 * Made from the recorded resumed run by inserting the cancel request right after its start.
 */
test('a cancel arriving with the first task of a resumed run does not end it', async () => {
  const file = files.find((f) => f.endsWith('/continued-as-new-then-confirmed.json'));
  expect(file).toBeDefined();
  const { workflowId } = load(file!);
  const recorded = JSON.parse(readFileSync(path.join(dir, file!), 'utf8')).history as { events: JsonEvent[] };
  const started = recorded.events[0]!;
  expect(started.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
  const cancel: JsonEvent = {
    eventId: '2',
    eventTime: started.eventTime,
    eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED',
    workflowExecutionCancelRequestedEventAttributes: { cause: 'replay test', identity: 'replay test' },
  };
  const events = [started, cancel, ...recorded.events.slice(1).map((e) => shiftEventIds(e, 1) as JsonEvent)];
  // A live worker that meets a cancel in that task uses, and records, the SDK flag that keeps a
  // non-cancellable scope's children from cancellation (flag 1 of the TypeScript SDK); the recorded
  // run met no cancel, so it is added to the first completed workflow task as a live run would have it.
  const firstCompleted = events.find((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED')!;
  const attributes = firstCompleted.workflowTaskCompletedEventAttributes as { sdkMetadata?: Record<string, unknown> };
  attributes.sdkMetadata = { ...attributes.sdkMetadata, langUsedFlags: [1] };
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: workflowBundle(), dataConverter: testDataConverter() },
      historyFromJSON({ events }),
      workflowId,
    ),
  ).resolves.toBeUndefined();
});

/**
 * A server node whose search-attribute mapping is not loaded yet hands out the start event's search attributes
 * without their type metadata (seen on the production engine while its nodes restarted): the same values, which the
 * SDK's typed view then leaves out. Whether the workflow upserts a stage must not depend on that, or a replay on
 * another worker sends another number of upserts and fails with a nondeterminism error.
 */
test('a history replays the same when its start event carries its search attributes without type metadata', async () => {
  const newest = versions.filter((v) => v.startsWith('booking/')).at(-1)!;
  const file = files.find((f) => f.startsWith(`${newest}/`) && f.endsWith('/confirmed-at-once.json'));
  expect(file).toBeDefined();
  const { workflowId } = load(file!);
  const recorded = JSON.parse(readFileSync(path.join(dir, file!), 'utf8')).history as { events: JsonEvent[] };
  const started = recorded.events[0]!.workflowExecutionStartedEventAttributes as unknown as {
    searchAttributes: { indexedFields: Record<string, { metadata: Record<string, string> }> };
  };
  const fields = Object.values(started.searchAttributes.indexedFields);
  expect(fields.length).toBe(2);
  for (const field of fields) delete field.metadata.type;
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: workflowBundle(), dataConverter: testDataConverter() },
      historyFromJSON(recorded),
      workflowId,
    ),
  ).resolves.toBeUndefined();
});

/**
 * Seen on the production engine (chaos-prod-smoke): a booking started while a node restarted upserted its
 * reference once more than the start had set it, and a replay on another worker sent one upsert fewer, so the
 * booking stuck after Book on a nondeterminism error. How a server presents the start event's search attributes
 * (under their names, under the field names a node without the mapping uses, or none) must not change a command.
 * The workflow decides its upserts from its own record, so the newest histories replay the same however the start
 * event carries them.
 */
describe("a booking's commands do not depend on how the server presents its start's search attributes", () => {
  const newest = versions.filter((v) => v.startsWith('booking/')).at(-1)!;
  const presentations = {
    'under field names': (fields: Record<string, unknown>) =>
      Object.fromEntries(Object.values(fields).map((v, i) => [`Keyword0${i + 1}`, v])),
    'not at all': () => ({}),
  };
  const replayPresented = (file: string, present: (fields: Record<string, unknown>) => Record<string, unknown>) => {
    const { workflowId } = load(file);
    const recorded = JSON.parse(readFileSync(path.join(dir, file), 'utf8')).history as { events: JsonEvent[] };
    const started = recorded.events[0]!.workflowExecutionStartedEventAttributes as unknown as {
      searchAttributes?: { indexedFields: Record<string, unknown> };
    };
    const fields = started.searchAttributes?.indexedFields ?? {};
    expect(Object.keys(fields).sort()).toEqual(['BookingStage', 'CustomerReferenceNo']);
    started.searchAttributes = { indexedFields: present(fields) };
    return Worker.runReplayHistory(
      { workflowBundle: workflowBundle(), dataConverter: testDataConverter() },
      historyFromJSON(recorded),
      workflowId,
    );
  };

  const cases = files
    .filter((f) => f.startsWith(`${newest}/`))
    .flatMap((file) => Object.keys(presentations).map((how) => [file, how] as const));
  test.each(cases)('%s, the attributes presented %s', async (file, how) => {
    await expect(replayPresented(file, presentations[how as keyof typeof presentations])).resolves.toBeUndefined();
  });
});

type JsonEvent = Record<string, unknown> & {
  eventTime?: unknown;
  workflowExecutionStartedEventAttributes?: { continuedExecutionRunId?: string };
};

/** The event with its own id and every id it refers to (…EventId fields) moved up by `by`. */
function shiftEventIds(value: unknown, by: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shiftEventIds(v, by));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      /eventId$/i.test(key) && (typeof v === 'string' || typeof v === 'number')
        ? String(Number(v) + by)
        : shiftEventIds(v, by),
    ]),
  );
}
