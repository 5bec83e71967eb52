/**
 * Encrypts every payload that Temporal stores (workflow inputs, activity inputs and results, query and
 * update answers), so guests' names, e-mails and phones never sit in workflow history in clear.
 *
 * AES-256-GCM, one random 96-bit nonce per payload. The key id travels in the payload's metadata so keys
 * can rotate: new payloads use the active key, old ones still decrypt with the key they name.
 * Search attributes are not payloads of this kind and are never encrypted: keep personal data out of them.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * `keyId:base64key,keyId2:base64key` (each key 32 bytes). Keeps the order given; the active key is
 * named separately, so adding a new key and switching to it are two steps.
 */
export const EncryptionKeys = z
  .string()
  .min(1)
  .transform((text, ctx) => {
    const keys = new Map<string, Buffer>();
    for (const entry of text
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean)) {
      const at = entry.indexOf(':');
      const id = at > 0 ? entry.slice(0, at) : '';
      const key = Buffer.from(at > 0 ? entry.slice(at + 1) : '', 'base64');
      // The message names the key id, never key material.
      if (!id) ctx.addIssue({ code: 'custom', message: 'each entry must be keyId:base64key' });
      else if (key.length !== 32) ctx.addIssue({ code: 'custom', message: `key "${id}" must be 32 bytes (base64)` });
      else keys.set(id, key);
    }
    return keys;
  });

export interface EncryptionCodecOptions {
  keys: ReadonlyMap<string, Buffer>;
  /** The key new payloads are encrypted with. */
  activeKeyId: string;
}

/** Raised when a payload names a key this process does not have. Names the key id only. */
export class UnknownEncryptionKeyError extends Error {
  override readonly name = 'UnknownEncryptionKeyError';
  constructor(readonly keyId: string) {
    super(`Payload encrypted with key "${keyId}", which is not configured (PAYLOAD_ENCRYPTION_KEYS)`);
  }
}

export function createEncryptionCodec({ keys, activeKeyId }: EncryptionCodecOptions): PayloadCodec {
  const active = keys.get(activeKeyId);
  if (!active) throw new UnknownEncryptionKeyError(activeKeyId);
  return {
    async encode(payloads: Payload[]): Promise<Payload[]> {
      return payloads.map((payload) => {
        const plain = temporal.api.common.v1.Payload.encode(payload).finish();
        const nonce = randomBytes(NONCE_BYTES);
        const cipher = createCipheriv('aes-256-gcm', active, nonce);
        const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
        return {
          metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: encoder.encode(activeKeyId) },
          data: sealed,
        };
      });
    },
    async decode(payloads: Payload[]): Promise<Payload[]> {
      return payloads.map((payload) => {
        const encoding = payload.metadata?.encoding;
        // Payloads written before encryption was turned on (or by a caller without it) pass through.
        if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
        const keyIdBytes = payload.metadata?.[KEY_ID_METADATA];
        const keyId = keyIdBytes ? decoder.decode(keyIdBytes) : '';
        const key = keys.get(keyId);
        if (!key) throw new UnknownEncryptionKeyError(keyId);
        const data = Buffer.from(payload.data ?? new Uint8Array());
        const nonce = data.subarray(0, NONCE_BYTES);
        const tag = data.subarray(data.length - TAG_BYTES);
        const decipher = createDecipheriv('aes-256-gcm', key, nonce);
        decipher.setAuthTag(tag);
        const plain = Buffer.concat([
          decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return temporal.api.common.v1.Payload.decode(plain);
      });
    },
  };
}

/** A fresh random key, base64, for `PAYLOAD_ENCRYPTION_KEYS`. */
export function newEncryptionKey(): string {
  return randomBytes(32).toString('base64');
}
