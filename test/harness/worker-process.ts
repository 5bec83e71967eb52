/**
 * The booking worker as `npm run worker` starts it: a process of its own, configured by environment variables only,
 * against a Temporal server and a supplier the test started.
 */
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { workflowBundle } from './temporal';
import { SANDBOX_PROFILE } from '../../dev/sandbox/server';

const ROOT = path.resolve(__dirname, '../..');

export interface WorkerProcess {
  child: ChildProcess;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** Resolves once the worker has printed `ready` (the last line of its start); rejects if it exits first. */
export async function startWorkerProcess(
  { temporalAddress, supplierUrl }: { temporalAddress: string; supplierUrl: string },
  extra: Record<string, string>,
  ready: string,
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/worker.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      TEMPORAL_ADDRESS: temporalAddress,
      SUPPLIER_APP_KEY: 'sandbox-app',
      SUPPLIER_APP_SECRET: 'sandbox-secret',
      SUPPLIER_BASE_URL: supplierUrl,
      SUPPLIER_PROFILE: JSON.stringify(SANDBOX_PROFILE),
      WORKER_WORKFLOW_BUNDLE: workflowBundle().codePath,
      ...extra,
    },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes(ready)) resolve();
    });
    void exited.then((code) => reject(new Error(`worker exited with ${code} before polling:\n${stdout}\n${stderr}`)));
  });
  return { child, stdout: () => stdout, exited };
}
