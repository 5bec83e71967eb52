"""The orchestrator's contract as Python sees it: names, and the JSON of the workflow's input and outcome.

The source of truth is the orchestrator's `src/api/contract` (JSON Schema in its `schema/` folder); the tests
check these types' keys against `schema/booking-request.schema.json` and `schema/booking-outcome.schema.json`.
Payloads are plain JSON, so the types are TypedDicts: a request is a dict, an outcome comes back as one.
"""

import sys
from typing import Any, Dict, List, Union

# typing.TypedDict understands NotRequired from 3.11; before that both must come from typing_extensions.
if sys.version_info >= (3, 11):
    from typing import Literal, NotRequired, TypedDict
else:  # pragma: no cover
    from typing_extensions import Literal, NotRequired, TypedDict

WORKFLOW_TYPE = "bookingWorkflow"
DEFAULT_TASK_QUEUE = "hotel-booking"
"""Overridden by BOOKING_TASK_QUEUE, as for the workers."""
CUSTOMER_REFERENCE_NO_ATTRIBUTE = "CustomerReferenceNo"
BOOKING_STAGE_ATTRIBUTE = "BookingStage"


def workflow_id(customer_reference_no: str) -> str:
    """The one workflow id of a booking; the workflow refuses any other for its reference."""
    return f"booking:{customer_reference_no}"


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


class PriceChangePolicy(TypedDict, total=False):
    """What to do when the price at Book time is above `expectedPrice` (default: reject any rise)."""

    maxIncreasePercent: float
    maxIncreaseAmount: float
    onExceeded: Literal["reject", "ask"]
    approvalTimeoutSeconds: int


class BookingContext(TypedDict, total=False):
    currency: str
    language: str
    ip: str
    # The sandbox supplier's Test header (a scenario such as `confirmAfterMs=0`): for demos and tests.
    test: str


class RecoveryPolicy(TypedDict, total=False):
    """The QueryOrders schedule after an ambiguous Book; every field has the orchestrator's default.

    The worker refuses values outside its floors and caps (Book never re-sent sooner than 10 minutes, at most
    3 Book sends, ...), naming the field and its bound. `testing` lifts them, for test workers only: a worker
    without RECOVERY_TESTING=on refuses a request that sets it.
    """

    delaysSeconds: List[float]
    repeatEverySeconds: float
    rebookAfterSeconds: float
    maxBookAttempts: int
    deadlineSeconds: float
    continueAsNewAfterEvents: int
    feeChangeMarginSeconds: float
    testing: bool


class BookingRequest(TypedDict):
    """The workflow's input. `customerReferenceNo` is a UUID: the booking's key, keep it to retry with."""

    customerReferenceNo: str
    ratePkgId: str
    holder: Holder
    guests: List[Guest]
    sessionId: NotRequired[str]
    expectedPrice: NotRequired[Money]
    priceChangePolicy: NotRequired[PriceChangePolicy]
    context: NotRequired[BookingContext]
    recovery: NotRequired[RecoveryPolicy]
    # When the booking is confirmed after its caller cancelled it: report it (default), cancel it, or cancel it
    # only while that is free.
    onCancelAfterBook: NotRequired[Literal["report", "cancel-if-free", "cancel"]]
    # The supplier account to book on (an id of the worker's SUPPLIER_ACCOUNTS_FILE); absent: the partner's default.
    # One the partner may not use is refused before anything is sent.
    supplier: NotRequired[str]


class CancelFee(TypedDict):
    """The fee that applies from now until `until` (ISO time)."""

    until: str
    fee: Money


class RoomCancelPolicy(TypedDict):
    """One room's cancel policy: free before `refundableUntil`, then the `fees` in order."""

    refundableUntil: NotRequired[str]
    fees: List[CancelFee]


class Order(TypedDict):
    """An order as the supplier reports it; status 2 is Confirmed."""

    customerReferenceNo: str
    status: int
    statusRemark: NotRequired[str]
    platformReferenceNo: NotRequired[str]
    supplierReferenceNo: NotRequired[str]
    hotelConfirmNo: NotRequired[str]
    hotelId: NotRequired[str]
    checkIn: NotRequired[str]
    checkOut: NotRequired[str]
    price: NotRequired[Money]
    cancelPolicy: NotRequired[List[RoomCancelPolicy]]


class ConfirmedOutcome(TypedDict):
    kind: Literal["confirmed"]
    order: Order
    cancelRequested: bool


class FailedOutcome(TypedDict):
    kind: Literal["failed"]
    reason: str
    order: NotRequired[Order]
    errorType: NotRequired[str]
    cancelRequested: bool


class FallbackCandidate(TypedDict):
    """A package another supplier offers instead (CheckAvail's fallback candidates): book it as a new booking,
    under a new reference, with its ratePkgId and its price as expectedPrice. supplier is as the supplier sent it."""

    ratePkgId: str
    supplier: NotRequired[Union[int, float, str]]
    price: NotRequired[Money]
    name: NotRequired[str]


class UnavailableOutcome(TypedDict):
    kind: Literal["unavailable"]
    candidates: NotRequired[List[FallbackCandidate]]


class PriceRejectedOutcome(TypedDict):
    kind: Literal["price-rejected"]
    expectedPrice: Money
    currentPrice: NotRequired[Money]
    reason: Literal["policy", "refused", "approval-timeout"]
    candidates: NotRequired[List[FallbackCandidate]]


class CancelledOutcome(TypedDict):
    kind: Literal["cancelled"]


class BookAttempt(TypedDict):
    at: str
    result: Literal["order", "refused", "rejected", "ambiguous"]
    status: NotRequired[int]
    error: NotRequired[str]


class Poll(TypedDict):
    at: str
    sinceBookSeconds: float
    trigger: Literal["schedule", "supplier-hint", "request"]
    result: Literal["found", "not-found", "error"]
    status: NotRequired[int]
    error: NotRequired[str]


class UnresolvedOutcome(TypedDict):
    """The order's fate was still unknown at the recovery deadline: a person must look, with these references."""

    kind: Literal["unresolved"]
    customerReferenceNo: str
    sessionId: str
    lastStatus: NotRequired[int]
    bookAttempts: List[BookAttempt]
    polls: List[Poll]
    cancelRequested: bool


BookingOutcome = Union[
    ConfirmedOutcome,
    FailedOutcome,
    UnavailableOutcome,
    PriceRejectedOutcome,
    CancelledOutcome,
    UnresolvedOutcome,
]
"""The workflow's result, a union on `kind`; every ending is one of these, never an exception."""

OUTCOME_TYPES: Dict[str, Any] = {
    "confirmed": ConfirmedOutcome,
    "failed": FailedOutcome,
    "unavailable": UnavailableOutcome,
    "price-rejected": PriceRejectedOutcome,
    "cancelled": CancelledOutcome,
    "unresolved": UnresolvedOutcome,
}


# --- A confirmed booking's order: cancellation (the order workflow) --------------------------------------------

ORDER_WORKFLOW_TYPE = "orderWorkflow"
CANCEL_BOOKING_UPDATE = "cancelBooking"
"""The order workflow's update: `confirm: False` quotes the fee that applies now; `confirm: True` with that fee cancels."""
ORDER_STATE_QUERY = "orderState"


def order_workflow_id(customer_reference_no: str) -> str:
    """A booking's order workflow: started on demand by each cancel_booking (Update-With-Start)."""
    return f"order:{customer_reference_no}"


class OrderWorkflowStart(TypedDict):
    """The order workflow's start input sent with a cancel request (schema/order-workflow-start.schema.json)."""

    customerReferenceNo: str


class CancelBookingRequest(TypedDict):
    confirm: bool
    acceptedFee: NotRequired[Union[Money, None]]
    reason: NotRequired[str]
    requestedBy: NotRequired[str]


class CancelFeeQuote(TypedDict):
    fee: Union[Money, None]
    basis: Literal["free", "policy", "unknown"]
    changesAt: NotRequired[str]


class QuoteAnswer(TypedDict):
    kind: Literal["quote"]
    quote: CancelFeeQuote


class CancelRequestedAnswer(TypedDict):
    kind: Literal["cancel-requested"]
    quote: CancelFeeQuote
    serviceFee: NotRequired[Money]
    ambiguous: bool


class CancelRefusedAnswer(TypedDict):
    kind: Literal["cancel-refused"]
    quote: CancelFeeQuote
    errorType: str
    reason: str


CancelBookingAnswer = Union[QuoteAnswer, CancelRequestedAnswer, CancelRefusedAnswer]
"""The cancelBooking update's answer, a union on `kind`."""

CANCEL_ANSWER_TYPES: Dict[str, Any] = {
    "quote": QuoteAnswer,
    "cancel-requested": CancelRequestedAnswer,
    "cancel-refused": CancelRefusedAnswer,
}

class FeeAccepted(TypedDict):
    kind: Literal["fee"]
    fee: Union[Money, None]


class FreeAccepted(TypedDict):
    kind: Literal["free"]


class AnyFeeAccepted(TypedDict):
    kind: Literal["any"]


CancellationAccepted = Union[FeeAccepted, FreeAccepted, AnyFeeAccepted]
"""What a cancellation accepted, checked again before every send: at most a fee (None: an unknown fee), only
while free, or any fee (onCancelAfterBook `cancel`)."""

ACCEPTED_TYPES: Dict[str, Any] = {"fee": FeeAccepted, "free": FreeAccepted, "any": AnyFeeAccepted}


class CancelAttempt(TypedDict):
    """One Cancel send. `rejected`: refused in words proving nothing was done; `refused`: never reached the
    supplier; `ambiguous`: may have acted; `not-sent`: stopped before sending."""

    at: str
    result: Literal["accepted", "refused", "rejected", "ambiguous", "not-sent"]
    error: NotRequired[str]
    quote: NotRequired[CancelFeeQuote]


class CancellationRecord(TypedDict):
    requestedAt: str
    reason: str
    requestedBy: NotRequired[str]
    origin: Literal["caller", "auto", "reconciliation"]
    quote: CancelFeeQuote
    accepted: CancellationAccepted
    serviceFee: NotRequired[Money]
    cancelAttempts: List[CancelAttempt]
    polls: List[Poll]
    nextPollAt: NotRequired[str]
    deadlineAt: NotRequired[str]
    earlierSends: NotRequired[Literal["none", "may-have-acted", "unknown"]]


class OrderCancelledOutcome(TypedDict):
    kind: Literal["cancelled"]
    order: Order
    cancellation: NotRequired[CancellationRecord]


class OrderCancelFailedOutcome(TypedDict):
    kind: Literal["cancel-failed"]
    order: Order
    cancellation: CancellationRecord


class OrderCancelUnresolvedOutcome(TypedDict):
    kind: Literal["cancel-unresolved"]
    order: Order
    cancellation: CancellationRecord
    interrupted: NotRequired[bool]
    """Set when an operator cancelled the run before the order settled."""


class OrderQuotedOutcome(TypedDict):
    """Only a quote was asked for: nothing was sent."""

    kind: Literal["quoted"]
    order: Order
    quote: CancelFeeQuote


class OrderCancelRefusedOutcome(TypedDict):
    kind: Literal["cancel-refused"]
    order: Order
    cancellation: CancellationRecord
    errorType: str
    reason: str


class OrderCancelStoppedOutcome(TypedDict):
    """The fee before a send was above what was accepted: nothing more was sent; a person decides."""

    kind: Literal["cancel-stopped"]
    order: Order
    cancellation: CancellationRecord
    feeNow: Union[Money, None]
    reason: str


class OrderCheckedOutcome(TypedDict):
    kind: Literal["checked"]
    order: Order


class OrderChangedBySupplierOutcome(TypedDict):
    kind: Literal["changed-by-supplier"]
    order: NotRequired[Order]
    reason: str


class OrderNotCancellableOutcome(TypedDict):
    kind: Literal["not-cancellable"]
    order: NotRequired[Order]
    reason: str


class OrderCancelNotDoneOutcome(TypedDict):
    """A cancellation the system asked for (onCancelAfterBook, the sweep's orphans) could not be done: a person
    follows up."""

    kind: Literal["cancel-not-done"]
    origin: Literal["auto", "reconciliation"]
    order: NotRequired[Order]
    cancellation: NotRequired[CancellationRecord]
    reason: str


OrderOutcome = Union[
    OrderCancelledOutcome,
    OrderCancelFailedOutcome,
    OrderCancelUnresolvedOutcome,
    OrderQuotedOutcome,
    OrderCancelRefusedOutcome,
    OrderCancelStoppedOutcome,
    OrderCheckedOutcome,
    OrderChangedBySupplierOutcome,
    OrderNotCancellableOutcome,
    OrderCancelNotDoneOutcome,
]
"""How an order workflow run ends (schema/order-outcome.schema.json), a union on `kind`. A run does one piece of
work (a cancellation, a quote, a check)."""

ORDER_OUTCOME_TYPES: Dict[str, Any] = {
    "cancelled": OrderCancelledOutcome,
    "cancel-failed": OrderCancelFailedOutcome,
    "cancel-unresolved": OrderCancelUnresolvedOutcome,
    "quoted": OrderQuotedOutcome,
    "cancel-refused": OrderCancelRefusedOutcome,
    "cancel-stopped": OrderCancelStoppedOutcome,
    "checked": OrderCheckedOutcome,
    "changed-by-supplier": OrderChangedBySupplierOutcome,
    "not-cancellable": OrderNotCancellableOutcome,
    "cancel-not-done": OrderCancelNotDoneOutcome,
}


class OrderState(TypedDict):
    """The `orderState` query's answer (schema/order-state.schema.json)."""

    stage: Literal[
        "checking",
        "cancelling",
        "cancelled",
        "cancel-failed",
        "cancel-unresolved",
        "quoted",
        "cancel-refused",
        "cancel-stopped",
        "checked",
        "changed-by-supplier",
        "not-cancellable",
        "cancel-waiting",
        "cancel-not-done",
    ]
    customerReferenceNo: str
    supplier: NotRequired[str]
    """The supplier account the order is on, as its booking chose it (absent on a single-account worker)."""
    order: NotRequired[Order]
    """Absent until the run's first QueryOrders answered."""
    cancellation: NotRequired[CancellationRecord]
    outcome: NotRequired[OrderOutcome]
