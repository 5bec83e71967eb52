"""Starting a booking from Python, with the rules the TypeScript client helper follows (README).

One workflow per booking reference: the id is `booking:<customerReferenceNo>`, a start for a reference
that already has a workflow attaches to it (running) or is refused and answered with it (ended), so a
caller that retries after a timeout never makes a second booking. Keep the reference to retry with.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Dict, List, Mapping, Optional

from temporalio.client import Client, WorkflowHandle
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

try:  # Python 3.11+
    from typing import NotRequired, TypedDict
except ImportError:  # pragma: no cover
    from typing_extensions import NotRequired, TypedDict  # type: ignore

from .codec import data_converter_from_env

WORKFLOW_TYPE = "bookingWorkflow"
DEFAULT_TASK_QUEUE = "hotel-booking"
CUSTOMER_REFERENCE_NO = SearchAttributeKey.for_keyword("CustomerReferenceNo")


class Money(TypedDict):
    currency: str
    amount: float


class Phone(TypedDict):
    countryCode: str
    number: str
    countryNumber: NotRequired[int]


class Holder(TypedDict):
    firstName: str
    lastName: str
    email: str
    phone: Phone


class Guest(TypedDict):
    roomIndex: int
    firstName: str
    lastName: str
    nationalityCode: str
    age: int
    isChild: bool


class BookingRequest(TypedDict):
    """The workflow's input (schema/booking-request.schema.json in the orchestrator's repository)."""

    customerReferenceNo: str
    ratePkgId: str
    holder: Holder
    guests: List[Guest]
    sessionId: NotRequired[str]
    expectedPrice: NotRequired[Money]
    priceChangePolicy: NotRequired[Dict[str, Any]]
    context: NotRequired[Dict[str, Any]]
    recovery: NotRequired[Dict[str, Any]]


def new_reference() -> str:
    """A new booking reference (uuid). Keep it: it is the key to retry with."""
    return str(uuid.uuid4())


def workflow_id(customer_reference_no: str) -> str:
    """The one workflow id of a booking; the workflow refuses any other for its reference."""
    return f"booking:{customer_reference_no}"


async def connect(env: Optional[Mapping[str, str]] = None) -> Client:
    """A client for TEMPORAL_ADDRESS (localhost:7233) and TEMPORAL_NAMESPACE (default), with the workers' encryption."""
    env = os.environ if env is None else env
    return await Client.connect(
        env.get("TEMPORAL_ADDRESS", "localhost:7233"),
        namespace=env.get("TEMPORAL_NAMESPACE", "default"),
        data_converter=data_converter_from_env(env),
    )


async def start_booking(client: Client, request: BookingRequest, task_queue: Optional[str] = None) -> WorkflowHandle:
    """Starts the booking, or returns the workflow that already exists for its reference."""
    ref = request["customerReferenceNo"]
    try:
        return await client.start_workflow(
            WORKFLOW_TYPE,
            request,
            id=workflow_id(ref),
            task_queue=task_queue or os.environ.get("BOOKING_TASK_QUEUE", DEFAULT_TASK_QUEUE),
            # A retried start while the booking runs attaches to it; after it ended, the id is never reused.
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            search_attributes=TypedSearchAttributes([SearchAttributePair(CUSTOMER_REFERENCE_NO, ref)]),
            # References only: summaries are stored in clear.
            static_summary=f"Booking {request['ratePkgId']} · ref {ref}",
        )
    except WorkflowAlreadyStartedError:
        # The booking ran before and ended: its workflow, not a new one, is the answer.
        return client.get_workflow_handle(workflow_id(ref))


async def await_outcome(client: Client, customer_reference_no: str) -> Dict[str, Any]:
    """The booking's outcome (a dict with `kind`: confirmed, failed, unavailable, price-rejected, cancelled, unresolved)."""
    return await client.get_workflow_handle(workflow_id(customer_reference_no)).result()
