/**
 * Which build a worker is (src/runtime/config/build.ts, WORKER_DEPLOYMENT_NAME / WORKER_BUILD_ID) and how each workflow
 * type declares its versioning behaviour (src/workflows/versioning.ts): as a getter, so an unversioned worker sends
 * none (the server refuses a behaviour from one, which stopped every workflow there before).
 */
import { loadConfig } from '../../src/runtime/config/index';
import { buildCommit, defaultBuildId, packageVersion, parseDeploymentVersion } from '../../src/runtime/config/build';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as workflows from '../../src/workflows';
import { workerDeploymentOptions } from '../../src/worker';
import { pinnedBuildOf } from '../../src/operators/deploy/gate';

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

/** A tree laid out as the code is (`<root>/runtime/config/build.js` beside its other modules), with `files` in it. */
function codeTree(files: Record<string, string>): { root: string; from: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'build-id-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  mkdirSync(path.join(root, 'runtime/config'), { recursive: true });
  return { root, from: path.join(root, 'runtime/config') };
}

test('an image with no commit known is named by its code: two images of different code never share a build id', () => {
  const a = codeTree({ 'workflows/booking.js': 'exports.v = 1;' });
  const b = codeTree({ 'workflows/booking.js': 'exports.v = 2;' });
  const again = codeTree({ 'workflows/booking.js': 'exports.v = 1;' });
  try {
    const [idA, idB, idAgain] = [a, b, again].map((t) => defaultBuildId({}, t.from));
    expect(idA).toMatch(/^\d+\.\d+\.\d+\+code-[0-9a-f]{12}$/);
    expect(idB).not.toBe(idA);
    expect(idAgain).toBe(idA);
  } finally {
    for (const t of [a, b, again]) rmSync(t.root, { recursive: true, force: true });
  }
});

test('a change under src/, an untracked file included, marks the build dirty, from wherever the module runs', () => {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'build-dirty-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo });
  try {
    mkdirSync(path.join(repo, 'src/runtime/config'), { recursive: true });
    writeFileSync(path.join(repo, 'src/runtime/config/build.ts'), '// the module');
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'first');
    const from = path.join(repo, 'src/runtime/config');
    expect(buildCommit({}, from)).toMatch(/^[0-9a-f]{7}$/);
    writeFileSync(path.join(repo, 'src/new-module.ts'), '// not added yet');
    expect(buildCommit({}, from)).toMatch(/^[0-9a-f]{7}\.dirty$/);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
