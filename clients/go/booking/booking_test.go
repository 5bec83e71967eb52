package booking

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/mocks"
)

// schema is the part of a JSON Schema these checks read.
type schema struct {
	Type       string             `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Items      *schema            `json:"items"`
	AnyOf      []*schema          `json:"anyOf"`
	Pattern    string             `json:"pattern"`
	Const      string             `json:"const"`
	// Description: the root's says how a caller sends it (names, policies).
	Description string `json:"description"`
}

func loadSchema(t *testing.T, name string) *schema {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	var s schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// merged is one object schema with the properties of every variant of a union (Outcome is flat in Go).
func merged(s *schema) *schema {
	if len(s.AnyOf) == 0 {
		return s
	}
	out := &schema{Type: "object", Properties: map[string]*schema{}}
	for _, variant := range s.AnyOf {
		for name, p := range variant.Properties {
			if known, ok := out.Properties[name]; ok && known.Properties != nil {
				continue
			}
			out.Properties[name] = p
		}
	}
	return out
}

// compare checks a Go type's JSON keys against an object schema, both ways and all the way down: every
// property has a field, every field a property, and a required property is never left out by omitempty.
func compare(t *testing.T, where string, typ reflect.Type, s *schema, checkRequired bool) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
		if s.Items != nil {
			s = s.Items
		}
	}
	if typ.Kind() != reflect.Struct {
		return
	}
	s = merged(s)
	required := map[string]bool{}
	for _, name := range s.Required {
		required[name] = true
	}
	fields := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue // not JSON (OrderOutcome.Raw)
		}
		fields[name] = true
		p, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s.%s: the schema has no property %q", where, f.Name, name)
			continue
		}
		if checkRequired && required[name] && strings.Contains(opts, "omitempty") {
			t.Errorf("%s.%s: %q is required, so it must not be omitempty", where, f.Name, name)
		}
		if checkRequired && !required[name] && !strings.Contains(opts, "omitempty") {
			t.Errorf("%s.%s: %q is optional, so it should be omitempty", where, f.Name, name)
		}
		compare(t, where+"."+name, f.Type, p, checkRequired)
	}
	var missing []string
	for name := range s.Properties {
		if !fields[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if missing != nil {
		t.Errorf("%s: no field for %v", where, missing)
	}
}

func TestRequestMatchesTheSchema(t *testing.T) {
	s := loadSchema(t, "booking-request.schema.json")
	compare(t, "Request", reflect.TypeFor[Request](), s, true)
	if got := s.Properties["customerReferenceNo"].Pattern; referencePattern.String() != got {
		t.Errorf("reference pattern differs from the schema's:\n  %s\n  %s", referencePattern, got)
	}
}

func TestOutcomeMatchesTheSchema(t *testing.T) {
	s := loadSchema(t, "booking-outcome.schema.json")
	// Outcome flattens the union, so a field may be required in one kind and absent in another.
	compare(t, "Outcome", reflect.TypeFor[Outcome](), s, false)
	var kinds []string
	for _, variant := range s.AnyOf {
		kinds = append(kinds, variant.Properties["kind"].Const)
	}
	want := []string{KindConfirmed, KindFailed, KindUnavailable, KindPriceRejected, KindCancelled, KindUnresolved}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("outcome kinds %v, this package knows %v", kinds, want)
	}
}

func demo(ref string) Request {
	return Request{
		CustomerReferenceNo: ref,
		RatePkgID:           "pkg-demo-deluxe",
		Holder:              Holder{FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com", Phone: Phone{CountryCode: "GB", Number: "2079460000"}},
		Guests:              []Guest{{FirstName: "Ada", LastName: "Lovelace", NationalityCode: "GB", Age: 36}},
	}
}

func TestRequestJSONKeepsRequiredZeroValues(t *testing.T) {
	raw, _ := json.Marshal(demo("3f1c5a52-8a4e-4e0b-9a54-5c4a4f6c1e11"))
	var back map[string]any
	_ = json.Unmarshal(raw, &back)
	guest := back["guests"].([]any)[0].(map[string]any)
	for _, key := range []string{"roomIndex", "isChild", "age"} {
		if _, ok := guest[key]; !ok {
			t.Errorf("guest %s is required even at its zero value: %s", key, raw)
		}
	}
	for _, key := range []string{"sessionId", "expectedPrice", "context", "recovery", "priceChangePolicy"} {
		if _, ok := back[key]; ok {
			t.Errorf("unset %s must be left out, not sent empty: %s", key, raw)
		}
	}
}

func TestStartRefusesARequestItCannotKey(t *testing.T) {
	c := &mocks.Client{} // no call expected: nothing may be started
	request := demo("not-a-uuid")
	request.RatePkgID = ""
	request.Guests = nil
	_, err := Start(context.Background(), c, request, "q")
	var invalid *InvalidRequestError
	if !errors.As(err, &invalid) || len(invalid.Issues) != 3 {
		t.Fatalf("want three issues, got %v", err)
	}
	if strings.Contains(err.Error(), "not-a-uuid") {
		t.Errorf("issues name fields, not values: %v", err)
	}
	c.AssertExpectations(t)
}

func TestStartByNameWithTheBookingsRules(t *testing.T) {
	t.Setenv(TaskQueueVariable, "from-env")
	ref := NewReference()
	c := &mocks.Client{}
	run := &mocks.WorkflowRun{}
	var options client.StartWorkflowOptions
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, WorkflowType, demo(ref)).
		Run(func(args mock.Arguments) { options = args.Get(1).(client.StartWorkflowOptions) }).
		Return(run, nil).Once()
	got, err := Start(context.Background(), c, demo(ref), "")
	if err != nil || got != run {
		t.Fatalf("Start: %v %v", got, err)
	}
	if options.ID != "booking:"+ref || options.TaskQueue != "from-env" {
		t.Errorf("id %q on %q", options.ID, options.TaskQueue)
	}
	if options.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING ||
		options.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE {
		t.Errorf("policies %v %v", options.WorkflowIDConflictPolicy, options.WorkflowIDReusePolicy)
	}
	if v, ok := options.TypedSearchAttributes.GetKeyword(customerReferenceNoKey); !ok || v != ref {
		t.Errorf("search attribute CustomerReferenceNo = %q", v)
	}
	if options.StaticSummary != "Booking pkg-demo-deluxe · ref "+ref || strings.Contains(options.StaticSummary, "Lovelace") {
		t.Errorf("summary %q: references only", options.StaticSummary)
	}
	c.AssertExpectations(t)
}

func TestStartAfterTheBookingEndedAnswersWithItsWorkflow(t *testing.T) {
	ref := NewReference()
	c := &mocks.Client{}
	ended := &mocks.WorkflowRun{}
	c.On("ExecuteWorkflow", mock.Anything, mock.Anything, WorkflowType, mock.Anything).
		Return(nil, serviceerror.NewWorkflowExecutionAlreadyStarted("closed", "", "")).Once()
	c.On("GetWorkflow", mock.Anything, "booking:"+ref, "").Return(ended).Once()
	got, err := Start(context.Background(), c, demo(ref), "q")
	if err != nil || got != ended {
		t.Fatalf("want the ended booking's run, got %v %v", got, err)
	}
	c.AssertExpectations(t)
}

func TestCancelUpdateMatchesTheSchema(t *testing.T) {
	// Not checkRequired: a nullable Money is a union whose merged schema lists no required keys.
	compare(t, "CancelRequest", reflect.TypeFor[CancelRequest](), loadSchema(t, "cancel-booking-request.schema.json"), false)
	s := loadSchema(t, "cancel-booking-answer.schema.json")
	// CancelAnswer flattens the union, like Outcome.
	compare(t, "CancelAnswer", reflect.TypeFor[CancelAnswer](), s, false)
	var kinds []string
	for _, variant := range s.AnyOf {
		kinds = append(kinds, variant.Properties["kind"].Const)
		compare(t, "CancelFeeQuote", reflect.TypeFor[CancelFeeQuote](), variant.Properties["quote"], false)
	}
	if want := []string{CancelKindQuote, CancelKindRequested, CancelKindRefused}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("cancel answer kinds %v, this package knows %v", kinds, want)
	}
	// The start input CancelBooking sends with the update, and how the schema says to send it.
	compare(t, "OrderWorkflowInput", reflect.TypeFor[OrderWorkflowInput](), loadSchema(t, "order-workflow-start.schema.json"), true)
	how := loadSchema(t, "cancel-booking-request.schema.json").Description
	for _, words := range []string{
		"update of workflow type " + OrderWorkflowType + ", sent with Update-With-Start",
		"task queue " + DefaultTaskQueue,
		"conflict policy USE_EXISTING",
		"reuse policy ALLOW_DUPLICATE",
	} {
		if !strings.Contains(how, words) {
			t.Errorf("cancel-booking-request.schema.json's description does not say %q", words)
		}
	}
	if OrderWorkflowID("r-1") != "order:r-1" {
		t.Errorf("order workflow id %q", OrderWorkflowID("r-1"))
	}
}

func TestOrderOutcomeAndStateMatchTheSchema(t *testing.T) {
	s := loadSchema(t, "order-outcome.schema.json")
	// OrderOutcome flattens the union, like Outcome.
	compare(t, "OrderOutcome", reflect.TypeFor[OrderOutcome](), s, false)
	var kinds []string
	for _, variant := range s.AnyOf {
		kinds = append(kinds, variant.Properties["kind"].Const)
		if record, ok := variant.Properties["cancellation"]; ok {
			// Not checkRequired: a nullable Money and the accepted union merge to schemas with no required keys.
			compare(t, "CancellationRecord", reflect.TypeFor[CancellationRecord](), record, false)
		}
	}
	want := []string{
		OrderKindCancelled, OrderKindCancelFailed, OrderKindCancelUnresolved,
		OrderKindQuoted, OrderKindCancelRefused, OrderKindCancelStopped, OrderKindChecked,
		OrderKindChangedBySupplier, OrderKindNotCancellable, OrderKindCancelNotDone,
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("order outcome kinds %v, this package knows %v", kinds, want)
	}
	state := loadSchema(t, "order-state.schema.json")
	compare(t, "OrderState", reflect.TypeFor[OrderState](), state, false)
	var stages []string
	raw, _ := os.ReadFile(filepath.Join("..", "..", "..", "schema", "order-state.schema.json"))
	var withEnum struct {
		Properties struct {
			Stage struct {
				Enum []string `json:"enum"`
			} `json:"stage"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &withEnum); err != nil {
		t.Fatal(err)
	}
	stages = withEnum.Properties.Stage.Enum
	if !reflect.DeepEqual(stages, OrderStages) {
		t.Errorf("order stages %v, this package knows %v", stages, OrderStages)
	}
}

func TestCancelBookingIsAnUpdateWithStart(t *testing.T) {
	t.Setenv(TaskQueueVariable, "from-env")
	ref := NewReference()
	c := &mocks.Client{}
	op := &startOperation{}
	handle := &mocks.WorkflowUpdateHandle{}
	var start client.StartWorkflowOptions
	var update client.UpdateWithStartWorkflowOptions
	c.On("NewWithStartWorkflowOperation", mock.Anything, OrderWorkflowType, OrderWorkflowInput{CustomerReferenceNo: ref}).
		Run(func(args mock.Arguments) { start = args.Get(0).(client.StartWorkflowOptions) }).
		Return(op).Once()
	c.On("UpdateWithStartWorkflow", mock.Anything, mock.Anything).
		Run(func(args mock.Arguments) { update = args.Get(1).(client.UpdateWithStartWorkflowOptions) }).
		Return(handle, nil).Once()
	handle.On("Get", mock.Anything, mock.Anything).
		Run(func(args mock.Arguments) { *args.Get(1).(*CancelAnswer) = CancelAnswer{Kind: CancelKindQuote} }).
		Return(nil).Once()
	answer, err := QuoteCancellation(context.Background(), c, ref, "")
	if err != nil || answer.Kind != CancelKindQuote {
		t.Fatalf("QuoteCancellation: %v %v", answer, err)
	}
	if start.ID != "order:"+ref || start.TaskQueue != "from-env" {
		t.Errorf("id %q on %q", start.ID, start.TaskQueue)
	}
	if start.WorkflowIDConflictPolicy != enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING ||
		start.WorkflowIDReusePolicy != enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE {
		t.Errorf("policies %v %v", start.WorkflowIDConflictPolicy, start.WorkflowIDReusePolicy)
	}
	if v, ok := start.TypedSearchAttributes.GetKeyword(customerReferenceNoKey); !ok || v != ref {
		t.Errorf("search attribute CustomerReferenceNo = %q", v)
	}
	if start.StaticSummary != "Order · ref "+ref {
		t.Errorf("summary %q", start.StaticSummary)
	}
	if update.StartWorkflowOperation != client.WithStartWorkflowOperation(op) || update.UpdateOptions.UpdateName != CancelBookingUpdate ||
		update.UpdateOptions.WorkflowID != "order:"+ref ||
		!reflect.DeepEqual(update.UpdateOptions.Args, []interface{}{CancelRequest{Confirm: false}}) ||
		update.UpdateOptions.WaitForStage != client.WorkflowUpdateStageCompleted {
		t.Errorf("update options %+v", update)
	}
	c.AssertExpectations(t)
	handle.AssertExpectations(t)
}

// startOperation stands for the SDK's start operation (it has no mock).
type startOperation struct{}

func (*startOperation) Get(context.Context) (client.WorkflowRun, error) { return nil, nil }
