"""`python -m hotel_booking_client.book [--scenario TEST] [--ref UUID] [--rate-pkg ID] [--task-queue NAME]`

Starts a booking for a demo traveller (the one `npm run book` uses), waits for it and prints its decrypted
outcome as JSON on stdout. Exit code: 0 confirmed, 2 any other outcome, 1 an error.
Reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, the TEMPORAL_TLS_* variables, BOOKING_TASK_QUEUE, PAYLOAD_ENCRYPTION_KEYS and
PAYLOAD_ENCRYPTION_KEY_ID.
"""

import argparse
import json
import os
import sys
import uuid
from typing import List, Optional

from temporalio.exceptions import TemporalError

from .booking import InvalidBookingRequestError, await_outcome, connect, new_reference, run_and_exit, start_booking
from .codec import ENCRYPTED_ENCODING, EncryptionConfigError, UnknownEncryptionKeyError
from .contract import BookingRequest


def reference(text: str) -> str:
    """--ref: a UUID, checked before anything is sent."""
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise argparse.ArgumentTypeError("must be a UUID") from None


def demo_request(ref: str, rate_pkg: str, scenario: Optional[str]) -> BookingRequest:
    """A request the sandbox supplier accepts; `scenario` becomes its Test header (e.g. confirmAfterMs=0)."""
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
            {
                "roomIndex": 0,
                "firstName": "Demo",
                "lastName": "Traveller",
                "nationalityCode": "US",
                "age": 30,
                "isChild": False,
            }
        ],
    }
    if scenario:
        request["context"] = {"test": scenario}
    return request


async def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m hotel_booking_client.book", description=__doc__.split("\n")[2])
    parser.add_argument(
        "--ref", type=reference, help="booking reference, a UUID (default: a new one; retry with it safely)"
    )
    parser.add_argument("--rate-pkg", default="pkg-demo-deluxe", help="rate package id (default: pkg-demo-deluxe)")
    parser.add_argument("--scenario", help="the sandbox supplier's Test header, e.g. confirmAfterMs=0")
    parser.add_argument("--task-queue", help="default: BOOKING_TASK_QUEUE, else hotel-booking")
    args = parser.parse_args(argv)
    if not os.environ.get("PAYLOAD_ENCRYPTION_KEYS"):
        # The worker reads plain input, so the booking would work, with the guest's data in clear in history.
        print("PAYLOAD_ENCRYPTION_KEYS is not set: the booking's input is stored unencrypted", file=sys.stderr)
    ref = args.ref or new_reference()
    client = await connect()
    handle = await start_booking(client, demo_request(ref, args.rate_pkg, args.scenario), args.task_queue)
    print(f"Booking {ref} started as workflow {handle.id}", file=sys.stderr)
    outcome = await await_outcome(client, ref)
    print(json.dumps(outcome))
    return 0 if outcome["kind"] == "confirmed" else 2


async def book(argv: List[str]) -> int:
    """main() with the errors a caller can fix said in one line instead of a traceback."""
    try:
        return await main(argv)
    except (EncryptionConfigError, UnknownEncryptionKeyError, InvalidBookingRequestError) as err:
        print(err, file=sys.stderr)
    except KeyError as err:
        # The SDK's converter met a payload it has no codec for: the workers encrypt and this caller does not.
        if ENCRYPTED_ENCODING.decode() not in str(err):
            raise
        print(
            "The outcome is encrypted (binary/encrypted): set PAYLOAD_ENCRYPTION_KEYS to the workers' keys",
            file=sys.stderr,
        )
    except TemporalError as err:
        # An outcome the codec could not open says so in its cause: the usual fix is the keys.
        cause = f" ({err.__cause__})" if err.__cause__ else ""
        print(f"{type(err).__name__}: {err}{cause}", file=sys.stderr)
    except RuntimeError as err:
        # Connection failures surface as RuntimeError from the SDK's core.
        print(f"{err} (TEMPORAL_ADDRESS={os.environ.get('TEMPORAL_ADDRESS', 'localhost:7233')})", file=sys.stderr)
    return 1


if __name__ == "__main__":
    run_and_exit(book(sys.argv[1:]))
