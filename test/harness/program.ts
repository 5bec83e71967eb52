/**
 * The programs the cross-language tests play (a Python or Go caller, the `temporal` CLI): one run to its end with
 * the variables given, its output collected, and a failure that carries its stderr.
 */
import { spawn } from 'node:child_process';

export interface ProgramRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ProgramOptions {
  /** Exactly the environment the program gets (a caller's own, not the test's). */
  env: Record<string, string>;
  cwd: string;
  /** Written to its standard input, which is then closed. */
  stdin?: string;
  /** Killed (SIGKILL) after this long; 90 s by default. */
  timeoutMs?: number;
}

/** Runs `command args` to its end; resolves with how it ended, whatever its exit code, rejects only if it cannot start. */
export function runProgram(command: string, args: readonly string[], options: ProgramOptions): Promise<ProgramRun> {
  const { env, cwd, stdin = '', timeoutMs = 90_000 } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

/** Fails, with the program's stderr, when it did not exit with `code`. */
export function expectExit(run: ProgramRun, code: number, name: string): void {
  if (run.code !== code) throw new Error(`${name} exited ${run.code ?? run.signal}, not ${code}:\n${run.stderr}`);
}

/** This process's environment without the encryption variables: each test says which keys a program has. */
export function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !entry[0].startsWith('PAYLOAD_ENCRYPTION_'),
    ),
  );
}

/** Only PATH from this process: nothing inherited that could change a program's keys. */
export const pathOnly = (): Record<string, string> => ({ PATH: process.env.PATH ?? '' });
