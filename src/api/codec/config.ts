/**
 * Payload encryption settings from the environment, shared by the worker's config and the client helper
 * (both sides of a booking must use the same keys, or neither can read the other's payloads).
 */
import type { DataConverter } from '@temporalio/common';
import { z } from 'zod';
import { createEncryptionCodec, EncryptionKeys, type EncryptionCodecOptions } from './encryption';

const unsetIfEmpty = (v: unknown) => (v === '' ? undefined : v);

export const EncryptionEnv = z.object({
  /**
   * Payload encryption keys, `keyId:base64key,…` (32-byte keys). When set, every payload in workflow
   * history (guests' personal data included) is AES-256-GCM encrypted; keep old keys listed to read old payloads.
   */
  PAYLOAD_ENCRYPTION_KEYS: z.preprocess(unsetIfEmpty, EncryptionKeys.optional()),
  /** The key new payloads are encrypted with; defaults to the last key listed. */
  PAYLOAD_ENCRYPTION_KEY_ID: z.preprocess(unsetIfEmpty, z.string().min(1).optional()),
});

/** The encryption settings, or undefined when off; problems are returned as `VARIABLE: message` lines. */
export function encryptionFromEnv(e: z.infer<typeof EncryptionEnv>): {
  encryption?: EncryptionCodecOptions;
  issues: string[];
} {
  if (!e.PAYLOAD_ENCRYPTION_KEYS) {
    return {
      issues: e.PAYLOAD_ENCRYPTION_KEY_ID ? ['PAYLOAD_ENCRYPTION_KEY_ID: set, but PAYLOAD_ENCRYPTION_KEYS is not'] : [],
    };
  }
  const activeKeyId = e.PAYLOAD_ENCRYPTION_KEY_ID ?? [...e.PAYLOAD_ENCRYPTION_KEYS.keys()].pop()!;
  if (!e.PAYLOAD_ENCRYPTION_KEYS.has(activeKeyId)) {
    return { issues: [`PAYLOAD_ENCRYPTION_KEY_ID: "${activeKeyId}" is not among PAYLOAD_ENCRYPTION_KEYS`] };
  }
  return { encryption: { keys: e.PAYLOAD_ENCRYPTION_KEYS, activeKeyId }, issues: [] };
}

/**
 * The data converter for these settings: the encryption codec, or the SDK's default when off. With
 * encryption, failures' messages and stack traces are encrypted too (./failure-converter): a supplier's
 * error text may echo a guest's name, and failures are not payloads unless made so.
 */
export function dataConverterFor(encryption: EncryptionCodecOptions | undefined): DataConverter | undefined {
  return encryption
    ? {
        payloadCodecs: [createEncryptionCodec(encryption)],
        failureConverterPath: require.resolve('./failure-converter'),
      }
    : undefined;
}
