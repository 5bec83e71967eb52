package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	ref        = "REF-1"
	wfService  = workflowServicePrefix
	adminSvc   = adminServicePrefix
	bookingID  = bookingIDPrefix + ref
	orderID    = orderIDPrefix + ref
	otherQueue = "someone-elses-queue"
)

// keyword: a search attribute's value as the SDKs encode a Keyword.
func keyword(value string) *commonpb.Payload {
	return &commonpb.Payload{
		Metadata: map[string][]byte{"encoding": []byte("json/plain"), "type": []byte("Keyword")},
		Data:     []byte(fmt.Sprintf("%q", value)),
	}
}

func attributes(pairs ...string) *commonpb.SearchAttributes {
	fields := map[string]*commonpb.Payload{}
	for i := 0; i < len(pairs); i += 2 {
		fields[pairs[i]] = keyword(pairs[i+1])
	}
	return &commonpb.SearchAttributes{IndexedFields: fields}
}

// bookingStart: what src/api/client startBooking sends (with the OpenTelemetry interceptor's header).
func bookingStart(change func(*workflowservice.StartWorkflowExecutionRequest)) *workflowservice.StartWorkflowExecutionRequest {
	r := &workflowservice.StartWorkflowExecutionRequest{
		Namespace:                "default",
		WorkflowId:               bookingID,
		WorkflowType:             &commonpb.WorkflowType{Name: bookingWorkflowType},
		TaskQueue:                &taskqueuepb.TaskQueue{Name: defaultBookingTaskQueue},
		WorkflowIdConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIdReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		SearchAttributes:         attributes(customerReferenceNoAttribute, ref, bookingStageAttribute, firstBookingStage),
		Header:                   &commonpb.Header{Fields: map[string]*commonpb.Payload{"_tracer-data": keyword("{}")}},
	}
	if change != nil {
		change(r)
	}
	return r
}

// orderStart: the order run's start of cancelBooking's Update-With-Start, the worker's start, the receiver's check.
func orderStart(change func(*workflowservice.StartWorkflowExecutionRequest)) *workflowservice.StartWorkflowExecutionRequest {
	r := &workflowservice.StartWorkflowExecutionRequest{
		WorkflowId:               orderID,
		WorkflowType:             &commonpb.WorkflowType{Name: orderWorkflowType},
		TaskQueue:                &taskqueuepb.TaskQueue{Name: defaultBookingTaskQueue},
		WorkflowIdConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIdReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		SearchAttributes:         attributes(customerReferenceNoAttribute, ref),
	}
	if change != nil {
		change(r)
	}
	return r
}

func cancelWithStartOf(start *workflowservice.StartWorkflowExecutionRequest) *workflowservice.ExecuteMultiOperationRequest {
	return &workflowservice.ExecuteMultiOperationRequest{Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
		{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: start}},
		{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: &workflowservice.UpdateWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: start.GetWorkflowId()},
			Request:           &updatepb.Request{Input: &updatepb.Input{Name: cancelBookingUpdate}},
		}}},
	}}
}

func checkOrderStart(change func(*workflowservice.SignalWithStartWorkflowExecutionRequest)) *workflowservice.SignalWithStartWorkflowExecutionRequest {
	r := &workflowservice.SignalWithStartWorkflowExecutionRequest{
		WorkflowId:            orderID,
		WorkflowType:          &commonpb.WorkflowType{Name: orderWorkflowType},
		TaskQueue:             &taskqueuepb.TaskQueue{Name: defaultBookingTaskQueue},
		WorkflowIdReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		SearchAttributes:      attributes(customerReferenceNoAttribute, ref),
		SignalName:            checkOrderSignal,
	}
	if change != nil {
		change(r)
	}
	return r
}

func seconds(n int64) *durationpb.Duration { return durationpb.New(time.Duration(n) * time.Second) }

func TestDecide(t *testing.T) {
	cases := []struct {
		name    string
		id      identity
		api     string
		request any
		allowed bool
		reason  string // a part of the refusal's reason
	}{
		// What our clients send must pass.
		{"TypeScript client's booking start", caller, "StartWorkflowExecution", bookingStart(nil), true, ""},
		{"Go client's booking start (zero durations, an empty header)", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowExecutionTimeout, r.WorkflowRunTimeout, r.WorkflowTaskTimeout = seconds(0), seconds(0), seconds(0)
			r.Header = &commonpb.Header{Fields: map[string]*commonpb.Payload{}}
			r.SearchAttributes = attributes(customerReferenceNoAttribute, ref)
		}), true, ""},
		{"cancelBooking's Update-With-Start", caller, "ExecuteMultiOperation", cancelWithStartOf(orderStart(nil)), true, ""},
		{"the receiver's order check", receiver, "SignalWithStartWorkflowExecution", checkOrderStart(nil), true, ""},
		{"the worker's order start (eager)", worker, "StartWorkflowExecution", orderStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.RequestEagerExecution = true
		}), true, ""},
		{"the worker's autoCancel", worker, "SignalWithStartWorkflowExecution", checkOrderStart(func(r *workflowservice.SignalWithStartWorkflowExecutionRequest) {
			r.SignalName = autoCancelSignal
		}), true, ""},

		// Conflict and reuse policies.
		{"a caller's TERMINATE_EXISTING", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		}), false, "TERMINATE_EXISTING"},
		{"a caller's TERMINATE_EXISTING in Update-With-Start", caller, "ExecuteMultiOperation", cancelWithStartOf(orderStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		})), false, "TERMINATE_EXISTING"},
		{"the receiver's TERMINATE_EXISTING", receiver, "SignalWithStartWorkflowExecution", checkOrderStart(func(r *workflowservice.SignalWithStartWorkflowExecutionRequest) {
			r.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		}), false, "TERMINATE_EXISTING"},
		{"a worker's TERMINATE_EXISTING", worker, "StartWorkflowExecution", orderStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		}), false, "TERMINATE_EXISTING"},
		{"a caller's TERMINATE_IF_RUNNING", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING
		}), false, "TERMINATE_IF_RUNNING"},
		{"an operator's TERMINATE_EXISTING", operator, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
		}), true, ""},

		// Timeouts and retries.
		{"a caller's execution timeout", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowExecutionTimeout = seconds(20)
		}), false, "timeout"},
		{"a caller's run timeout in Update-With-Start", caller, "ExecuteMultiOperation", cancelWithStartOf(orderStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowRunTimeout = seconds(20)
		})), false, "timeout"},
		{"a caller's task timeout, even the server's default", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowTaskTimeout = seconds(10)
		}), false, "timeout"},
		{"the receiver's execution timeout", receiver, "SignalWithStartWorkflowExecution", checkOrderStart(func(r *workflowservice.SignalWithStartWorkflowExecutionRequest) {
			r.WorkflowExecutionTimeout = seconds(20)
		}), false, "timeout"},
		{"a caller's retry policy", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.RetryPolicy = &commonpb.RetryPolicy{MaximumAttempts: 3}
		}), false, "retry policy"},
		{"the receiver's retry policy", receiver, "SignalWithStartWorkflowExecution", checkOrderStart(func(r *workflowservice.SignalWithStartWorkflowExecutionRequest) {
			r.RetryPolicy = &commonpb.RetryPolicy{}
		}), false, "retry policy"},
		{"a caller's start delay", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowStartDelay = seconds(60)
		}), false, "start delay"},
		{"an operator's execution timeout", operator, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.WorkflowExecutionTimeout = seconds(20)
		}), true, ""},

		// Task queue, search attributes, memo, headers.
		{"a caller's start on another task queue", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.TaskQueue = &taskqueuepb.TaskQueue{Name: otherQueue}
		}), false, "task queue"},
		{"a caller's start on the QueryOrders queue", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.TaskQueue = &taskqueuepb.TaskQueue{Name: defaultBookingTaskQueue + "-query-orders"}
		}), false, "task queue"},
		{"the receiver's check on another task queue", receiver, "SignalWithStartWorkflowExecution", checkOrderStart(func(r *workflowservice.SignalWithStartWorkflowExecutionRequest) {
			r.TaskQueue = &taskqueuepb.TaskQueue{Name: otherQueue}
		}), false, "task queue"},
		{"a caller's later BookingStage", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.SearchAttributes = attributes(customerReferenceNoAttribute, ref, bookingStageAttribute, "confirmed")
		}), false, "BookingStage"},
		{"a BookingStage on an order run", caller, "ExecuteMultiOperation", cancelWithStartOf(orderStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.SearchAttributes = attributes(customerReferenceNoAttribute, ref, bookingStageAttribute, firstBookingStage)
		})), false, "BookingStage"},
		{"another reference's CustomerReferenceNo", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.SearchAttributes = attributes(customerReferenceNoAttribute, "REF-2")
		}), false, "CustomerReferenceNo"},
		{"a CustomerReferenceNo that is a list", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
				customerReferenceNoAttribute: {Data: []byte(`["` + ref + `"]`)},
			}}
		}), false, "not a keyword"},
		{"the receiver's other search attribute", receiver, "SignalWithStartWorkflowExecution", checkOrderStart(func(r *workflowservice.SignalWithStartWorkflowExecutionRequest) {
			r.SearchAttributes = attributes(customerReferenceNoAttribute, ref, "CustomStringField", "x")
		}), false, "CustomStringField"},
		{"a caller's memo", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{"note": keyword("x")}}
		}), false, "memo"},
		{"a caller's own header", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.Header.Fields["x-partner"] = keyword("x")
		}), false, "header"},
		{"an operator's memo and queue", operator, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.Memo = &commonpb.Memo{Fields: map[string]*commonpb.Payload{"note": keyword("x")}}
			r.TaskQueue = &taskqueuepb.TaskQueue{Name: otherQueue}
		}), true, ""},

		// What stays refused to all but operators, and to operators too.
		{"a caller's eager start", caller, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.RequestEagerExecution = true
		}), false, "eager"},
		{"an operator's cron schedule", operator, "StartWorkflowExecution", bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) {
			r.CronSchedule = "* * * * *"
		}), false, "cron"},

		// A caller's cancellation of its booking in flight.
		{"a caller's RequestCancel of a booking", caller, "RequestCancelWorkflowExecution", &workflowservice.RequestCancelWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: bookingID},
		}, true, ""},
		{"a caller's RequestCancel of an order run", caller, "RequestCancelWorkflowExecution", &workflowservice.RequestCancelWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: orderID},
		}, false, "booking:<ref> only"},
		{"the receiver's RequestCancel", receiver, "RequestCancelWorkflowExecution", &workflowservice.RequestCancelWorkflowExecutionRequest{
			WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: bookingID},
		}, false, "may not call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := decide(c.id, wfService+c.api, c.request)
			if allowed := got.Decision == authorization.DecisionAllow; allowed != c.allowed {
				t.Fatalf("allowed = %v (%q), want %v", allowed, got.Reason, c.allowed)
			}
			if !strings.Contains(got.Reason, c.reason) {
				t.Fatalf("reason %q does not name %q", got.Reason, c.reason)
			}
		})
	}
}

func TestOperatorsAdminService(t *testing.T) {
	for method, allowed := range map[string]bool{
		"DescribeMutableState": true, "DescribeCluster": true,
		"ReapplyEvents": false, "RefreshWorkflowTasks": false, "DeleteWorkflowExecution": false,
		"DescribeHistoryHost": false, "RemoveRemoteCluster": false, "MergeDLQMessages": false,
	} {
		got := decide(operator, adminSvc+method, nil)
		if (got.Decision == authorization.DecisionAllow) != allowed {
			t.Errorf("%s: %v (%q), want allowed=%v", method, got.Decision, got.Reason, allowed)
		}
	}
	if got := decide(caller, adminSvc+"DescribeMutableState", nil); got.Decision == authorization.DecisionAllow {
		t.Error("a caller reached the admin service")
	}
}

func TestBookingTaskQueues(t *testing.T) {
	for text, want := range map[string][]string{
		"":               {defaultBookingTaskQueue},
		" , ":            {defaultBookingTaskQueue},
		"hotel-booking":  {"hotel-booking"},
		" a , b,":        {"a", "b"},
		"*":              nil,
		" * ":            nil,
		"hotel-booking*": {"hotel-booking*"},
	} {
		got := parseBookingTaskQueues(text)
		if want == nil {
			if got != nil {
				t.Errorf("%q: %v, want any", text, got)
			}
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
		for _, q := range want {
			if !got[q] {
				t.Errorf("%q: %v lacks %q", text, got, q)
			}
		}
	}

	defer func(saved map[string]bool) { bookingTaskQueues = saved }(bookingTaskQueues)
	bookingTaskQueues = parseBookingTaskQueues("*")
	start := bookingStart(func(r *workflowservice.StartWorkflowExecutionRequest) { r.TaskQueue.Name = otherQueue })
	if reason := forbiddenStartOptions(caller, start); reason != "" {
		t.Errorf("any queue: %q", reason)
	}
	bookingTaskQueues = parseBookingTaskQueues("tq-a,tq-b")
	if reason := forbiddenStartOptions(caller, start); !strings.Contains(reason, "task queue") {
		t.Errorf("another queue: %q", reason)
	}
	start.TaskQueue.Name = "tq-b"
	if reason := forbiddenStartOptions(caller, start); reason != "" {
		t.Errorf("a named queue: %q", reason)
	}
}

// testClock: a clock the test moves.
type testClock struct{ at time.Time }

func (c *testClock) now() time.Time          { return c.at }
func (c *testClock) advance(d time.Duration) { c.at = c.at.Add(d) }
func newAudit() (*auditLog, *bytes.Buffer, *testClock) {
	out := &bytes.Buffer{}
	clock := &testClock{at: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	return &auditLog{out: out, now: clock.now}, out, clock
}

func lines(t *testing.T, out *bytes.Buffer) []auditLine {
	t.Helper()
	var got []auditLine
	for _, text := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if text == "" {
			continue
		}
		var line auditLine
		if err := json.Unmarshal([]byte(text), &line); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		got = append(got, line)
	}
	out.Reset()
	return got
}

var acme = who{identity: caller, subject: "CN=partner:acme,OU=booking-callers", name: "partner:acme"}

func terminate(namespace string) *authorization.CallTarget {
	return &authorization.CallTarget{
		APIName:   wfService + "TerminateWorkflowExecution",
		Namespace: namespace,
		Request:   &workflowservice.TerminateWorkflowExecutionRequest{WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: bookingID}},
	}
}

func TestAuditCountsRepeatedRefusals(t *testing.T) {
	log, out, clock := newAudit()
	refused := deny("a booking caller may not call TerminateWorkflowExecution")
	for i := 0; i < 5; i++ {
		log.record(acme, terminate("default"), refused)
		clock.advance(time.Second)
	}
	got := lines(t, out)
	if len(got) != 1 || got[0].Decision != "deny" || got[0].Repeated != 0 || got[0].WorkflowID != bookingID {
		t.Fatalf("first window: %+v, want the first refusal only", got)
	}

	// Another namespace or another reason is another kind: written.
	log.record(acme, terminate("partner-acme"), refused)
	log.record(acme, terminate("default"), deny("another reason"))
	if got := lines(t, out); len(got) != 2 {
		t.Fatalf("other kinds: %+v, want 2 lines", got)
	}

	// The window passes: the next line written is preceded by the count.
	clock.advance(denialWindow)
	start := &authorization.CallTarget{APIName: wfService + "StartWorkflowExecution", Namespace: "default", Request: bookingStart(nil)}
	log.record(acme, start, allow)
	got = lines(t, out)
	if len(got) != 2 || got[0].Repeated != 4 || got[0].API != "TerminateWorkflowExecution" || got[0].Since == "" || got[1].Decision != "allow" {
		t.Fatalf("after the window: %+v, want the count of 4 then the allowed start", got)
	}
	if got[1].ConflictPolicy != "UseExisting" || got[1].ReusePolicy != "RejectDuplicate" || got[1].WorkflowType != bookingWorkflowType {
		t.Fatalf("the start's line: %+v, want its type and policies", got[1])
	}

	// A new window: the first refusal is written again; flush writes a count when nothing else is.
	log.record(acme, terminate("default"), refused)
	log.record(acme, terminate("default"), refused)
	if got := lines(t, out); len(got) != 1 || got[0].Repeated != 0 {
		t.Fatalf("new window: %+v", got)
	}
	log.flush()
	if got := lines(t, out); len(got) != 0 {
		t.Fatalf("flush within the window wrote %+v", got)
	}
	clock.advance(denialWindow)
	log.flush()
	if got := lines(t, out); len(got) != 1 || got[0].Repeated != 1 {
		t.Fatalf("flush after the window: %+v, want the count of 1", got)
	}
	if len(log.denials.counts) != 0 || len(log.denials.order) != 0 {
		t.Fatalf("counts kept after their window: %d", len(log.denials.counts))
	}
}

func TestAuditCountsAreBounded(t *testing.T) {
	log, out, clock := newAudit()
	refused := deny("no")
	// The oldest kind, refused twice (one counted).
	log.record(acme, terminate("ns-0"), refused)
	log.record(acme, terminate("ns-0"), refused)
	for i := 1; i <= denialKeys; i++ {
		log.record(acme, terminate(fmt.Sprintf("ns-%d", i)), refused)
		clock.advance(time.Millisecond)
	}
	if n := len(log.denials.counts); n != denialKeys {
		t.Fatalf("%d kinds counted, want at most %d", n, denialKeys)
	}
	got := lines(t, out)
	if len(got) != denialKeys+2 {
		t.Fatalf("%d lines, want every first refusal and the evicted count", len(got))
	}
	evicted := got[denialKeys]
	if evicted.Namespace != "ns-0" || evicted.Repeated != 1 {
		t.Fatalf("the evicted kind's line: %+v, want ns-0 with its count", evicted)
	}
}

func TestAuditNamesSignalsAndUpdates(t *testing.T) {
	log, out, _ := newAudit()
	log.record(who{identity: receiver, subject: "CN=receiver"}, &authorization.CallTarget{
		APIName: wfService + "SignalWithStartWorkflowExecution", Namespace: "default", Request: checkOrderStart(nil),
	}, allow)
	log.record(acme, &authorization.CallTarget{
		APIName: wfService + "ExecuteMultiOperation", Namespace: "default", Request: cancelWithStartOf(orderStart(nil)),
	}, allow)
	got := lines(t, out)
	if len(got) != 2 {
		t.Fatalf("%+v", got)
	}
	if got[0].Signal != checkOrderSignal || got[0].ReusePolicy != "AllowDuplicate" || got[0].Subject != "CN=receiver" {
		t.Errorf("signal-with-start: %+v", got[0])
	}
	if got[1].Update != cancelBookingUpdate || got[1].ConflictPolicy != "UseExisting" || got[1].WorkflowID != orderID {
		t.Errorf("Update-With-Start: %+v", got[1])
	}
}

// A call by one certificate through the whole authorizer (the namespace binding, then the allow-list).
func authorizeAs(t *testing.T, a roleAuthorizer, w who, target *authorization.CallTarget) authorization.Result {
	t.Helper()
	result, err := a.Authorize(context.Background(), &authorization.Claims{Subject: w.name, Extensions: w}, target)
	if err != nil {
		t.Fatal(err)
	}
	return result
}

func TestWorkersAndReceiversBoundToTheirNamespace(t *testing.T) {
	audit, out, _ := newAudit()
	a := roleAuthorizer{audit: audit, partners: partnerNamespaces{"acme": {"partner-acme"}}}
	subjectOf := func(cn, ou string) who {
		id := identitiesByUnit[ou]
		return who{identity: id, subject: "CN=" + cn + ",OU=" + ou, name: cn}
	}
	acmeWorker := subjectOf("worker:partner-acme", "workers")
	oldWorker := subjectOf("booking-worker", "workers")
	emptyWorker := subjectOf("worker:", "workers")
	misnamedWorker := subjectOf("receiver:default", "workers") // a receiver's CN under the workers' OU
	defaultReceiver := subjectOf("receiver:default", "callback-receivers")
	oldReceiver := subjectOf("callback-receiver", "callback-receivers")
	alice := subjectOf("operator:alice", "operators")
	poll := func(namespace string) *authorization.CallTarget {
		return &authorization.CallTarget{
			APIName:   wfService + "PollWorkflowTaskQueue",
			Namespace: namespace,
			Request:   &workflowservice.PollWorkflowTaskQueueRequest{Namespace: namespace},
		}
	}
	hint := func(namespace string) *authorization.CallTarget {
		return &authorization.CallTarget{
			APIName:   wfService + "SignalWorkflowExecution",
			Namespace: namespace,
			Request: &workflowservice.SignalWorkflowExecutionRequest{
				Namespace:         namespace,
				WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: bookingID},
				SignalName:        supplierHintSignal,
			},
		}
	}
	call := func(api, namespace string) *authorization.CallTarget {
		return &authorization.CallTarget{APIName: wfService + api, Namespace: namespace}
	}
	cases := []struct {
		name    string
		who     who
		target  *authorization.CallTarget
		allowed bool
		reason  string
	}{
		{"a worker polls its own namespace", acmeWorker, poll("partner-acme"), true, ""},
		{"a worker polls another namespace", acmeWorker, poll("default"), false, "worker:partner-acme may not act in namespace default"},
		{"a worker reads another namespace", acmeWorker, call("ListWorkflowExecutions", "default"), false, "may not act in namespace default"},
		{"a worker describes its own namespace (the SDK, at start)", acmeWorker, call("DescribeNamespace", "partner-acme"), true, ""},
		{"a worker lists its own namespace's search attributes (setup.ts, at start)", acmeWorker, &authorization.CallTarget{
			APIName: operatorServicePrefix + "ListSearchAttributes", Namespace: "partner-acme",
		}, true, ""},
		{"a worker asks for the server's system info (the SDK, at connect)", acmeWorker, call("GetSystemInfo", ""), true, ""},
		{"a worker asks for the cluster's info", acmeWorker, call("GetClusterInfo", ""), true, ""},
		{"a worker lists every namespace", acmeWorker, call("ListNamespaces", ""), false, "worker:partner-acme acts in its own namespace only"},
		{"a worker certificate naming no namespace", oldWorker, poll("default"), false, "a worker's certificate names no namespace"},
		{"a worker certificate naming no namespace, even for the cluster's info", oldWorker, call("GetClusterInfo", ""), false, "names no namespace"},
		{"a worker certificate naming an empty namespace", emptyWorker, poll(""), false, "names no namespace"},
		{"a receiver's name on a worker's certificate", misnamedWorker, poll("default"), false, "a worker's certificate names no namespace"},
		{"a receiver signals in its own namespace", defaultReceiver, hint("default"), true, ""},
		{"a receiver signals in another namespace", defaultReceiver, hint("partner-acme"), false, "receiver:default may not act in namespace partner-acme"},
		{"a receiver certificate naming no namespace", oldReceiver, hint("default"), false, "a callback receiver's certificate names no namespace"},
		{"a receiver polls its own namespace (still not its job)", defaultReceiver, poll("default"), false, "only a worker certificate"},
		{"an operator acts in any namespace", alice, terminate("partner-acme"), true, ""},
		{"a partner stays in its own namespace", acme, terminate("default"), false, "partner acme may not act in namespace default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			result := authorizeAs(t, a, c.who, c.target)
			if got := result.Decision == authorization.DecisionAllow; got != c.allowed {
				t.Fatalf("allowed = %v, want %v (reason %q)", got, c.allowed, result.Reason)
			}
			if !strings.Contains(result.Reason, c.reason) {
				t.Fatalf("reason %q, want it to contain %q", result.Reason, c.reason)
			}
		})
	}
	// The audit names the certificate: a person's operator certificate, and the bound worker's refusal.
	var alices, workers int
	for _, line := range lines(t, out) {
		if line.Subject == alice.subject && line.Identity == "operator" && line.API == "TerminateWorkflowExecution" && line.Decision == "allow" {
			alices++
		}
		if line.Subject == acmeWorker.subject && line.Decision == "deny" && line.Namespace == "default" {
			workers++
		}
	}
	if alices != 1 || workers == 0 {
		t.Fatalf("audit: %d allowed terminates by %s (want 1), %d refusals of %s in default", alices, alice.subject, workers, acmeWorker.subject)
	}
}
