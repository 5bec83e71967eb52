// Package booking is the orchestrator's contract as a Go caller sees it: names, the JSON of the booking
// workflow's input and outcome, and a start helper with the rules the orchestrator's own client follows.
//
// The source of truth is the orchestrator's src/api/contract (JSON Schema in its schema/ folder); this
// package's tests check these types' JSON keys against schema/booking-request.schema.json and
// schema/booking-outcome.schema.json.
package booking

import "encoding/json"

const (
	// WorkflowType is the name to start: callers in other languages start the workflow by name.
	WorkflowType = "bookingWorkflow"
	// DefaultTaskQueue is the workers' task queue unless BOOKING_TASK_QUEUE names another.
	DefaultTaskQueue = "hotel-booking"
	// TaskQueueVariable overrides DefaultTaskQueue, for workers and callers alike.
	TaskQueueVariable = "BOOKING_TASK_QUEUE"
	// CustomerReferenceNoAttribute is the Keyword search attribute holding a booking's reference.
	CustomerReferenceNoAttribute = "CustomerReferenceNo"
	// BookingStageAttribute is the Keyword search attribute holding where a booking is now.
	BookingStageAttribute = "BookingStage"
)

// WorkflowID is the one workflow id of a booking; the workflow refuses any other for its reference.
func WorkflowID(customerReferenceNo string) string {
	return "booking:" + customerReferenceNo
}

// Money is an amount in a currency (ISO 4217 code).
type Money struct {
	Currency string  `json:"currency"`
	Amount   float64 `json:"amount"`
}

// Phone is the holder's phone; CountryNumber is the calling code (1, 44, ...), optional.
type Phone struct {
	CountryCode   string `json:"countryCode"`
	CountryNumber int    `json:"countryNumber,omitempty"`
	Number        string `json:"number"`
}

// Holder is the person the booking is for, who the hotel contacts.
type Holder struct {
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	Email     string `json:"email"`
	Phone     Phone  `json:"phone"`
}

// Guest is one traveller in one room (RoomIndex counts from 0).
type Guest struct {
	RoomIndex       int    `json:"roomIndex"`
	FirstName       string `json:"firstName"`
	LastName        string `json:"lastName"`
	NationalityCode string `json:"nationalityCode"`
	Age             int    `json:"age"`
	IsChild         bool   `json:"isChild"`
}

// PriceChangePolicy says what to do when the price at Book time is above ExpectedPrice; unset fields take
// the workflow's defaults (reject any rise; ask waits 900 s for an answer).
type PriceChangePolicy struct {
	MaxIncreasePercent     *float64 `json:"maxIncreasePercent,omitempty"`
	MaxIncreaseAmount      *float64 `json:"maxIncreaseAmount,omitempty"`
	OnExceeded             string   `json:"onExceeded,omitempty"` // "reject" or "ask"
	ApprovalTimeoutSeconds int      `json:"approvalTimeoutSeconds,omitempty"`
}

// Context holds headers sent to the supplier on this booking's calls; none is secret.
type Context struct {
	Currency string `json:"currency,omitempty"`
	Language string `json:"language,omitempty"`
	IP       string `json:"ip,omitempty"`
	// Test is the sandbox supplier's Test header, a scenario such as "confirmAfterMs=0": demos and tests only.
	Test string `json:"test,omitempty"`
}

// RecoveryPolicy is the QueryOrders schedule after an ambiguous Book; a zero field takes the default.
// The worker refuses values outside its floors and caps (Book never re-sent sooner than 10 minutes, at most
// 3 Book sends, ...), naming the field and its bound. Testing lifts them, for test workers only: a worker
// without RECOVERY_TESTING=on refuses a request that sets it.
type RecoveryPolicy struct {
	DelaysSeconds            []float64 `json:"delaysSeconds,omitempty"`
	RepeatEverySeconds       float64   `json:"repeatEverySeconds,omitempty"`
	RebookAfterSeconds       float64   `json:"rebookAfterSeconds,omitempty"`
	MaxBookAttempts          int       `json:"maxBookAttempts,omitempty"`
	DeadlineSeconds          float64   `json:"deadlineSeconds,omitempty"`
	ContinueAsNewAfterEvents int       `json:"continueAsNewAfterEvents,omitempty"`
	FeeChangeMarginSeconds   float64   `json:"feeChangeMarginSeconds,omitempty"`
	Testing                  bool      `json:"testing,omitempty"`
}

// Request is the workflow's input. CustomerReferenceNo is a UUID: the booking's key, keep it to retry with.
type Request struct {
	CustomerReferenceNo string             `json:"customerReferenceNo"`
	RatePkgID           string             `json:"ratePkgId"`
	Holder              Holder             `json:"holder"`
	Guests              []Guest            `json:"guests"`
	SessionID           string             `json:"sessionId,omitempty"`
	ExpectedPrice       *Money             `json:"expectedPrice,omitempty"`
	PriceChangePolicy   *PriceChangePolicy `json:"priceChangePolicy,omitempty"`
	Context             *Context           `json:"context,omitempty"`
	Recovery            *RecoveryPolicy    `json:"recovery,omitempty"`
	// OnCancelAfterBook: when the booking is confirmed after its caller cancelled it, "report" it (default),
	// "cancel" it, or "cancel-if-free".
	OnCancelAfterBook string `json:"onCancelAfterBook,omitempty"`
	// Supplier: the supplier account to book on (an id of the worker's SUPPLIER_ACCOUNTS_FILE); empty: the
	// partner's default. One the partner may not use is refused before anything is sent.
	Supplier string `json:"supplier,omitempty"`
}

// The kinds of Outcome: every way a booking ends, returned as a value (never a workflow failure).
const (
	KindConfirmed     = "confirmed"
	KindFailed        = "failed"
	KindUnavailable   = "unavailable"
	KindPriceRejected = "price-rejected"
	KindCancelled     = "cancelled"
	// KindUnresolved: still unknown at the deadline; a person must follow up with the references.
	KindUnresolved = "unresolved"
)

// OrderStatusConfirmed is the supplier's status of a confirmed order.
const OrderStatusConfirmed = 2

// Order is a supplier order as the workflow keeps it: references, status and price, no personal data.
type Order struct {
	CustomerReferenceNo string `json:"customerReferenceNo"`
	Status              int    `json:"status"`
	StatusRemark        string `json:"statusRemark,omitempty"`
	PlatformReferenceNo string `json:"platformReferenceNo,omitempty"`
	SupplierReferenceNo string `json:"supplierReferenceNo,omitempty"`
	HotelConfirmNo      string `json:"hotelConfirmNo,omitempty"`
	HotelID             string `json:"hotelId,omitempty"`
	CheckIn             string `json:"checkIn,omitempty"`
	CheckOut            string `json:"checkOut,omitempty"`
	Price               *Money `json:"price,omitempty"`
	// CancelPolicy is each room's cancel policy: free before RefundableUntil, then the Fees in order.
	CancelPolicy []RoomCancelPolicy `json:"cancelPolicy,omitempty"`
}

// RoomCancelPolicy is one room's cancel policy.
type RoomCancelPolicy struct {
	RefundableUntil string      `json:"refundableUntil,omitempty"`
	Fees            []CancelFee `json:"fees"`
}

// CancelFee is the fee that applies until Until (ISO time).
type CancelFee struct {
	Until string `json:"until"`
	Fee   Money  `json:"fee"`
}

// BookAttempt is one Book call of the booking.
type BookAttempt struct {
	At     string `json:"at"`
	Result string `json:"result"` // "order", "refused" (a re-send refused before any work), "rejected" or "ambiguous"
	Status *int   `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Poll is one QueryOrders poll of the recovery loop.
type Poll struct {
	At               string  `json:"at"`
	SinceBookSeconds float64 `json:"sinceBookSeconds"`
	Trigger          string  `json:"trigger"` // "schedule", "supplier-hint" or "request"
	Result           string  `json:"result"`  // "found", "not-found" or "error"
	Status           *int    `json:"status,omitempty"`
	Error            string  `json:"error,omitempty"`
}

// Outcome is the workflow's result. Kind says which other fields are set: Order and CancelRequested
// (confirmed; failed may have an Order), Reason and ErrorType (failed), ExpectedPrice, CurrentPrice and
// Reason (price-rejected), the references, LastStatus, BookAttempts and Polls (unresolved). Candidates
// (unavailable, price-rejected): what the supplier offers instead, each bookable as a new booking under a new reference.
type Outcome struct {
	Kind                string        `json:"kind"`
	Order               *Order        `json:"order,omitempty"`
	CancelRequested     bool          `json:"cancelRequested,omitempty"`
	Reason              string        `json:"reason,omitempty"`
	ErrorType           string        `json:"errorType,omitempty"`
	ExpectedPrice       *Money        `json:"expectedPrice,omitempty"`
	CurrentPrice        *Money        `json:"currentPrice,omitempty"`
	CustomerReferenceNo string        `json:"customerReferenceNo,omitempty"`
	SessionID           string        `json:"sessionId,omitempty"`
	LastStatus          *int          `json:"lastStatus,omitempty"`
	BookAttempts        []BookAttempt `json:"bookAttempts,omitempty"`
	Polls               []Poll        `json:"polls,omitempty"`
	Candidates          []Candidate   `json:"candidates,omitempty"`
}

// Candidate is a package another supplier offers in place of one unavailable or refused for its price (CheckAvail's
// fallback candidates). Supplier is the supplier's identifier as it was sent: a number or a string.
type Candidate struct {
	RatePkgID string          `json:"ratePkgId"`
	Supplier  json.RawMessage `json:"supplier,omitempty"`
	Price     *Money          `json:"price,omitempty"`
	Name      string          `json:"name,omitempty"`
}
