/**
 * The deploy command's command line (src/operators/deploy/command.ts): `--help` is a request, not an unknown option, and a
 * mistaken flag is named with where the list of flags is.
 */
import {
  asksForHelp,
  DEPLOY_USAGE,
  DeployError,
  parseDeployArgs,
  parseDuration,
  parseSteps,
} from '../../src/operators/deploy/command';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GateRefusedError } from '../../src/operators/deploy/command';
import { gateCodeSource } from '../../src/operators/deploy/gate-code';
import { rollbackTarget } from '../../src/operators/deploy/moves';

const env = { WORKER_DEPLOYMENT_NAME: 'hotel-booking', WORKER_BUILD_ID: '1.0.0+abc1234' };

test.each([[['--help']], [['-h']], [['help']], [['rollout', '--help']]])('%p asks for the usage text', (argv) => {
  expect(asksForHelp(argv)).toBe(true);
});

test('the usage text names every step and flag the parser takes', () => {
  for (const word of [
    'status',
    'gate',
    'ramp',
    'rollout',
    'drain',
    'rollback',
    'move',
    'settings',
    '--deployment',
    '--task-queue',
  ]) {
    expect(DEPLOY_USAGE).toContain(word);
  }
  for (const flag of [
    '--build-id',
    '--percent',
    '--bundle',
    '--strict',
    '--wait',
    '--grace',
    '--json',
    '--help',
    '--from',
    '--to',
    '--steps',
    '--pause',
    '--max-failures',
    '--max-stuck',
    '--stuck-after',
  ]) {
    expect(DEPLOY_USAGE).toContain(flag);
  }
});

test('an unknown flag is a DeployError naming it and pointing at --help', () => {
  expect(asksForHelp(['status', '--bogus'])).toBe(false);
  expect(() => parseDeployArgs(['status', '--bogus'], env)).toThrow(DeployError);
  expect(() => parseDeployArgs(['status', '--bogus'], env)).toThrow(/--bogus.*npm run deploy -- --help/);
});

test('a well-formed line still parses', () => {
  expect(parseDeployArgs(['ramp', '--percent', '25'], env)).toMatchObject({
    step: 'ramp',
    deploymentName: 'hotel-booking',
    buildId: '1.0.0+abc1234',
    percent: 25,
  });
});

test('rollback goes to the build that stopped being current when the current one became current, not to an aborted ramp', () => {
  const routing = {
    deploymentName: 'hotel-booking',
    current: 'b',
    builds: [
      { buildId: 'a', status: 'draining' as const, lastActiveMs: 1_000, deactivatedAt: '1.5' },
      { buildId: 'b', status: 'current' as const, currentSince: '1.5' },
      // Ramped after B became current, and the ramp was aborted: the latest lastDeactivationTime of all.
      { buildId: 'c', status: 'draining' as const, lastActiveMs: 9_000, deactivatedAt: '9.0' },
    ],
  };
  expect(rollbackTarget(routing)).toBe('a');
  expect(rollbackTarget(routing, 'c')).toBe('c');
  expect(() => rollbackTarget({ ...routing, builds: routing.builds.slice(1) })).toThrow(/a build that only ramped/);
});

test('--grace takes whole seconds', () => {
  expect(parseDeployArgs(['drain', '--build-id', 'a'], env).graceSeconds).toBe(180);
  expect(parseDeployArgs(['drain', '--build-id', 'a', '--grace', '0'], env).graceSeconds).toBe(0);
  expect(() => parseDeployArgs(['drain', '--build-id', 'a', '--grace', '1.5'], env)).toThrow(/^--grace: whole seconds/);
});

test("the gate replays this checkout's code only for this checkout's own build; any other build needs its bundle", () => {
  expect(gateCodeSource({}, '1.0.0+abc1234', '1.0.0+abc1234')).toBe('this-checkout');
  expect(() => gateCodeSource({}, '1.0.0+fffffff', '1.0.0+abc1234')).toThrow(
    /^build 1\.0\.0\+fffffff is not this checkout's code \(this checkout is build 1\.0\.0\+abc1234\).*--bundle/,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gate-code-'));
  const bundle = path.join(dir, 'bundle.js');
  writeFileSync(bundle, 'exports.importWorkflows = function importWorkflows() {}; globalThis.__TEMPORAL__ = {};');
  expect(gateCodeSource({ bundle }, '1.0.0+fffffff', '1.0.0+abc1234')).toEqual({ codePath: bundle });
});

test('a --bundle the gate cannot read, or that is no workflow bundle, is a refusal naming the flag and the file', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gate-code-'));
  const missing = path.join(dir, 'missing.js');
  expect(() => gateCodeSource({ bundle: missing }, 'b', 'a')).toThrow(GateRefusedError);
  expect(() => gateCodeSource({ bundle: missing }, 'b', 'a')).toThrow(`--bundle ${missing}: cannot read it (ENOENT)`);
  const other = path.join(dir, 'other.js');
  writeFileSync(other, 'console.log("not a bundle")');
  expect(() => gateCodeSource({ bundle: other }, 'b', 'a')).toThrow(`--bundle ${other}: not a workflow bundle`);
});

test('move needs two different builds', () => {
  expect(parseDeployArgs(['move', '--from', 'a', '--to', 'b'], env)).toMatchObject({
    step: 'move',
    from: 'a',
    to: 'b',
  });
  expect(() => parseDeployArgs(['move', '--from', 'a'], env)).toThrow(/^--from and --to/);
  expect(() => parseDeployArgs(['move', '--from', 'a', '--to', 'a'], env)).toThrow(/^--from and --to/);
  expect(() => parseDeployArgs(['move', '--from', 'a b', '--to', 'b'], env)).toThrow(/^--from: a build id/);
});

test('a progressive ramp takes rising steps and a pause, not --percent as well', () => {
  expect(parseDeployArgs(['ramp', '--steps', '5,25,50,100', '--pause', '5m'], env)).toMatchObject({
    steps: [5, 25, 50, 100],
    pauseSeconds: 300,
    maxFailures: 0,
    maxStuck: 0,
    stuckAfterSeconds: 60,
  });
  expect(parseSteps('10')).toEqual([10]);
  for (const bad of ['', '5,5', '50,25', '0,50', '5,101', '5,x', '2.5'])
    expect(() => parseSteps(bad)).toThrow(/^--steps/);
  expect(parseDuration('--pause', '90')).toBe(90);
  expect(parseDuration('--pause', '1h')).toBe(3600);
  for (const bad of ['1d', '-5s', '25h', '']) expect(() => parseDuration('--pause', bad)).toThrow(/^--pause/);
  expect(() => parseDeployArgs(['ramp', '--steps', '5,100'], env)).toThrow(/^--pause/);
  expect(() => parseDeployArgs(['ramp', '--steps', '5,100', '--pause', '1m', '--percent', '5'], env)).toThrow(
    /^--steps or --percent/,
  );
  expect(() => parseDeployArgs(['rollout', '--steps', '5,100', '--pause', '1m'], env)).toThrow(/^--steps: only a ramp/);
  expect(() => parseDeployArgs(['ramp', '--steps', '5', '--pause', '1m', '--max-stuck', '1.5'], env)).toThrow(
    /^--max-stuck/,
  );
});
