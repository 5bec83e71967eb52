"""`python -m hotel_booking_client.book [--scenario TEST] [--ref UUID] [--rate-pkg ID]`: start a booking
with a demo traveller and print its decrypted outcome as JSON; exit 0 only when it is confirmed.

Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, BOOKING_TASK_QUEUE and the encryption variables, like the worker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from .booking import BookingRequest, await_outcome, connect, new_reference, start_booking


def demo_request(ref: str, rate_pkg: str, scenario: str | None) -> BookingRequest:
    request: BookingRequest = {
        "customerReferenceNo": ref,
        "ratePkgId": rate_pkg,
        "holder": {
            "firstName": "Demo",
            "lastName": "Traveller",
            "email": "demo@example.com",
            "phone": {"countryCode": "US", "countryNumber": 1, "number": "5550100"},
        },
        "guests": [
            {"roomIndex": 0, "firstName": "Demo", "lastName": "Traveller", "nationalityCode": "US", "age": 30, "isChild": False}
        ],
    }
    if scenario:
        request["context"] = {"test": scenario}
    return request


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m hotel_booking_client.book")
    parser.add_argument("--ref", default=None, help="booking reference (default: a new uuid)")
    parser.add_argument("--rate-pkg", default="pkg-demo-deluxe")
    parser.add_argument("--scenario", default=None, help="the sandbox supplier's Test header, e.g. confirmAfterMs=0")
    args = parser.parse_args(argv)
    ref = args.ref or new_reference()
    client = await connect()
    handle = await start_booking(client, demo_request(ref, args.rate_pkg, args.scenario))
    print(f"Booking {ref} started as workflow {handle.id}", file=sys.stderr)
    outcome = await await_outcome(client, ref)
    print(json.dumps(outcome))
    return 0 if outcome.get("kind") == "confirmed" else 2


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
