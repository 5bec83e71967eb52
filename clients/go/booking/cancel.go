package booking

import (
	"context"
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/client"
)

const (
	// OrderWorkflowType is the workflow a confirmed booking hands its order to, open for cancellation until check-in.
	OrderWorkflowType = "orderWorkflow"
	// CancelBookingUpdate is the order workflow's update: Confirm false quotes the fee, Confirm true with it cancels.
	CancelBookingUpdate = "cancelBooking"
	// OrderStatusCancelled is the supplier's status of a cancelled order.
	OrderStatusCancelled = 3
)

// OrderWorkflowID is the workflow id of a confirmed booking's order.
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

// CancelBooking sends the cancelBooking update to the confirmed booking's order workflow and waits for its
// answer, like the TypeScript client's cancelBooking: Confirm false answers the fee that applies now; Confirm
// true with that fee sends Cancel and answers once the supplier took or refused it. The update is refused
// (an error) when the order is not confirmed, is being cancelled already, or the fee changed since the quote.
// The cancellation's end is the order workflow's result: AwaitOrderOutcome.
func CancelBooking(ctx context.Context, c client.Client, customerReferenceNo string, request CancelRequest) (CancelAnswer, error) {
	var answer CancelAnswer
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   OrderWorkflowID(customerReferenceNo),
		UpdateName:   CancelBookingUpdate,
		Args:         []interface{}{request},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return answer, err
	}
	err = handle.Get(ctx, &answer)
	return answer, err
}

// QuoteCancellation is the fee a cancellation costs now (CancelBooking with Confirm false): nothing is cancelled.
func QuoteCancellation(ctx context.Context, c client.Client, customerReferenceNo string) (CancelAnswer, error) {
	return CancelBooking(ctx, c, customerReferenceNo, CancelRequest{Confirm: false})
}

// ErrFeeOverLimit means CancelAtQuotedFee did not cancel: the quoted fee was over the caller's limit or unknown.
var ErrFeeOverLimit = errors.New("the cancellation fee is over the limit (or unknown): nothing was cancelled")

// CancelAtQuotedFee quotes, then cancels accepting exactly the quoted fee. With maxFee set, it cancels only
// when the fee is known, in maxFee's currency and at most its amount; otherwise it returns the quote and
// ErrFeeOverLimit.
func CancelAtQuotedFee(ctx context.Context, c client.Client, customerReferenceNo, reason string, maxFee *Money) (CancelAnswer, error) {
	quote, err := QuoteCancellation(ctx, c, customerReferenceNo)
	if err != nil {
		return quote, err
	}
	fee := quote.Quote.Fee
	if maxFee != nil && (fee == nil || fee.Currency != maxFee.Currency || fee.Amount > maxFee.Amount) {
		return quote, ErrFeeOverLimit
	}
	return CancelBooking(ctx, c, customerReferenceNo, CancelRequest{Confirm: true, AcceptedFee: fee, Reason: reason})
}

// AwaitOrderOutcome waits for the order workflow's result (schema/order-outcome.schema.json): its kind is
// cancelled, cancel-failed, cancel-unresolved, closed (check-in came) or failed. Returned as raw JSON, with
// Kind and the order's status read from it.
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

// OrderOutcome is how the order's life ended; Raw is the whole result as the workflow returned it.
type OrderOutcome struct {
	Kind  string          `json:"kind"`
	Order Order           `json:"order"`
	Raw   json.RawMessage `json:"-"`
}
