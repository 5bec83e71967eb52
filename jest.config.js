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
 * Servers are started once per run by test/harness/global-setup.ts and shared by the files.
 */
// Every tier runs in a time zone that is not UTC, with daylight saving, as a worker may: code that reads a
// timestamp in the machine's zone (Date.parse of a value without an offset) then fails here instead of moving a
// check-in by hours in production. Set before Jest starts anything, so the servers and children it starts
// inherit it; test/unit/timezone.test.ts fails if it is gone.
process.env.TZ = 'America/New_York';

const tier = (name, extra = {}) => ({
  displayName: name,
  testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }] },
  testEnvironment: 'node',
  ...extra,
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
  // One test file at a time: time skipping is global to the shared test server, and the machine has 2 cores.
  maxWorkers: 1,
};
