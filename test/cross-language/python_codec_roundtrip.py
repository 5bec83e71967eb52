"""Interop check driven by test/integration/cross-language.test.ts: reads {"decode": [...], "encode": [...]}
payloads (metadata values and data in base64) on stdin, writes {"decoded": [...], "encoded": [...]}, with
the Python client's codec and the keys of PAYLOAD_ENCRYPTION_KEYS / PAYLOAD_ENCRYPTION_KEY_ID."""

import asyncio
import base64
import json
import sys

from temporalio.api.common.v1 import Payload

from hotel_booking_client import EncryptionCodec


def to_payload(p):
    return Payload(metadata={k: base64.b64decode(v) for k, v in p["metadata"].items()}, data=base64.b64decode(p["data"]))


def from_payload(p):
    return {"metadata": {k: base64.b64encode(v).decode() for k, v in p.metadata.items()}, "data": base64.b64encode(p.data).decode()}


async def main():
    codec = EncryptionCodec.from_env()
    if codec is None:
        sys.exit("PAYLOAD_ENCRYPTION_KEYS is not set")
    request = json.load(sys.stdin)
    decoded = await codec.decode([to_payload(p) for p in request["decode"]])
    encoded = await codec.encode([to_payload(p) for p in request["encode"]])
    json.dump({"decoded": [from_payload(p) for p in decoded], "encoded": [from_payload(p) for p in encoded]}, sys.stdout)


asyncio.run(main())
