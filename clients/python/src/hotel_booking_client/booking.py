"""Starting a booking from Python, with the rules the orchestrator's TypeScript client helper follows.

One workflow per booking reference: the id is `booking:<customerReferenceNo>`; a start for a reference
whose workflow is running attaches to it, and one whose workflow has ended is refused and answered with
that workflow. A caller that retries after a timeout therefore never makes a second booking.
"""

import asyncio
import os
import re
import sys
import traceback
import uuid
from typing import Any, Awaitable, Callable, Coroutine, Mapping, NoReturn, Optional, TypeVar, cast

from temporalio.client import Client, WithStartWorkflowOperation, WorkflowHandle
from temporalio.common import (
    SearchAttributeKey,
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.envconfig import ClientConfigProfile
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from .codec import data_converter_from_env
from .contract import (
    CANCEL_BOOKING_UPDATE,
    CUSTOMER_REFERENCE_NO_ATTRIBUTE,
    DEFAULT_TASK_QUEUE,
    ORDER_WORKFLOW_TYPE,
    WORKFLOW_TYPE,
    BookingOutcome,
    BookingRequest,
    CancelBookingAnswer,
    CancelBookingRequest,
    Money,
    OrderOutcome,
    OrderWorkflowStart,
    order_workflow_id,
    workflow_id,
)

_CUSTOMER_REFERENCE_NO = SearchAttributeKey.for_keyword(CUSTOMER_REFERENCE_NO_ATTRIBUTE)
_REQUIRED = ("customerReferenceNo", "ratePkgId", "holder", "guests")

# How often, and after what first pause (doubled each time), a call the server asked to retry is made again: as the
# TypeScript client helper does.
RETRY_ATTEMPTS = 5
_RETRY_FIRST_PAUSE_SECONDS = 0.2

_T = TypeVar("_T")


def server_asked_to_retry(error: BaseException) -> bool:
    """Whether the server's answer says the call was not done and should be made again as it was.

    - UNKNOWN or INTERNAL "... please retry": the frontend's mask over an internal error (a persistence error inside
      an Update-With-Start's per-operation errors reaches the caller this way; the same call again goes through).
    - FAILED_PRECONDITION "... update due to unexpected workflow task failure" (WorkflowNotReady): the update was
      aborted, never accepted, because the workflow task that carried it failed; asked again, it reaches the run as
      it is now.
    - UNAVAILABLE "Workflow was not started: <outcome>": an Update-With-Start lost a race with another start of the
      same id; the update was not applied, and the server's code says to retry the whole operation.
    """
    seen = set()
    e: Optional[BaseException] = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, RPCError):
            code, text = int(e.status), e.message
            if code in (2, 13) and re.search(r"please retry", text, re.I):
                return True
            if code == 9 and re.search(r"update due to unexpected workflow task failure", text, re.I):
                return True
            if code == 14 and re.search(r"workflow was not started: ", text, re.I):
                return True
        e = getattr(e, "cause", None) or e.__cause__
    return False


async def _retried_when_asked(call: Callable[[], Awaitable[_T]]) -> _T:
    """Makes `call` again, a few times with growing pauses, while the server asks to retry; any other error, or the
    last attempt's, goes to the caller. Only for calls that are safe to repeat as they are (a start that attaches to
    the running workflow, an update with a fixed id)."""
    attempt = 1
    while True:
        try:
            return await call()
        except Exception as error:
            if attempt >= RETRY_ATTEMPTS or not server_asked_to_retry(error):
                raise
        await asyncio.sleep(_RETRY_FIRST_PAUSE_SECONDS * 2 ** (attempt - 1))
        attempt += 1


class InvalidBookingRequestError(ValueError):
    """The request cannot be a booking; the message names the field, never its value (it may be personal)."""


def new_reference() -> str:
    """A new booking reference (a UUID). Keep it: retrying with it is safe, a new one books again."""
    return str(uuid.uuid4())


async def connect(env: Optional[Mapping[str, str]] = None) -> Client:
    """A client configured as the workers are, by Temporal's own variables (temporalio.envconfig): TEMPORAL_ADDRESS
    (localhost:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_API_KEY, and TEMPORAL_TLS_CLIENT_CERT_PATH,
    TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME for mutual TLS;
    encrypting as the workers do."""
    env = os.environ if env is None else env
    config = ClientConfigProfile.load(
        disable_file=not env.get("TEMPORAL_CONFIG_FILE"), override_env_vars=dict(env)
    ).to_client_connect_config()
    config.setdefault("target_host", "localhost:7233")
    config.setdefault("namespace", "default")
    return await Client.connect(**config, data_converter=data_converter_from_env(env))


def _task_queue(task_queue: Optional[str]) -> str:
    return task_queue or os.environ.get("BOOKING_TASK_QUEUE") or DEFAULT_TASK_QUEUE


def _check(request: BookingRequest) -> None:
    # The workflow validates everything; these are the fields the start itself depends on.
    missing = [name for name in _REQUIRED if name not in request]
    if missing:
        raise InvalidBookingRequestError(f"missing: {', '.join(missing)}")
    try:
        uuid.UUID(request["customerReferenceNo"])
    except (TypeError, ValueError, AttributeError):
        raise InvalidBookingRequestError("customerReferenceNo: must be a UUID") from None


async def start_booking(
    client: Client, request: BookingRequest, task_queue: Optional[str] = None
) -> WorkflowHandle[Any, Any]:
    """Starts the booking, or returns the workflow that already exists for its reference.

    The task queue is `task_queue`, else BOOKING_TASK_QUEUE, else `hotel-booking`. A start the server asks to retry
    (server_asked_to_retry) is made again: it attaches to the booking if the first one started it.
    """
    _check(request)
    ref = request["customerReferenceNo"]
    try:
        return await _retried_when_asked(
            lambda: client.start_workflow(
                WORKFLOW_TYPE,
                request,
                id=workflow_id(ref),
                task_queue=_task_queue(task_queue),
                # A retried start while the booking runs attaches to it; after it ended, the id is never reused.
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                search_attributes=TypedSearchAttributes([SearchAttributePair(_CUSTOMER_REFERENCE_NO, ref)]),
                # Shown in the Web UI's list: references only, since summaries are stored in clear.
                static_summary=f"Booking {request['ratePkgId']} · ref {ref}",
            )
        )
    except WorkflowAlreadyStartedError:
        # The booking ran before and ended: its workflow, not a new one, is the answer.
        return client.get_workflow_handle(workflow_id(ref))


async def await_outcome(client: Client, customer_reference_no: str) -> BookingOutcome:
    """Waits for the booking's outcome (following continue-as-new runs) and returns it, decrypted."""
    handle = client.get_workflow_handle(workflow_id(customer_reference_no))
    return cast(BookingOutcome, await handle.result())


async def cancel_booking(
    client: Client,
    customer_reference_no: str,
    request: CancelBookingRequest,
    task_queue: Optional[str] = None,
) -> CancelBookingAnswer:
    """Sends the `cancelBooking` update to the booking's order workflow (`order:<reference>`), starting it.

    The order workflow runs on demand, so this is an Update-With-Start: one call starts an order run (or joins
    the one in progress) on `task_queue`, else BOOKING_TASK_QUEUE, else `hotel-booking`, and sends the update.
    In two steps, like the TypeScript client's cancelBooking: `{"confirm": False}` answers the fee that applies
    now (`{"kind": "quote", "quote": {"fee", "basis", "changesAt"}}`); `{"confirm": True, "acceptedFee": <that
    fee>}` sends Cancel and answers once the supplier took it (`cancel-requested`, with its `serviceFee`) or
    refused it (`cancel-refused`). Refused with temporalio's WorkflowUpdateFailedError when the order is not
    confirmed, missing, or the fee changed since the quote. Its end: await_order_outcome.

    When the server asks to retry (server_asked_to_retry), the call is made again with the same update id, so an
    update the server did apply is answered, not applied twice.
    """
    if not isinstance(request.get("confirm"), bool):
        raise InvalidBookingRequestError("confirm: must be true or false")
    start_input: OrderWorkflowStart = {"customerReferenceNo": customer_reference_no}
    update_id = str(uuid.uuid4())

    async def attempt() -> Any:
        # A start operation serves one call only: each attempt has its own, the update id is the same.
        start = WithStartWorkflowOperation(
            ORDER_WORKFLOW_TYPE,
            start_input,
            id=order_workflow_id(customer_reference_no),
            task_queue=_task_queue(task_queue),
            # Joins a run in progress; after a run ended, the next request starts a new one under the same id.
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
            search_attributes=TypedSearchAttributes(
                [SearchAttributePair(_CUSTOMER_REFERENCE_NO, customer_reference_no)]
            ),
            static_summary=f"Order · ref {customer_reference_no}",
        )
        return await client.execute_update_with_start_workflow(
            CANCEL_BOOKING_UPDATE, request, start_workflow_operation=start, id=update_id
        )

    return cast(CancelBookingAnswer, await _retried_when_asked(attempt))


async def quote_cancellation(
    client: Client, customer_reference_no: str, task_queue: Optional[str] = None
) -> CancelBookingAnswer:
    """The fee a cancellation costs now: `cancel_booking` with `confirm: False` (nothing is cancelled)."""
    return await cancel_booking(client, customer_reference_no, {"confirm": False}, task_queue)


async def cancel_at_quoted_fee(
    client: Client,
    customer_reference_no: str,
    reason: Optional[str] = None,
    max_fee: Optional[Money] = None,
    task_queue: Optional[str] = None,
) -> CancelBookingAnswer:
    """Quotes, then cancels accepting exactly the quoted fee; with `max_fee`, only when the fee is at most that.

    Returns the quote unchanged (kind `quote`) when it is over `max_fee`, or unknown while a limit is set.
    """
    answer = await quote_cancellation(client, customer_reference_no, task_queue)
    quote = answer["quote"]
    fee = quote["fee"]
    if max_fee is not None and (
        fee is None or fee["currency"] != max_fee["currency"] or fee["amount"] > max_fee["amount"]
    ):
        return answer
    request: CancelBookingRequest = {"confirm": True, "acceptedFee": fee}
    if reason:
        request["reason"] = reason
    return await cancel_booking(client, customer_reference_no, request, task_queue)


async def await_order_outcome(client: Client, customer_reference_no: str) -> OrderOutcome:
    """Waits for the latest order run's end: after a cancellation cancelled, cancel-failed, cancel-unresolved,
    cancel-refused or cancel-stopped; `quoted` after a quote only (schema/order-outcome.schema.json)."""
    handle = client.get_workflow_handle(order_workflow_id(customer_reference_no))
    return cast(OrderOutcome, await handle.result())


def run_and_exit(main: Coroutine[Any, Any, Optional[int]]) -> NoReturn:
    """For short scripts: runs `main`, then exits with its return code (None is 0, an exception 1).

    The exit skips interpreter teardown, which the SDK's core threads, still alive after the last call,
    can crash with SIGSEGV or SIGABRT after the script's work is done (temporalio/sdk-python#300).
    A long-running service does not need it.
    """
    try:
        code = asyncio.run(main) or 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
