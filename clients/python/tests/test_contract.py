"""The Python types against the orchestrator's JSON Schema, and the start helper's rules that need no server."""

import asyncio
import json
import os
import subprocess
import sys
import unittest
from unittest import mock
from pathlib import Path
from typing import get_args, get_type_hints

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy

from hotel_booking_client import (
    InvalidBookingRequestError,
    cancel_at_quoted_fee,
    contract,
    quote_cancellation,
    start_booking,
    workflow_id,
)
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
        self.assertMatches(contract.OrderWorkflowStart, schema("order-workflow-start.schema.json"))
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
        cancel = schema("cancel-booking-request.schema.json")["description"]
        self.assertIn(f"update of workflow type {contract.ORDER_WORKFLOW_TYPE}, sent with Update-With-Start", cancel)
        self.assertIn("workflow id order:<customerReferenceNo>", cancel)
        self.assertIn("conflict policy USE_EXISTING", cancel)
        self.assertIn("reuse policy ALLOW_DUPLICATE", cancel)


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


class _StartOperation:
    """Stands for temporalio's WithStartWorkflowOperation: keeps what the helper passed it."""

    def __init__(self, workflow, arg, **options):
        self.workflow, self.arg, self.options = workflow, arg, options


class _UpdateWithStartClient:
    """Records execute_update_with_start_workflow calls and answers each from `answers`."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []
        self.update_ids = []

    async def execute_update_with_start_workflow(self, update, arg, *, start_workflow_operation, id):
        self.calls.append((update, arg, start_workflow_operation))
        self.update_ids.append(id)
        return self.answers.pop(0)


class TestCancelIsAnUpdateWithStart(unittest.TestCase):
    REF = "3f1c5a52-8a4e-4e0b-9a54-5c4a4f6c1e11"

    def setUp(self):
        saved = os.environ.pop("BOOKING_TASK_QUEUE", None)
        self.addCleanup(lambda: saved is None or os.environ.__setitem__("BOOKING_TASK_QUEUE", saved))
        patcher = mock.patch("hotel_booking_client.booking.WithStartWorkflowOperation", _StartOperation)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_a_quote_starts_or_joins_the_order_run_on_the_booking_task_queue(self):
        client = _UpdateWithStartClient({"kind": "quote", "quote": {"fee": None, "basis": "unknown"}})
        os.environ["BOOKING_TASK_QUEUE"] = "from-env"
        asyncio.run(quote_cancellation(client, self.REF))  # type: ignore[arg-type]
        update, arg, start = client.calls[0]
        self.assertEqual((update, arg), (contract.CANCEL_BOOKING_UPDATE, {"confirm": False}))
        self.assertEqual((start.workflow, start.arg), (contract.ORDER_WORKFLOW_TYPE, {"customerReferenceNo": self.REF}))
        options = start.options
        self.assertEqual(options["id"], f"order:{self.REF}")
        self.assertEqual(options["task_queue"], "from-env")
        self.assertEqual(options["id_conflict_policy"], WorkflowIDConflictPolicy.USE_EXISTING)
        self.assertEqual(options["id_reuse_policy"], WorkflowIDReusePolicy.ALLOW_DUPLICATE)
        self.assertEqual(
            [(p.key.name, p.value) for p in options["search_attributes"].search_attributes],
            [(contract.CUSTOMER_REFERENCE_NO_ATTRIBUTE, self.REF)],
        )
        self.assertEqual(options["static_summary"], f"Order · ref {self.REF}")

    def test_cancel_at_quoted_fee_accepts_exactly_the_quote_on_the_queue_given(self):
        fee = {"amount": 12.5, "currency": "EUR"}
        client = _UpdateWithStartClient(
            {"kind": "quote", "quote": {"fee": fee, "basis": "policy"}},
            {"kind": "cancel-requested", "quote": {"fee": fee, "basis": "policy"}, "ambiguous": False},
        )
        asyncio.run(cancel_at_quoted_fee(client, self.REF, "moved", task_queue="q-1"))  # type: ignore[arg-type]
        (_, quote, first), (_, cancel, second) = client.calls
        self.assertEqual(quote, {"confirm": False})
        self.assertEqual(cancel, {"confirm": True, "acceptedFee": fee, "reason": "moved"})
        self.assertEqual((first.options["task_queue"], second.options["task_queue"]), ("q-1", "q-1"))
        # Without a queue or the variable: the contract's default.
        client = _UpdateWithStartClient({"kind": "quote", "quote": {"fee": fee, "basis": "policy"}})
        asyncio.run(quote_cancellation(client, self.REF))  # type: ignore[arg-type]
        self.assertEqual(client.calls[0][2].options["task_queue"], contract.DEFAULT_TASK_QUEUE)

    def test_over_max_fee_nothing_is_sent_after_the_quote(self):
        quote = {"fee": {"amount": 30, "currency": "USD"}, "basis": "policy"}
        client = _UpdateWithStartClient({"kind": "quote", "quote": quote})
        answer = asyncio.run(
            cancel_at_quoted_fee(client, self.REF, max_fee={"amount": 20, "currency": "USD"})  # type: ignore[arg-type]
        )
        self.assertEqual(answer["kind"], "quote")
        self.assertEqual(len(client.calls), 1)


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
