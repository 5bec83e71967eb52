/**
 * A booking's history recorded by the chaos run in the wild: a recovering booking's workflow task was held on a
 * killed worker's sticky queue (timed out after 10 s), and the task after it ran on the clock of the task before. It
 * started a 0.5 s timer (event 22) where a replay, on the task's true clock, saw the poll already due and asked for
 * QueryOrders at once: a nondeterminism error that left the booking running for ever. Whether to wait is now the
 * schedule's to say, never the clock's (src/runtime/rules/schedule.ts, waitFor), so this history replays. Its payloads
 * are encrypted with that run's own throwaway key, kept beside it; the guests are the chaos run's made-up people.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { dataConverterFor } from '../../src/api/codec/config';
import { EncryptionKeys } from '../../src/api/codec/encryption';
import { workflowBundle } from '../harness/temporal';
import { foldersLeftToTheirBuild } from './fingerprint';

/** The shape of history it has: once a new build leaves that shape to its build, this code never continues it. */
const SHAPE = 'booking/v1-baseline';
const replayedHere = foldersLeftToTheirBuild().has(SHAPE) ? test.skip : test;

replayedHere(
  'a booking whose task after a sticky-queue timeout ran on a stale clock replays (it stopped for good before)',
  async () => {
    const file = JSON.parse(readFileSync(path.join(__dirname, 'fixtures', 'stale-clock-booking.json'), 'utf8'));
    const keys = EncryptionKeys.parse(file.keys);
    const dataConverter = dataConverterFor({ keys, activeKeyId: [...keys.keys()][0]! })!;
    // The timer of the stale task, then the poll after it, the booking's cancel request and two more tasks.
    const types = (file.history.events as Array<{ eventType: string }>).map((e) => e.eventType);
    expect(types[21]).toBe('EVENT_TYPE_TIMER_STARTED');
    expect(types).toContain('EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED');
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: workflowBundle(), dataConverter },
        historyFromJSON(file.history),
        file.workflowId,
      ),
    ).resolves.toBeUndefined();
  },
);
