/**
 * `npm run codec-server`: the codec server on its own (docker-compose runs it beside the Web UI).
 * Configured by CODEC_SERVER_HOST, CODEC_SERVER_PORT, CODEC_ALLOWED_ORIGIN, CODEC_SERVER_TOKEN,
 * CODEC_SERVER_ALLOW_ANONYMOUS and the workers' PAYLOAD_ENCRYPTION_KEYS / PAYLOAD_ENCRYPTION_KEY_ID. Beyond
 * loopback it will not start without a token unless CODEC_SERVER_ALLOW_ANONYMOUS=on. The token and the keys may
 * come from files instead (CODEC_SERVER_TOKEN_FILE, PAYLOAD_ENCRYPTION_KEYS_FILE: compose secrets).
 */
import { z } from 'zod';
import { EncryptionEnv, encryptionFromEnv } from '../../api/codec/config';
import { createEncryptionCodec } from '../../api/codec/encryption';
import { withSecretFiles } from '../../runtime/config/secret-files';
import { startCodecServer } from './server';

/** The settings that may be given as a file (`<name>_FILE`). */
export const CODEC_SERVER_SECRETS = ['CODEC_SERVER_TOKEN', 'PAYLOAD_ENCRYPTION_KEYS'] as const;

export const CodecServerEnv = EncryptionEnv.extend({
  /** Interface to listen on (0.0.0.0 in a container). */
  CODEC_SERVER_HOST: z.string().default('127.0.0.1'),
  CODEC_SERVER_PORT: z.coerce.number().int().nonnegative().default(8235),
  /** The Web UI's origin as the browser sees it: the only origin allowed to call. */
  CODEC_ALLOWED_ORIGIN: z.url().default('http://localhost:8233'),
  /**
   * When set, callers must send `Authorization: Bearer <token>`, or (the Web UI) the session cookie a browser gets
   * by typing it into `/login`. Required beyond loopback (see below); at least 128 bits (`openssl rand -hex 32`).
   */
  CODEC_SERVER_TOKEN: z.preprocess((v) => (v === '' ? undefined : v), z.string().min(1).optional()),
  /**
   * on: listen beyond loopback without a token (a WARN line at start), for a codec server behind something that
   * authenticates every caller (SSO in front of the UI and the codec server). Off by default.
   */
  CODEC_SERVER_ALLOW_ANONYMOUS: z.enum(['on', 'off']).default('off'),
});

async function main(): Promise<void> {
  const { env, issues: fileIssues } = withSecretFiles(process.env, CODEC_SERVER_SECRETS);
  const parsed = CodecServerEnv.safeParse(env);
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  issues.unshift(...fileIssues);
  const { encryption, issues: keyIssues } = parsed.success
    ? encryptionFromEnv(parsed.data)
    : { encryption: undefined, issues: [] };
  issues.push(...keyIssues);
  if (parsed.success && !encryption) issues.push('PAYLOAD_ENCRYPTION_KEYS: required by the codec server');
  if (!parsed.success || !encryption || issues.length > 0)
    throw new Error(`Invalid configuration:\n  ${issues.join('\n  ')}`);
  const e = parsed.data;
  const server = await startCodecServer({
    codec: createEncryptionCodec(encryption),
    host: e.CODEC_SERVER_HOST,
    port: e.CODEC_SERVER_PORT,
    allowedOrigin: e.CODEC_ALLOWED_ORIGIN,
    token: e.CODEC_SERVER_TOKEN,
    allowAnonymous: e.CODEC_SERVER_ALLOW_ANONYMOUS === 'on',
  });
  // Handlers first: whoever waits for the line below may stop it at once.
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  console.log(
    `Codec server on ${server.url} for ${e.CODEC_ALLOWED_ORIGIN}` +
      (e.CODEC_SERVER_TOKEN
        ? ' (token required: the CLI sends it, a browser for the Web UI logs in once at /login on this server)'
        : ''),
  );
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
