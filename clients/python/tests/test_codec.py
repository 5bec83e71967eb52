"""The Python codec against the format's test vector and its rules (docs/payload-encryption.md)."""

import asyncio
import base64
import json
import os
import unittest
from pathlib import Path

from temporalio.api.common.v1 import Payload

from hotel_booking_client import EncryptionCodec, EncryptionConfigError, UnknownEncryptionKeyError

VECTOR_PATH = Path(os.environ.get("PAYLOAD_ENCRYPTION_VECTOR", Path(__file__).parents[2] / "testdata" / "payload-encryption-vector.json"))
VECTOR = json.loads(VECTOR_PATH.read_text())
KEY = base64.b64decode(VECTOR["keyBase64"])
INNER = Payload(
    metadata={k: v.encode() for k, v in VECTOR["inner"]["metadata"].items()},
    data=VECTOR["inner"]["data"].encode(),
)
OUTER = Payload(
    metadata={k: v.encode() for k, v in VECTOR["outer"]["metadata"].items()},
    data=bytes.fromhex(VECTOR["outer"]["dataHex"]),
)


def codec() -> EncryptionCodec:
    return EncryptionCodec({"old": bytes(32), VECTOR["keyId"]: KEY}, VECTOR["keyId"])


class TestVector(unittest.TestCase):
    def test_encrypts_the_vector_exactly_with_its_nonce(self):
        sealed = codec().encrypt(INNER, nonce=bytes.fromhex(VECTOR["nonceHex"]))
        self.assertEqual(sealed.SerializeToString(deterministic=True), OUTER.SerializeToString(deterministic=True))

    def test_decrypts_the_vector(self):
        self.assertEqual(codec().decrypt(OUTER), INNER)
        self.assertEqual(INNER.SerializeToString().hex(), VECTOR["innerProtobufHex"])


class TestCodec(unittest.TestCase):
    def test_round_trip_with_a_fresh_nonce_each_time(self):
        c = codec()
        a, b = asyncio.run(c.encode([INNER, INNER]))
        self.assertNotEqual(a.data, b.data)
        self.assertEqual(asyncio.run(c.decode([a, b])), [INNER, INNER])

    def test_unencrypted_payloads_pass_through(self):
        self.assertEqual(codec().decrypt(INNER), INNER)

    def test_old_keys_still_decrypt_and_unknown_ones_are_named(self):
        old = EncryptionCodec({"old": bytes(32)}, "old").encrypt(INNER)
        self.assertEqual(codec().decrypt(old), INNER)
        with self.assertRaises(UnknownEncryptionKeyError) as caught:
            EncryptionCodec({"other": KEY}, "other").decrypt(OUTER)
        self.assertIn(VECTOR["keyId"], str(caught.exception))


class TestFromEnv(unittest.TestCase):
    def test_off_without_keys(self):
        self.assertIsNone(EncryptionCodec.from_env({}))

    def test_the_last_key_listed_is_active_unless_named(self):
        keys = f"old:{base64.b64encode(bytes(32)).decode()}, {VECTOR['keyId']}:{VECTOR['keyBase64']}"
        self.assertEqual(EncryptionCodec.from_env({"PAYLOAD_ENCRYPTION_KEYS": keys})._active_key_id, VECTOR["keyId"])
        named = EncryptionCodec.from_env({"PAYLOAD_ENCRYPTION_KEYS": keys, "PAYLOAD_ENCRYPTION_KEY_ID": "old"})
        self.assertEqual(named._active_key_id, "old")

    def test_errors_name_the_variable_and_never_the_key(self):
        cases = [
            ({"PAYLOAD_ENCRYPTION_KEYS": "k1:c2hvcnQ="}, "PAYLOAD_ENCRYPTION_KEYS"),
            ({"PAYLOAD_ENCRYPTION_KEYS": "no-colon"}, "PAYLOAD_ENCRYPTION_KEYS"),
            ({"PAYLOAD_ENCRYPTION_KEYS": f"k1:{VECTOR['keyBase64']}", "PAYLOAD_ENCRYPTION_KEY_ID": "k2"}, "PAYLOAD_ENCRYPTION_KEY_ID"),
            ({"PAYLOAD_ENCRYPTION_KEY_ID": "k1"}, "PAYLOAD_ENCRYPTION_KEY_ID"),
        ]
        for env, variable in cases:
            with self.assertRaises(EncryptionConfigError) as caught:
                EncryptionCodec.from_env(env)
            self.assertIn(variable, str(caught.exception))
            self.assertNotIn(VECTOR["keyBase64"], str(caught.exception))
            self.assertNotIn("c2hvcnQ=", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
