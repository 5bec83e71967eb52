/** A child process run to its end with only the variables given, its output collected: the callers other tests play. */
import { spawn } from 'node:child_process';

export interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command args` in `cwd` with exactly `env` (a caller's own environment, not the test's), killed after
 * `timeoutMs`. Resolves with how it ended, whatever its exit code; rejects only when it cannot start.
 */
export function runChild(
  command: string,
  args: readonly string[],
  { cwd, env, timeoutMs }: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<ChildRun> {
  return new Promise<ChildRun>((resolve, reject) => {
    const child = spawn(command, args, { cwd, env });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
