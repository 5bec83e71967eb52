/**
 * The development stack's payload-encryption key, for the operators' commands (`npm run book`, `npm run deploy`)
 * run beside `npm start`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm start` encrypts payloads with a key it keeps in its data folder; use it too unless the
 * environment says otherwise (PAYLOAD_ENCRYPTION_KEYS set, or set empty to turn encryption off).
 */
export function withStackKeys(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = path.join(env.STACK_DATA_DIR ?? path.resolve(__dirname, '../../../.data'), 'payload-encryption-keys');
  if (env.PAYLOAD_ENCRYPTION_KEYS !== undefined || !existsSync(file)) return env;
  return { ...env, PAYLOAD_ENCRYPTION_KEYS: readFileSync(file, 'utf8').trim() };
}
