/**
 * The deploy command's command line (src/deploy/main.ts): `--help` is a request, not an unknown option, and a
 * mistaken flag is named with where the list of flags is.
 */
import { asksForHelp, DEPLOY_USAGE, DeployError, parseDeployArgs } from '../../src/deploy/main';

const env = { WORKER_DEPLOYMENT_NAME: 'hotel-booking', WORKER_BUILD_ID: '1.0.0+abc1234' };

test.each([[['--help']], [['-h']], [['help']], [['rollout', '--help']]])('%p asks for the usage text', (argv) => {
  expect(asksForHelp(argv)).toBe(true);
});

test('the usage text names every step and flag the parser takes', () => {
  for (const word of ['status', 'gate', 'ramp', 'rollout', 'drain', 'rollback', '--deployment', '--task-queue']) {
    expect(DEPLOY_USAGE).toContain(word);
  }
  for (const flag of ['--build-id', '--percent', '--bundle', '--strict', '--wait', '--json', '--help']) {
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
