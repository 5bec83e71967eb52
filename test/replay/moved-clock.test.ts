/**
 * Every history the current code replays, replayed again with the workflow's clock moved. A workflow reads the time
 * from its task's start event, stamped by the server; a node whose clock runs ahead or behind, or a task held on a
 * lost worker's queue, moves that time against everything else in the history (activity results, timers, the
 * supplier's own timestamps). No command may depend on it: which command comes next (wait or poll, send or refuse,
 * re-send or end) must come from the schedule, the run's own recorded state or a value recorded in history, and the
 * clock may only set how long a timer runs. Each task's start time is moved by seconds and by minutes, both ways;
 * any nondeterminism fails.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { workflowBundle } from '../harness/temporal';
import { testDataConverter } from '../fixtures/encryption';
import { byVersion, foldersLeftToTheirBuild, WORKFLOW_TYPES } from './fingerprint';

const dir = path.join(__dirname, 'histories');
const leftToTheirBuild = foldersLeftToTheirBuild(dir);
const files = Object.keys(WORKFLOW_TYPES)
  .filter((folder) => existsSync(path.join(dir, folder)))
  .flatMap((folder) =>
    readdirSync(path.join(dir, folder))
      .sort(byVersion)
      .map((version) => `${folder}/${version}`),
  )
  .filter((version) => !leftToTheirBuild.has(version))
  .flatMap((version) => readdirSync(path.join(dir, version)).map((f) => `${version}/${f}`))
  .filter((f) => f.endsWith('.json') && !f.endsWith('/recorded.json'))
  .sort();

interface JsonEvent {
  eventType: string;
  eventTime: string;
}

/** The history with each workflow task's start (the workflow's clock) moved by `seconds`; nothing else moves. */
function withClockMoved(file: string, seconds: number) {
  const { workflowId, history } = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
    workflowId: string;
    history: { events: JsonEvent[] };
  };
  for (const event of history.events) {
    if (event.eventType !== 'EVENT_TYPE_WORKFLOW_TASK_STARTED') continue;
    event.eventTime = new Date(Date.parse(event.eventTime) + seconds * 1000).toISOString();
  }
  return { workflowId: `${workflowId}`, history: historyFromJSON(history), file };
}

/** Seconds and minutes, both ways: a node a little off, and one far off (or a task held on a lost worker). */
const MOVES = [-600, -5, 5, 600];

test('there are histories to move the clock of', () => {
  expect(files.length).toBeGreaterThanOrEqual(20);
});

describe.each(MOVES)('the workflow clock moved by %i s', (seconds) => {
  test('every recorded history replays without nondeterminism', async () => {
    const histories = files.map((file) => withClockMoved(file, seconds));
    const failures: string[] = [];
    // One replay worker for all of them: a worker per history would cost a bundle load each.
    const results = Worker.runReplayHistories(
      { workflowBundle: workflowBundle(), dataConverter: testDataConverter() },
      histories,
    );
    let i = 0;
    for await (const result of results) {
      const file = histories[i++]!.file;
      if (result.error) failures.push(`${file}: ${result.error.name}: ${result.error.message.split('\n')[0]}`);
    }
    expect(i).toBe(histories.length);
    expect(failures).toEqual([]);
  });
});
