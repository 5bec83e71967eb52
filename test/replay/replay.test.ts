/**
 * Replays every committed history (test/replay/histories, recorded from real runs on the dev server
 * by `npm run record-histories`) against the current workflow code, with its real workflow id.
 * A failure here means a change would break bookings already running: use patching (see README).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { workflowBundle } from '../harness/temporal';
import { bookingRequest } from '../harness/booking';
import { testDataConverter } from '../fixtures/encryption';

const dir = path.join(__dirname, 'histories');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

function load(file: string) {
  const { workflowId, history } = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  return { workflowId: workflowId as string, history: historyFromJSON(history) };
}

test('there are recorded histories to replay', () => {
  expect(files.length).toBeGreaterThanOrEqual(10);
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
  const { holder, guests } = bookingRequest();
  const personal = [
    holder.email,
    holder.firstName,
    holder.lastName,
    holder.phone.number,
    ...guests.map((g) => g.lastName),
  ];
  for (const file of files) {
    const raw = readFileSync(path.join(dir, file), 'utf8');
    // Payload data is base64 in the JSON: look for the values in clear and base64-decoded.
    const decoded = [...raw.matchAll(/"data": ?"([A-Za-z0-9+/=]+)"/g)]
      .map((m) => Buffer.from(m[1]!, 'base64').toString('latin1'))
      .join('\n');
    for (const value of personal)
      expect({ file, value, found: raw.includes(value) || decoded.includes(value) }).toEqual({
        file,
        value,
        found: false,
      });
    expect(raw).toContain(Buffer.from('binary/encrypted').toString('base64'));
  }
});

test('a deliberately changed workflow fails replay with a nondeterminism error', async () => {
  const { workflowId, history } = load(files.find((f) => f.startsWith('confirmed-at-once')) ?? files[0]!);
  const error = await Worker.runReplayHistory(
    { workflowsPath: require.resolve('./fixtures/changed-workflow'), dataConverter: testDataConverter() },
    history,
    workflowId,
  ).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DeterminismViolationError);
});
