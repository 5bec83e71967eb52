/**
 * Which test files run two at a time and which one at a time, read by jest.config.js and ./longest-first.js.
 * `npm run test:servers` runs the server tiers in two Jest runs, chosen by TEST_FILES: `parallel` (two files at a
 * time, each Jest worker with servers of its own: global-setup) and then `alone` (one file at a time, nothing else
 * on the machine's 2 cores from this run). A file is `alone` only for a reason written here; every other file of a
 * server tier must pass two at a time.
 */
// Jest loads its config, and so this module, as CommonJS before any transform.

/** The tiers that need no Temporal server: their runs (`npm run test:quick`) are always two files at a time. */
const NO_TEMPORAL_SERVER = ['unit', 'supplier', 'security', 'replay'];

/** The tiers on Temporal servers, whose files are split by TEST_FILES. */
const SERVER_TIERS = ['workflow', 'integration', 'e2e', 'prod'];

/** A whole tier that runs one file at a time: its files share one production cluster whose nodes its chaos files restart. */
const ALONE_TIERS = ['prod'];

/** Files of the other server tiers that run one at a time, and why. */
const ALONE_FILES = {
  // A booking's caller update held until a worker starts late: two at a time, the time-skipping server lost the
  // update ("update ... not found", a NullPointerException in the Java test server) while the worker started.
  'test/workflow/first-task.test.ts': 'an update held until a late worker starts',
  // Its bounds are checked against a recovery schedule driven to its deadline; one run timed out two at a time
  // under a load of 10-11.
  'test/workflow/recovery-bounds.test.ts': 'timed out once two at a time under load',
  // A 100-booking chaos run with worker kills and a server restart: its bookings' deadlines assume the run has
  // the machine.
  'test/integration/chaos-smoke.test.ts': 'deadlines of a chaos run with kills',
  // Its control must outrun the supplier's QueryOrders rate limit to get 429s: a machine shared with another file
  // may be too slow to.
  'test/integration/fleet-cap.test.ts': 'its control must outrun a rate limit',
  // Its last test makes a build current again within the 5 s grace of a drain that waits: two at a time, the
  // change landed after the grace and the drain said "drained" (a longer --grace would not lengthen the test, since
  // the drain ends when the build takes new runs again).
  'test/integration/deploy-move.test.ts': 'a rollback that must land within a 5 s grace',
  // Two at a time, its drain right after a rollout to B (the routing read back as B) was refused with "A still
  // takes new runs": the drain read routing that did not yet show the rollout.
  'test/integration/deploy-gate.test.ts': 'a drain that reads routing right after a rollout',
};

/** Whether a project's file runs one at a time: `tier` is the project, `file` the path under the repository. */
function runsAlone(tier, file) {
  return ALONE_TIERS.includes(tier) || (SERVER_TIERS.includes(tier) && file in ALONE_FILES);
}

/** The set this run selected (`TEST_FILES=parallel|alone`), or undefined for every file. */
function selectedFileSet() {
  const set = process.env.TEST_FILES;
  if (set === undefined || set === '') return undefined;
  if (set !== 'parallel' && set !== 'alone') throw new Error(`TEST_FILES=${set}: use parallel or alone`);
  return set;
}

module.exports = { NO_TEMPORAL_SERVER, SERVER_TIERS, ALONE_TIERS, ALONE_FILES, runsAlone, selectedFileSet };
