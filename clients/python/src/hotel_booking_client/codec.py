"""The orchestrator's payload encryption, for Python callers (format: docs/payload-encryption.md).

Every payload the workers store is AES-256-GCM encrypted with a key named in its metadata. A caller
that starts bookings must encrypt its input and decrypt the outcome with the same keys, read from the
same variables as the worker: PAYLOAD_ENCRYPTION_KEYS ("keyId:base64key,...") and
PAYLOAD_ENCRYPTION_KEY_ID (the key new payloads use; the last one listed by default).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import os
from typing import Dict, List, Mapping, Optional, Sequence

import temporalio.converter
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload

ENCRYPTED_ENCODING = b"binary/encrypted"
KEY_ID_METADATA = "encryption-key-id"
NONCE_BYTES = 12
KEY_BYTES = 32


class EncryptionConfigError(ValueError):
    """A variable is wrong; the message names it (and a key id), never key material."""


class UnknownEncryptionKeyError(KeyError):
    """A payload names a key this process does not have; the message names the key id only."""

    def __init__(self, key_id: str) -> None:
        super().__init__(key_id)
        self.key_id = key_id

    def __str__(self) -> str:
        # KeyError would print the bare id in quotes; say what is wrong and which variable to fix.
        return f'Payload encrypted with key "{self.key_id}", which is not configured (PAYLOAD_ENCRYPTION_KEYS)'


def parse_keys(text: str) -> Dict[str, bytes]:
    """`keyId:base64key,...` as {key id: 32-byte key}, in the order given."""
    keys: Dict[str, bytes] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        key_id, sep, encoded = entry.partition(":")
        if not sep or not key_id:
            raise EncryptionConfigError("PAYLOAD_ENCRYPTION_KEYS: each entry must be keyId:base64key")
        try:
            key = base64.b64decode(encoded)
        except (binascii.Error, ValueError):
            key = b""
        if len(key) != KEY_BYTES:
            raise EncryptionConfigError(f'PAYLOAD_ENCRYPTION_KEYS: key "{key_id}" must be 32 bytes (base64)')
        keys[key_id] = key
    return keys


class EncryptionCodec(temporalio.converter.PayloadCodec):
    """A PayloadCodec that reads and writes the orchestrator's encrypted payloads."""

    def __init__(self, keys: Mapping[str, bytes], active_key_id: str) -> None:
        if active_key_id not in keys:
            raise EncryptionConfigError(f'active key "{active_key_id}" is not among the keys given')
        short = [key_id for key_id, key in keys.items() if len(key) != KEY_BYTES]
        if short:
            raise EncryptionConfigError(f'key "{short[0]}" must be 32 bytes')
        self._keys = {key_id: AESGCM(key) for key_id, key in keys.items()}
        self._active_key_id = active_key_id

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None) -> Optional["EncryptionCodec"]:
        """The codec the environment describes, or None when PAYLOAD_ENCRYPTION_KEYS is unset (encryption off)."""
        env = os.environ if env is None else env
        text = env.get("PAYLOAD_ENCRYPTION_KEYS", "")
        active = env.get("PAYLOAD_ENCRYPTION_KEY_ID") or None
        if not text:
            if active:
                raise EncryptionConfigError("PAYLOAD_ENCRYPTION_KEY_ID: set, but PAYLOAD_ENCRYPTION_KEYS is not")
            return None
        keys = parse_keys(text)
        if not keys:
            raise EncryptionConfigError("PAYLOAD_ENCRYPTION_KEYS: no key given")
        active = active or list(keys)[-1]
        if active not in keys:
            raise EncryptionConfigError(f'PAYLOAD_ENCRYPTION_KEY_ID: "{active}" is not among PAYLOAD_ENCRYPTION_KEYS')
        return cls(keys, active)

    async def encode(self, payloads: Sequence[Payload]) -> List[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> List[Payload]:
        return [self.decrypt(p) for p in payloads]

    def encrypt(self, payload: Payload, nonce: Optional[bytes] = None) -> Payload:
        """One payload sealed with the active key (`nonce` only for test vectors: never reuse one)."""
        nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
        if len(nonce) != NONCE_BYTES:
            raise ValueError("the nonce must be 12 bytes")
        sealed = self._keys[self._active_key_id].encrypt(nonce, payload.SerializeToString(), None)
        return Payload(
            metadata={"encoding": ENCRYPTED_ENCODING, KEY_ID_METADATA: self._active_key_id.encode()},
            data=nonce + sealed,
        )

    def decrypt(self, payload: Payload) -> Payload:
        """One payload opened; a payload that is not encrypted passes through (written before encryption)."""
        if payload.metadata.get("encoding") != ENCRYPTED_ENCODING:
            return payload
        key_id = payload.metadata.get(KEY_ID_METADATA, b"").decode(errors="replace")
        aead = self._keys.get(key_id)
        if aead is None:
            raise UnknownEncryptionKeyError(key_id)
        data = payload.data
        return Payload.FromString(aead.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], None))


def data_converter_from_env(env: Optional[Mapping[str, str]] = None) -> temporalio.converter.DataConverter:
    """The SDK's default data converter, with the encryption codec when the environment turns it on."""
    codec = EncryptionCodec.from_env(env)
    default = temporalio.converter.default()
    return dataclasses.replace(default, payload_codec=codec) if codec else default
