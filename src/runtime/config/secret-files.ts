/**
 * Secrets from files, the `*_FILE` convention of container images (compose `secrets:`, Kubernetes secret volumes):
 * `X_FILE=/run/secrets/x` sets `X` to the file's content, so a secret never sits in a compose file, an image or
 * `docker inspect`. For the codec server and the operator console; the file's one trailing newline is dropped.
 */
import { readFileSync } from 'node:fs';

/**
 * `env` with each of `names` read from its `_FILE` where one is given; problems (both given, a file that cannot
 * be read, an empty file) as `VARIABLE: message` lines. Nothing is read for a name whose `_FILE` is unset.
 */
export function withSecretFiles(
  env: Record<string, string | undefined>,
  names: readonly string[],
): { env: Record<string, string | undefined>; issues: string[] } {
  const out = { ...env };
  const issues: string[] = [];
  for (const name of names) {
    const file = env[`${name}_FILE`];
    if (!file) continue;
    if (env[name]) {
      issues.push(`${name}_FILE: ${name} is set too; give one of them`);
      continue;
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (err) {
      issues.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      continue;
    }
    if (!text) issues.push(`${name}_FILE: ${file} is empty`);
    else out[name] = text;
  }
  return { env: out, issues };
}
