/**
 * The TypeScript client as another service installs it: `npm pack` of clients/typescript (compiled from src/ by
 * its prepack), installed into a project outside the repository with its dependencies from the npm registry (the
 * npm cache keeps it quick), the example of clients/typescript/README.md compiled against the package's types with
 * the repository's tsc and run against the dev server and an encrypting worker.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bookingWorkflowId } from '../../src/api/contract/index';
import { ENCRYPTED_ENCODING } from '../../src/api/codec/encryption';
import { connectDevServer } from '../harness/temporal';
import { createBookingRig, type BookingRig } from '../harness/booking';
import { runProgram } from '../harness/program';
import { TEST_ENCRYPTION, testDataConverter } from '../fixtures/encryption';

const ROOT = path.resolve(__dirname, '../..');
const PACKAGE_DIR = path.join(ROOT, 'clients/typescript');
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');
const run = promisify(execFile);

const rootPackage = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const clientPackage = JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8'));

/**
 * The variables of this process less npm's own (`npm_config_*`, set when jest runs under `npm test`), so the npm
 * commands below are configured as a developer's would be, not by the outer npm run.
 */
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

let env: TestWorkflowEnvironment;
let rig: BookingRig;
/** The scratch project outside the repository: the tarball, the package installed, the example compiled. */
let scratch: string;
let tarball: string;

beforeAll(async () => {
  env = await connectDevServer();
  rig = await createBookingRig(env, 'client-package', { dataConverter: testDataConverter() });
  scratch = mkdtempSync(path.join(os.tmpdir(), 'client-package-'));
  await run('npm', ['pack', '--pack-destination', scratch], { cwd: PACKAGE_DIR, env: npmEnv, timeout: 180_000 });
  tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'))!;
  writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'partner-service', private: true }));
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      `./${tarball}`,
      // A TypeScript service has Node's types; the same release the repository compiles with.
      `@types/node@${rootPackage.devDependencies['@types/node']}`,
    ],
    { cwd: scratch, env: npmEnv, timeout: 180_000 },
  );
}, 420_000);

afterAll(async () => {
  await rig?.close();
  await env?.teardown();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const installed = (name: string) => path.join(scratch, 'node_modules', name);

describe('the tarball', () => {
  test('holds the client, the contract and the codec, and nothing of the worker', async () => {
    expect(tarball).toBe(`hotel-booking-client-${clientPackage.version}.tgz`);
    const { stdout } = await run('tar', ['-tzf', path.join(scratch, tarball)]);
    const files = stdout.trim().split('\n');
    const javascript = files.filter((f) => f.endsWith('.js')).sort();
    expect(javascript).toEqual([
      'package/lib/client/index.js',
      'package/lib/codec/config.js',
      'package/lib/codec/encryption.js',
      'package/lib/codec/failure-converter.js',
      'package/lib/contract/booking.js',
      'package/lib/contract/definitions.js',
      'package/lib/contract/index.js',
      'package/lib/contract/messages.js',
      'package/lib/contract/order.js',
      'package/lib/contract/request.js',
      'package/lib/contract/schemas.js',
      'package/lib/contract/sweep.js',
      'package/lib/values/index.js',
      'package/lib/values/issues.js',
    ]);
    // Beside lib/, the two files a reader needs; the build's own tsconfig.json stays out.
    expect(files.filter((f) => !f.startsWith('package/lib/')).sort()).toEqual([
      'package/README.md',
      'package/package.json',
    ]);
  });

  test('its JavaScript requires only its dependencies, each pinned to the version the orchestrator runs', () => {
    const dependencies = clientPackage.dependencies as Record<string, string>;
    for (const [name, version] of Object.entries(dependencies))
      expect({ name, version }).toEqual({ name, version: rootPackage.dependencies[name] });
    const required = new Set<string>();
    const lib = path.join(installed('@hotel-booking/client'), 'lib');
    for (const file of readdirSync(lib, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js')))
      for (const [, specifier] of readFileSync(path.join(lib, file), 'utf8').matchAll(/\brequire\("([^".][^"]*)"\)/g))
        required.add(
          specifier!
            .split('/')
            .slice(0, specifier!.startsWith('@') ? 2 : 1)
            .join('/'),
        );
    const packages = [...required].filter((name) => !name.startsWith('node:'));
    expect(packages.sort()).toEqual(Object.keys(dependencies).sort());
  });

  test('installs none of the worker’s dependencies', () => {
    const top = readdirSync(path.join(scratch, 'node_modules'));
    const scoped = (scope: string) =>
      top.includes(scope) ? readdirSync(installed(scope)).map((name) => `${scope}/${name}`) : [];
    const everything = [...top, ...scoped('@temporalio'), ...scoped('@opentelemetry')];
    expect(scoped('@temporalio').sort()).toEqual([
      '@temporalio/client',
      '@temporalio/common',
      '@temporalio/envconfig',
      '@temporalio/proto',
      '@temporalio/workflow',
    ]);
    for (const workerOnly of ['@temporalio/worker', '@temporalio/core-bridge', 'undici', '@opentelemetry/api'])
      expect(everything).not.toContain(workerOnly);
  });
});

describe('the README’s example, in a project of its own', () => {
  const example = /```ts\n([\s\S]*?)```/.exec(readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8'))![1]!;
  /** A strict project as `tsc --init` makes one; module resolution node16 (the package's exports) or node10. */
  const tsconfig = (resolution: 'node16' | 'node10', skipLibCheck = true) => ({
    compilerOptions: {
      target: 'ES2022',
      module: resolution === 'node16' ? 'node16' : 'commonjs',
      moduleResolution: resolution,
      esModuleInterop: true,
      strict: true,
      skipLibCheck,
      types: ['node'],
      outDir: 'out',
    },
    files: ['book.ts', 'codec.ts'],
  });
  /** tsc's error lines (empty when it compiled). */
  async function compile(config: object, ...args: string[]): Promise<string[]> {
    writeFileSync(path.join(scratch, 'tsconfig.json'), JSON.stringify(config));
    const done = await run(TSC, ['-p', 'tsconfig.json', ...args], { cwd: scratch }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    return done.split('\n').filter((line) => /error TS\d+/.test(line));
  }

  beforeAll(() => {
    writeFileSync(path.join(scratch, 'book.ts'), example);
    // The codec's subpaths, for a service that builds its own Client.
    writeFileSync(
      path.join(scratch, 'codec.ts'),
      [
        "import { dataConverterFor, EncryptionEnv, encryptionFromEnv } from '@hotel-booking/client/codec/config';",
        "import { createEncryptionCodec, ENCRYPTED_ENCODING } from '@hotel-booking/client/codec/encryption';",
        'const { encryption } = encryptionFromEnv(EncryptionEnv.parse(process.env));',
        'export const converter = dataConverterFor(encryption);',
        'export const codec = encryption ? createEncryptionCodec(encryption) : undefined;',
        'export const encoding: string = ENCRYPTED_ENCODING;',
      ].join('\n'),
    );
  });

  test('compiles against the package’s types, with either module resolution', async () => {
    expect(await compile(tsconfig('node10'), '--noEmit')).toEqual([]);
    expect(await compile(tsconfig('node16'))).toEqual([]);
  }, 120_000);

  test('the package’s own declarations check and resolve (only other packages’ fail a full lib check)', async () => {
    // Without skipLibCheck, @temporalio's own declarations fail (they import `ms` and `source-map`, whose types
    // no package installs); the package's must not.
    const errors = await compile(tsconfig('node16', false), '--noEmit');
    expect(errors.filter((line) => line.includes('@hotel-booking/'))).toEqual([]);
  }, 120_000);

  test('books on the dev server with the encrypting worker: confirmed, one order, its input encrypted', async () => {
    const keys = [...TEST_ENCRYPTION.keys].map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');
    // Only the variables a caller sets: the connection, the queue and the workers' keys (the active one last).
    const { code, stdout, stderr } = await runProgram(process.execPath, ['out/book.js'], {
      cwd: scratch,
      env: {
        PATH: process.env.PATH ?? '',
        TEMPORAL_ADDRESS: env.address,
        BOOKING_TASK_QUEUE: rig.taskQueue,
        PAYLOAD_ENCRYPTION_KEYS: keys,
      },
      timeoutMs: 60_000,
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const outcome = JSON.parse(stdout.trim().split('\n').pop()!);
    expect(outcome).toMatchObject({ kind: 'confirmed', order: { status: 2 } });
    const ref = outcome.order.customerReferenceNo as string;
    expect(rig.sandbox.orders().filter((o) => o.customerReferenceNo === ref)).toHaveLength(1);
    // The package's codec sealed what the caller sent: the history holds the input encrypted.
    const history = await env.client.workflow.getHandle(bookingWorkflowId(ref)).fetchHistory();
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
  }, 90_000);
});
