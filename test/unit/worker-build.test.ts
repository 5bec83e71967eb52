/**
 * Which build a worker is (src/deploy/version.ts, WORKER_DEPLOYMENT_NAME / WORKER_BUILD_ID) and how each workflow
 * type declares its versioning behaviour (src/workflows/versioning.ts): as a getter, so an unversioned worker sends
 * none (the server refuses a behaviour from one, which stopped every workflow there before).
 */
import { loadConfig } from '../../src/config';
import { buildCommit, defaultBuildId, packageVersion, parseDeploymentVersion } from '../../src/deploy/version';
import * as workflows from '../../src/workflows';
import { workerDeploymentOptions } from '../../src/worker';
import { pinnedBuildOf } from '../../src/deploy/gate';

const base = { SUPPLIER_APP_KEY: 'k', SUPPLIER_APP_SECRET: 's3cret-value' };

test('a worker without WORKER_DEPLOYMENT_NAME is unversioned; with it, a build of that deployment', () => {
  expect(loadConfig(base).worker.deployment).toBeUndefined();
  expect(workerDeploymentOptions(undefined)).toEqual({});
  const config = loadConfig({ ...base, WORKER_DEPLOYMENT_NAME: 'hotel-booking', WORKER_BUILD_ID: '1.2.0+abc1234' });
  expect(config.worker.deployment).toEqual({ deploymentName: 'hotel-booking', buildId: '1.2.0+abc1234' });
  expect(workerDeploymentOptions(config.worker.deployment)).toEqual({
    workerDeploymentOptions: {
      version: { deploymentName: 'hotel-booking', buildId: '1.2.0+abc1234' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    },
  });
});

test('the build id defaults to the package version and the commit the image was built from', () => {
  const config = loadConfig({ ...base, WORKER_DEPLOYMENT_NAME: 'fleet', BUILD_COMMIT: '0123456789abcdef' });
  expect(config.worker.deployment?.buildId).toBe(`${packageVersion()}+0123456789ab`);
  expect(defaultBuildId({ BUILD_COMMIT: 'f00d' })).toBe(`${packageVersion()}+f00d`);
  // Outside a git tree and without BUILD_COMMIT: the version alone.
  expect(buildCommit({}, '/')).toBeUndefined();
});

test('bad deployment settings are refused, naming the variable', () => {
  expect(() => loadConfig({ ...base, WORKER_BUILD_ID: '1.0.0' })).toThrow(
    /WORKER_BUILD_ID: a build id needs WORKER_DEPLOYMENT_NAME/,
  );
  expect(() => loadConfig({ ...base, WORKER_DEPLOYMENT_NAME: 'a.b' })).toThrow(/WORKER_DEPLOYMENT_NAME/);
  expect(() => loadConfig({ ...base, WORKER_DEPLOYMENT_NAME: 'a', WORKER_BUILD_ID: 'one build' })).toThrow(
    /WORKER_BUILD_ID/,
  );
});

test('every workflow type declares its behaviour, as a getter read when a run starts (never a fixed value)', () => {
  const declared = Object.entries(workflows).map(([name, fn]) => [
    name,
    typeof (fn as { workflowDefinitionOptions?: unknown }).workflowDefinitionOptions,
  ]);
  expect(declared).toEqual(Object.keys(workflows).map((name) => [name, 'function']));
});

test("a run's pinned build is read from its own history, the last task that declared PINNED (visibility may lag)", () => {
  const completed = (behavior: number, buildId?: string) => ({
    workflowTaskCompletedEventAttributes: {
      versioningBehavior: behavior,
      ...(buildId ? { deploymentVersion: { deploymentName: 'fleet', buildId } } : {}),
    },
  });
  const started = { workflowExecutionStartedEventAttributes: {} };
  expect(pinnedBuildOf({ events: [started] })).toBeUndefined();
  expect(pinnedBuildOf({ events: [started, completed(0)] })).toBeUndefined();
  expect(pinnedBuildOf({ events: [started, completed(1, 'a'), completed(1, 'a')] })).toEqual({
    deploymentName: 'fleet',
    buildId: 'a',
  });
});

test.each([
  ['hotel-booking:1.0.0+abc1234', { deploymentName: 'hotel-booking', buildId: '1.0.0+abc1234' }],
  // A build id may hold a colon; a deployment name may not, so the first one splits.
  ['hotel-booking:build:7', { deploymentName: 'hotel-booking', buildId: 'build:7' }],
  ['', undefined],
  ['no-colon', undefined],
  [':1.0.0', undefined],
  ['hotel-booking:', undefined],
  [undefined, undefined],
])('the server-written version %p reads as %p', (version, expected) => {
  expect(parseDeploymentVersion(version)).toEqual(expected);
});
