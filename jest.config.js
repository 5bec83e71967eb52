/**
 * Test tiers, each runnable alone with `npx jest --selectProjects <name>`:
 *   unit        pure code, no servers
 *   supplier    the supplier client against the sandbox supplier over real HTTP
 *   workflow    the booking workflow on the Java time-skipping test server + sandbox supplier
 *   integration worker, client helper and CLI on the Temporal dev server + sandbox supplier
 *   replay      committed histories replayed against the current workflow code
 *   e2e         headless Chromium against the dev server's Web UI
 *   security    attacks on the callback receiver and codec server (replay, 10 MB bodies, slow-loris, no token),
 *               each on a real listener started in the test, each refused
 *   prod        the production topology (PostgreSQL, two Temporal nodes; dev/prod): the integration files
 *               below on it, and the chaos run's prod mode at smoke size
 * TEST_TEMPORAL_ENGINE=prod runs the whole integration (and e2e) tier on the production topology instead of
 * the dev server: `TEST_TEMPORAL_ENGINE=prod npm run test:integration`.
 * Servers are started once per run by test/harness/global-setup.ts: a time-skipping server and a dev server per
 * Jest worker, shared by the files that worker runs one after another (one worker unless the run is --maxWorkers N).
 */
// Every tier runs in a time zone that is not UTC, with daylight saving, as a worker may: code that reads a
// timestamp in the machine's zone (Date.parse of a value without an offset) then fails here instead of moving a
// check-in by hours in production. Set before Jest starts anything, so the servers and children it starts
// inherit it; test/unit/timezone.test.ts fails if it is gone.
process.env.TZ = 'America/New_York';

// Every file reaches the servers of the Jest worker it runs in (test/harness/use-worker-servers.ts).
const workerServers = '<rootDir>/test/harness/use-worker-servers.ts';

const {
  ALONE_FILES,
  ALONE_TIERS,
  NO_TEMPORAL_SERVER,
  SERVER_TIERS,
  selectedFileSet,
} = require('./test/harness/file-sets');

// TEST_FILES=parallel or alone picks one of the two runs `npm run test:servers` makes (test/harness/file-sets.js);
// unset, every file of the selected tiers runs.
const fileSet = selectedFileSet();
const escape = (file) => file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const NOTHING = ['.*'];

/** The part of a tier's files the selected set keeps, as Jest options. */
function filesOfSet(name, testMatch) {
  if (fileSet === undefined) return { testMatch };
  if (ALONE_TIERS.includes(name))
    return fileSet === 'alone' ? { testMatch } : { testMatch, testPathIgnorePatterns: NOTHING };
  if (!SERVER_TIERS.includes(name))
    return fileSet === 'parallel' ? { testMatch } : { testMatch, testPathIgnorePatterns: NOTHING };
  const alone = Object.keys(ALONE_FILES).filter((file) => file.startsWith(`test/${name}/`));
  if (fileSet === 'parallel') return { testMatch, testPathIgnorePatterns: alone.map((f) => `<rootDir>/${escape(f)}$`) };
  return alone.length
    ? { testMatch: alone.map((f) => `<rootDir>/${f}`) }
    : { testMatch, testPathIgnorePatterns: NOTHING };
}

const tier = (name, extra = {}) => ({
  displayName: name,
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  testEnvironment: 'node',
  ...extra,
  ...filesOfSet(name, extra.testMatch ?? [`<rootDir>/test/${name}/**/*.test.ts`]),
  setupFiles: [workerServers, ...(extra.setupFiles ?? [])],
});

// Tiers that run workers or activities: their WARN/ERROR lines print unless the test declared them expected
// (see the harness).
const workerLogs = {
  setupFiles: ['<rootDir>/test/harness/install-worker-logs.ts'],
  testEnvironment: '<rootDir>/test/harness/worker-log-environment.ts',
};

// Integration files about the booking on a server (not about the dev server itself or the tools around it),
// re-run by the prod tier against the production topology.
const ON_PROD_ENGINE = [
  ...['client', 'worker', 'approval', 'fleet-cap', 'privacy'].map(
    (name) => `<rootDir>/test/integration/${name}.test.ts`,
  ),
  // The standalone Web UI server, as operators run it, finds a booking.
  '<rootDir>/test/e2e/web-ui.test.ts',
];

/** The tiers this run selected with --selectProjects (every tier when none), as global-setup reads them. */
function selectedTiers() {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === '--selectProjects' || a.startsWith('--selectProjects='));
  if (i < 0) return ['unit', 'supplier', 'workflow', 'integration', 'replay', 'e2e', 'security', 'prod'];
  const names = argv[i].includes('=') ? [argv[i].split('=')[1]] : [];
  for (let j = i + 1; j < argv.length && !argv[j].startsWith('-'); j++) names.push(argv[j]);
  return names;
}

// Two files at a time: the tiers whose files need no Temporal server (the runs of `npm run test:quick`: their files
// share nothing, and most of their time is spent waiting on listeners and timers, not on the 2 cores), and the
// server tiers' files that pass whatever the machine's speed (TEST_FILES=parallel), each Jest worker with servers of
// its own (global-setup). One file at a time for the rest: the files test/harness/file-sets.js names with the reason
// (a control that must outrun a rate limit, a chaos run's deadlines, an update held until a worker starts late),
// the prod tier, whose files share one production cluster whose nodes its chaos files restart, and any run that
// mixes server tiers without choosing a set.
const twoAtATime = fileSet === 'parallel' || selectedTiers().every((t) => NO_TEMPORAL_SERVER.includes(t));

module.exports = {
  projects: [
    tier('unit'),
    tier('supplier', workerLogs),
    tier('workflow', workerLogs),
    tier('integration', workerLogs),
    tier('replay', workerLogs),
    tier('e2e', workerLogs),
    tier('security'),
    tier('prod', {
      ...workerLogs,
      testMatch: ['<rootDir>/test/prod/**/*.test.ts', ...ON_PROD_ENGINE],
      setupFiles: [...workerLogs.setupFiles, '<rootDir>/test/harness/use-prod-engine.ts'],
    }),
  ],
  globalSetup: '<rootDir>/test/harness/global-setup.ts',
  globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
  testTimeout: 120_000,
  testSequencer: '<rootDir>/test/harness/longest-first.js',
  maxWorkers: twoAtATime ? 2 : 1,
};
