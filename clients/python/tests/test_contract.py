"""The Python types against the orchestrator's JSON Schema, and the start helper's rules that need no server."""

import asyncio
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path
from typing import get_args, get_type_hints

from hotel_booking_client import InvalidBookingRequestError, contract, start_booking, workflow_id
from hotel_booking_client.book import demo_request

# In the orchestrator's repository the schema sits three folders up; elsewhere point at it or skip.
SCHEMA_DIR = Path(os.environ.get("HOTEL_BOOKING_SCHEMA_DIR", Path(__file__).parents[3] / "schema"))


def schema(name):
    return json.loads((SCHEMA_DIR / name).read_text())


def literals(hint):
    """The values a Literal hint (under NotRequired or not) allows, or None."""
    while get_args(hint) and not all(isinstance(a, str) for a in get_args(hint)):
        hint = get_args(hint)[0]
    return set(get_args(hint)) or None


@unittest.skipUnless(SCHEMA_DIR.is_dir(), "the orchestrator's schema/ folder is not here")
class TestTypesMatchTheSchema(unittest.TestCase):
    def assertMatches(self, typed_dict, node):
        where = typed_dict.__name__
        self.assertEqual(set(typed_dict.__annotations__), set(node["properties"]), f"{where}: fields")
        self.assertEqual(typed_dict.__required_keys__, set(node.get("required", [])), f"{where}: required fields")
        hints = get_type_hints(typed_dict, include_extras=True)
        for field, prop in node["properties"].items():
            allowed = set(prop["enum"]) if "enum" in prop else {prop["const"]} if "const" in prop else None
            if allowed is not None:
                self.assertEqual(literals(hints[field]), allowed, f"{where}.{field}")

    def test_the_request(self):
        root = schema("booking-request.schema.json")
        p = root["properties"]
        self.assertMatches(contract.BookingRequest, root)
        self.assertMatches(contract.Holder, p["holder"])
        self.assertMatches(contract.Phone, p["holder"]["properties"]["phone"])
        self.assertMatches(contract.Guest, p["guests"]["items"])
        self.assertMatches(contract.Money, p["expectedPrice"])
        self.assertMatches(contract.PriceChangePolicy, p["priceChangePolicy"])
        self.assertMatches(contract.BookingContext, p["context"])
        self.assertMatches(contract.RecoveryPolicy, p["recovery"])

    def test_every_outcome(self):
        kinds = {
            branch["properties"]["kind"]["const"]: branch for branch in schema("booking-outcome.schema.json")["anyOf"]
        }
        self.assertEqual(set(kinds), set(contract.OUTCOME_TYPES))
        self.assertEqual(set(get_args(contract.BookingOutcome)), set(contract.OUTCOME_TYPES.values()))
        for kind, branch in kinds.items():
            self.assertMatches(contract.OUTCOME_TYPES[kind], branch)
        self.assertMatches(contract.Order, kinds["confirmed"]["properties"]["order"])
        self.assertMatches(contract.BookAttempt, kinds["unresolved"]["properties"]["bookAttempts"]["items"])
        self.assertMatches(contract.Poll, kinds["unresolved"]["properties"]["polls"]["items"])

    def test_the_cancel_update(self):
        self.assertMatches(contract.CancelBookingRequest, schema("cancel-booking-request.schema.json"))
        kinds = {
            branch["properties"]["kind"]["const"]: branch
            for branch in schema("cancel-booking-answer.schema.json")["anyOf"]
        }
        self.assertEqual(set(kinds), set(contract.CANCEL_ANSWER_TYPES))
        self.assertEqual(set(get_args(contract.CancelBookingAnswer)), set(contract.CANCEL_ANSWER_TYPES.values()))
        for kind, branch in kinds.items():
            self.assertMatches(contract.CANCEL_ANSWER_TYPES[kind], branch)
        self.assertMatches(contract.CancelFeeQuote, kinds["quote"]["properties"]["quote"])
        self.assertEqual(contract.order_workflow_id("r-1"), "order:r-1")

    def test_the_order_outcome_and_state(self):
        kinds = {branch["properties"]["kind"]["const"]: branch for branch in schema("order-outcome.schema.json")["anyOf"]}
        self.assertEqual(set(kinds), set(contract.ORDER_OUTCOME_TYPES))
        self.assertEqual(set(get_args(contract.OrderOutcome)), set(contract.ORDER_OUTCOME_TYPES.values()))
        for kind, branch in kinds.items():
            self.assertMatches(contract.ORDER_OUTCOME_TYPES[kind], branch)
        self.assertMatches(contract.Order, kinds["quoted"]["properties"]["order"])
        self.assertMatches(contract.CancelFeeQuote, kinds["quoted"]["properties"]["quote"])
        record = kinds["cancel-stopped"]["properties"]["cancellation"]
        self.assertMatches(contract.CancellationRecord, record)
        self.assertMatches(contract.CancelAttempt, record["properties"]["cancelAttempts"]["items"])
        self.assertMatches(contract.CancelFeeQuote, record["properties"]["cancelAttempts"]["items"]["properties"]["quote"])
        self.assertMatches(contract.Poll, record["properties"]["polls"]["items"])
        accepted = {b["properties"]["kind"]["const"]: b for b in record["properties"]["accepted"]["anyOf"]}
        self.assertEqual(set(accepted), set(contract.ACCEPTED_TYPES))
        self.assertEqual(set(get_args(contract.CancellationAccepted)), set(contract.ACCEPTED_TYPES.values()))
        for kind, branch in accepted.items():
            self.assertMatches(contract.ACCEPTED_TYPES[kind], branch)
        state = schema("order-state.schema.json")
        self.assertMatches(contract.OrderState, state)
        self.assertMatches(contract.CancellationRecord, state["properties"]["cancellation"])

    def test_the_names(self):
        description = schema("booking-request.schema.json")["description"]
        self.assertIn(f"workflow type {contract.WORKFLOW_TYPE}", description)
        self.assertIn(f"task queue {contract.DEFAULT_TASK_QUEUE}", description)
        self.assertIn("workflow id booking:<customerReferenceNo>", description)


class TestStartRules(unittest.TestCase):
    def test_one_workflow_id_per_reference(self):
        self.assertEqual(
            workflow_id("3f1c5a52-8a4e-4e0b-9a54-5c4a4f6c1e11"), "booking:3f1c5a52-8a4e-4e0b-9a54-5c4a4f6c1e11"
        )

    def test_a_request_that_cannot_be_a_booking_is_refused_before_any_call(self):
        # The client is never touched: None would fail on first use.
        request = demo_request("not-a-uuid", "pkg", None)
        with self.assertRaises(InvalidBookingRequestError) as caught:
            asyncio.run(start_booking(None, request))  # type: ignore[arg-type]
        self.assertIn("customerReferenceNo", str(caught.exception))
        partial = {"customerReferenceNo": "3f1c5a52-8a4e-4e0b-9a54-5c4a4f6c1e11", "ratePkgId": "pkg"}
        with self.assertRaises(InvalidBookingRequestError) as caught:
            asyncio.run(start_booking(None, partial))  # type: ignore[arg-type]
        self.assertIn("holder, guests", str(caught.exception))

    def test_the_demo_request_has_the_scenario_as_its_test_header(self):
        self.assertEqual(demo_request("r", "pkg", "confirmAfterMs=0")["context"], {"test": "confirmAfterMs=0"})
        self.assertNotIn("context", demo_request("r", "pkg", None))


class TestRunAndExit(unittest.TestCase):
    def script(self, body):
        program = f"from hotel_booking_client import run_and_exit\nasync def main():\n{body}\nrun_and_exit(main())\n"
        return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)

    def test_exits_with_the_return_code_after_flushing_output(self):
        done = self.script("    print('outcome', end='')\n    return 2")
        self.assertEqual((done.returncode, done.stdout), (2, "outcome"))
        self.assertEqual(self.script("    print('x')").returncode, 0)

    def test_an_exception_is_printed_and_exits_1(self):
        done = self.script("    raise LookupError('which key')")
        self.assertEqual(done.returncode, 1)
        self.assertIn("LookupError: which key", done.stderr)


if __name__ == "__main__":
    sys.exit(unittest.main())
