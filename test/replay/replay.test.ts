/**
 * Replays every committed history (test/replay/histories/<version>/, recorded from real runs on the
 * dev server by `npm run record-histories`) against the current workflow code, with its real workflow
 * id. Each version folder is one shape of history that running bookings may have (before and after
 * each patch). A failure here means a change would break bookings already running: use patching
 * (see README).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { workflowBundle } from '../harness/temporal';
import { bookingRequest, personalValues } from '../harness/booking';
import { scanHistory } from '../../src/codec/scan';
import { testDataConverter } from '../fixtures/encryption';

const dir = path.join(__dirname, 'histories');
const versions = readdirSync(dir, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const files = versions
  .flatMap((version) => readdirSync(path.join(dir, version)).map((f) => `${version}/${f}`))
  .filter((f) => f.endsWith('.json'))
  .sort();

function load(file: string) {
  const { workflowId, history } = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  return { workflowId: workflowId as string, history: historyFromJSON(history) };
}

test('there are recorded histories to replay, for every version', () => {
  expect(versions.length).toBeGreaterThanOrEqual(2);
  for (const version of versions) {
    expect(files.filter((f) => f.startsWith(`${version}/`)).length).toBeGreaterThanOrEqual(10);
  }
});

test.each(files)('%s replays against the current workflow', async (file) => {
  const { workflowId, history } = load(file);
  expect(workflowId).toMatch(/^booking:/);
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
