package booking

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

const (
	// OrderWorkflowType is a booking's order workflow, run on demand: each CancelBooking starts a run (or joins
	// the one in progress) that ends when its piece of work is done.
	OrderWorkflowType = "orderWorkflow"
	// CancelBookingUpdate is the order workflow's update: Confirm false quotes the fee, Confirm true with it cancels.
	CancelBookingUpdate = "cancelBooking"
	// OrderStatusCancelled is the supplier's status of a cancelled order.
	OrderStatusCancelled = 3
)

// OrderWorkflowID is the workflow id of a booking's order runs (one id, a run per request).
func OrderWorkflowID(customerReferenceNo string) string {
	return "order:" + customerReferenceNo
}

// CancelRequest is the cancelBooking update's argument (schema/cancel-booking-request.schema.json).
// AcceptedFee must be the fee of the quote (nil: the quote's fee was unknown).
type CancelRequest struct {
	Confirm     bool   `json:"confirm"`
	AcceptedFee *Money `json:"acceptedFee,omitempty"`
	Reason      string `json:"reason,omitempty"`
	RequestedBy string `json:"requestedBy,omitempty"`
}

// CancelFeeQuote is the fee a cancellation costs now: Basis "free", "policy" or "unknown" (Fee nil).
type CancelFeeQuote struct {
	Fee       *Money `json:"fee"`
	Basis     string `json:"basis"`
	ChangesAt string `json:"changesAt,omitempty"`
}

// The kinds of a CancelAnswer.
const (
	CancelKindQuote     = "quote"
	CancelKindRequested = "cancel-requested"
	CancelKindRefused   = "cancel-refused"
)

// CancelAnswer is the update's answer (schema/cancel-booking-answer.schema.json): a quote; Cancel taken by the
// supplier (ServiceFee when it said, Ambiguous when its answer was unclear); or refused (ErrorType, Reason).
type CancelAnswer struct {
	Kind       string         `json:"kind"`
	Quote      CancelFeeQuote `json:"quote"`
	ServiceFee *Money         `json:"serviceFee,omitempty"`
	Ambiguous  bool           `json:"ambiguous,omitempty"`
	ErrorType  string         `json:"errorType,omitempty"`
	Reason     string         `json:"reason,omitempty"`
}

// OrderWorkflowInput is the order workflow's start argument when a cancel request starts a run
// (schema/order-workflow-start.schema.json; the workflow's other input fields are for its own starts).
type OrderWorkflowInput struct {
	CustomerReferenceNo string `json:"customerReferenceNo"`
}

// CancelBooking sends the cancelBooking update to the booking's order workflow and waits for its answer, like
// the TypeScript client's cancelBooking. The order workflow runs on demand, so this is an Update-With-Start: one
// call starts an order run (or joins the one in progress) on taskQueue (else BOOKING_TASK_QUEUE, else
// hotel-booking) and sends the update. Confirm false answers the fee that applies now; Confirm true with that fee
// sends Cancel and answers once the supplier took or refused it. The update fails (an error) when the order is
// not confirmed, missing, or the fee changed since the quote. The cancellation's end: AwaitOrderOutcome.
//
// When the server asks to retry (ServerAskedToRetry), the call is made again with the same update id, so an update
// the server did apply is answered, not applied twice.
func CancelBooking(ctx context.Context, c client.Client, customerReferenceNo string, request CancelRequest, taskQueue string) (CancelAnswer, error) {
	if taskQueue == "" {
		taskQueue = getenv(TaskQueueVariable, DefaultTaskQueue)
	}
	updateID := uuid.NewString()
	return retriedWhenAsked(ctx, func() (CancelAnswer, error) {
		var answer CancelAnswer
		// A start operation serves one call only: each attempt has its own, the update id is the same.
		start := c.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
			ID:        OrderWorkflowID(customerReferenceNo),
			TaskQueue: taskQueue,
			// Joins a run in progress; after a run ended, the next request starts a new one under the same id.
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes:    temporal.NewSearchAttributes(customerReferenceNoKey.ValueSet(customerReferenceNo)),
			StaticSummary:            "Order · ref " + customerReferenceNo,
		}, OrderWorkflowType, OrderWorkflowInput{CustomerReferenceNo: customerReferenceNo})
		handle, err := c.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: start,
			UpdateOptions: client.UpdateWorkflowOptions{
				UpdateID:     updateID,
				WorkflowID:   OrderWorkflowID(customerReferenceNo),
				UpdateName:   CancelBookingUpdate,
				Args:         []interface{}{request},
				WaitForStage: client.WorkflowUpdateStageCompleted,
			},
		})
		if err != nil {
			return answer, err
		}
		err = handle.Get(ctx, &answer)
		return answer, err
	})
}

// QuoteCancellation is the fee a cancellation costs now (CancelBooking with Confirm false): nothing is cancelled.
func QuoteCancellation(ctx context.Context, c client.Client, customerReferenceNo, taskQueue string) (CancelAnswer, error) {
	return CancelBooking(ctx, c, customerReferenceNo, CancelRequest{Confirm: false}, taskQueue)
}

// ErrFeeOverLimit means CancelAtQuotedFee did not cancel: the quoted fee was over the caller's limit or unknown.
var ErrFeeOverLimit = errors.New("the cancellation fee is over the limit (or unknown): nothing was cancelled")

// CancelAtQuotedFee quotes, then cancels accepting exactly the quoted fee. With maxFee set, it cancels only
// when the fee is known, in maxFee's currency and at most its amount; otherwise it returns the quote and
// ErrFeeOverLimit.
func CancelAtQuotedFee(ctx context.Context, c client.Client, customerReferenceNo, reason string, maxFee *Money, taskQueue string) (CancelAnswer, error) {
	quote, err := QuoteCancellation(ctx, c, customerReferenceNo, taskQueue)
	if err != nil {
		return quote, err
	}
	fee := quote.Quote.Fee
	if maxFee != nil && (fee == nil || fee.Currency != maxFee.Currency || fee.Amount > maxFee.Amount) {
		return quote, ErrFeeOverLimit
	}
	return CancelBooking(ctx, c, customerReferenceNo, CancelRequest{Confirm: true, AcceptedFee: fee, Reason: reason}, taskQueue)
}

// AwaitOrderOutcome waits for the latest order run's result (schema/order-outcome.schema.json): after a
// cancellation cancelled, cancel-failed, cancel-unresolved, cancel-refused or cancel-stopped; quoted after a quote
// only. Raw keeps the whole result as the workflow returned it.
func AwaitOrderOutcome(ctx context.Context, c client.Client, customerReferenceNo string) (OrderOutcome, error) {
	var raw json.RawMessage
	if err := c.GetWorkflow(ctx, OrderWorkflowID(customerReferenceNo), "").Get(ctx, &raw); err != nil {
		return OrderOutcome{}, err
	}
	var outcome OrderOutcome
	err := json.Unmarshal(raw, &outcome)
	outcome.Raw = raw
	return outcome, err
}

// The kinds of an OrderOutcome.
const (
	OrderKindCancelled         = "cancelled"
	OrderKindCancelFailed      = "cancel-failed"
	OrderKindCancelUnresolved  = "cancel-unresolved"
	OrderKindQuoted            = "quoted"
	OrderKindCancelRefused     = "cancel-refused"
	OrderKindCancelStopped     = "cancel-stopped"
	OrderKindChecked           = "checked"
	OrderKindChangedBySupplier = "changed-by-supplier"
	OrderKindNotCancellable    = "not-cancellable"
	OrderKindCancelNotDone     = "cancel-not-done"
)

// OrderOutcome is how an order run ended, the union flattened: Order (absent only for changed-by-supplier and
// not-cancellable), Cancellation (the cancel kinds), Interrupted (cancel-unresolved, an operator cancelled the
// run), Quote (quoted), ErrorType and Reason (cancel-refused; Reason also cancel-stopped, changed-by-supplier,
// not-cancellable, cancel-not-done), FeeNow (cancel-stopped), Origin (cancel-not-done: "auto" or "reconciliation").
// Raw is the whole result as the workflow returned it.
type OrderOutcome struct {
	Kind         string              `json:"kind"`
	Order        *Order              `json:"order,omitempty"`
	Cancellation *CancellationRecord `json:"cancellation,omitempty"`
	Interrupted  bool                `json:"interrupted,omitempty"`
	Quote        *CancelFeeQuote     `json:"quote,omitempty"`
	ErrorType    string              `json:"errorType,omitempty"`
	Reason       string              `json:"reason,omitempty"`
	FeeNow       *Money              `json:"feeNow,omitempty"`
	Origin       string              `json:"origin,omitempty"`
	Raw          json.RawMessage     `json:"-"`
}

// CancellationRecord is a cancellation in progress or done. Origin: "caller", "auto" or "reconciliation".
type CancellationRecord struct {
	RequestedAt    string               `json:"requestedAt"`
	Reason         string               `json:"reason"`
	RequestedBy    string               `json:"requestedBy,omitempty"`
	Origin         string               `json:"origin"`
	Quote          CancelFeeQuote       `json:"quote"`
	Accepted       CancellationAccepted `json:"accepted"`
	ServiceFee     *Money               `json:"serviceFee,omitempty"`
	CancelAttempts []CancelAttempt      `json:"cancelAttempts"`
	Polls          []Poll               `json:"polls"`
	NextPollAt     string               `json:"nextPollAt,omitempty"`
	DeadlineAt     string               `json:"deadlineAt,omitempty"`
	// EarlierSends, read when the run's first Cancel was refused: "none", "may-have-acted" or "unknown".
	EarlierSends string `json:"earlierSends,omitempty"`
}

// CancellationAccepted is what a cancellation accepted, checked before every send: Kind "fee" (at most Fee; nil:
// an unknown fee was accepted), "free" (only while free) or "any".
type CancellationAccepted struct {
	Kind string `json:"kind"`
	Fee  *Money `json:"fee,omitempty"`
}

// CancelAttempt is one Cancel send. Result: "accepted", "refused" (never reached the supplier), "rejected"
// (refused in words proving nothing was done), "ambiguous" (may have acted) or "not-sent". Quote: the fee quoted
// just before the send.
type CancelAttempt struct {
	At     string          `json:"at"`
	Result string          `json:"result"`
	Error  string          `json:"error,omitempty"`
	Quote  *CancelFeeQuote `json:"quote,omitempty"`
}

// OrderState is the orderState query's answer (schema/order-state.schema.json). Order is absent until the run's
// first QueryOrders answered.
type OrderState struct {
	Stage               string `json:"stage"`
	CustomerReferenceNo string `json:"customerReferenceNo"`
	// Supplier: the supplier account the order is on, as its booking chose it (empty on a single-account worker).
	Supplier     string              `json:"supplier,omitempty"`
	Order        *Order              `json:"order,omitempty"`
	Cancellation *CancellationRecord `json:"cancellation,omitempty"`
	Outcome      *OrderOutcome       `json:"outcome,omitempty"`
}

// OrderStages are the values of OrderState.Stage.
var OrderStages = []string{
	"checking", "cancelling", "cancelled", "cancel-failed", "cancel-unresolved",
	"quoted", "cancel-refused", "cancel-stopped", "checked", "changed-by-supplier", "not-cancellable",
	"cancel-waiting", "cancel-not-done",
}
