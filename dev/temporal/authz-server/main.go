// Command temporal-server-authz is the Temporal server of the production topology with three additions, chosen in
// the node's config (global.authorization), because Temporal's own binary can do none of them:
//
//   - claimMapper "certificate-subject": a caller's identity comes from the organizational unit (OU) of the client
//     certificate it presented, which mutual TLS has already checked against the cluster's CA. One OU per job:
//     "temporal-cluster" (the nodes), "workers" (CN=worker:<namespace>), "booking-callers" (one certificate per
//     partner, CN=partner:<name>), "callback-receivers" (CN=receiver:<namespace>), "operators" (CN=operator:<name>:
//     one per person, and one each for the console, the Web UI server and the stack's setup). The CN, whole, is the
//     subject the audit log names. Any other OU, or two of them, is no identity.
//   - authorizer "certificate-roles": an allow-list per identity over the API and, where the request names them,
//     the workflow type and id prefix, the signal name and the update name, and what a start asks for (policies,
//     timeouts, task queue, search attributes, memo, headers: forbiddenStartOptions). Everything not listed is
//     refused with PERMISSION_DENIED. Every write, and every refusal, is one JSON line on the audit log
//     (TEMPORAL_AUDIT_LOG, a file; default stderr): subject, identity, API, namespace, workflow id and type, signal
//     or update, a start's conflict and reuse policies, decision; a refusal repeated within a minute is counted.
//   - the booking task queues starts may name: TEMPORAL_BOOKING_TASK_QUEUES (comma-separated; unset: hotel-booking).
//   - partners apart: a booking caller's certificate (CN=partner:<name>) acts only in its partner's namespaces,
//     given to the authorizer in TEMPORAL_PARTNER_NAMESPACES ("stack=default,acme=partner-acme"; a partner named
//     twice has two; unset: "stack=default", the stack's own partner). Any call naming another namespace, a read
//     included, is refused; a partner in no entry may do nothing.
//   - workers and receivers bound to a namespace: a worker's certificate (CN=worker:<namespace>) and a callback
//     receiver's (CN=receiver:<namespace>) act in the namespace their CN names only (one worker process, and one
//     receiver, per namespace); a certificate of either job naming no namespace may do nothing. Operators and the
//     nodes serve every namespace.
//   - with that claim mapper, the internode listeners (history, matching) take only the nodes' certificate
//     (OU=temporal-cluster): a caller's or a worker's certificate, though signed by the same CA, fails the handshake
//     there, so nothing reaches history or matching around the frontend's authorizer.
//
// Without those names in the config it behaves exactly as temporal-server (e.g. the test clusters without TLS).
// Usage, as temporal-server's: temporal-server-authz --root DIR --config SUBDIR --env NAME [--allow-no-auth] start
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	schedulepb "go.temporal.io/api/schedule/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the topology's database
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/rpc/encryption"
	"go.temporal.io/server/common/tasktoken"
	"go.temporal.io/server/temporal"
)

const (
	claimMapperName = "certificate-subject"
	authorizerName  = "certificate-roles"
)

// identity: one per job; the allow-list is chosen by it.
type identity string

const (
	node     identity = "node"
	worker   identity = "worker"
	caller   identity = "caller"
	receiver identity = "receiver"
	operator identity = "operator"
)

// nodeUnit is the nodes' own OU: the only one the internode listeners take.
const nodeUnit = "temporal-cluster"

// identitiesByUnit: the certificate's OU → its identity. The CA sets the OU (dev/prod/certs.ts); a partner's request
// never chooses it.
var identitiesByUnit = map[string]identity{
	nodeUnit:             node,
	"workers":            worker,
	"booking-callers":    caller,
	"callback-receivers": receiver,
	"operators":          operator,
}

// The contract's names (src/api/contract/definitions.ts) the rules speak of.
const (
	bookingWorkflowType          = "bookingWorkflow"
	orderWorkflowType            = "orderWorkflow"
	sweepWorkflowType            = "reconciliationSweepWorkflow"
	bookingIDPrefix              = "booking:"
	orderIDPrefix                = "order:"
	sweepSchedulePrefix          = "reconciliation:"
	approvePriceUpdate           = "approvePriceChange"
	cancelBookingUpdate          = "cancelBooking"
	supplierHintSignal           = "supplierOrderUpdate"
	checkOrderSignal             = "checkOrder"
	customerReferenceNoAttribute = "CustomerReferenceNo"
	bookingStageAttribute        = "BookingStage"
	firstBookingStage            = "checking-availability"
	autoCancelSignal             = "autoCancel"
	workflowServicePrefix        = "/temporal.api.workflowservice.v1.WorkflowService/"
	operatorServicePrefix        = "/temporal.api.operatorservice.v1.OperatorService/"
	adminServicePrefix           = "/temporal.server.api.adminservice.v1.AdminService/"
)

// who is what the claim mapper found: kept in Claims.Extensions for the authorizer and the audit log.
type who struct {
	identity identity
	subject  string // the certificate's whole subject, e.g. CN=partner:acme,OU=booking-callers,O=...
	name     string // the certificate's common name, e.g. partner:acme
}

type subjectClaimMapper struct{}

func (subjectClaimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	if info == nil || info.TLSSubject == nil {
		return nil, nil // no certificate: no identity
	}
	var found []identity
	for _, unit := range info.TLSSubject.OrganizationalUnit {
		if id, ok := identitiesByUnit[unit]; ok && !slices.Contains(found, id) {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		return nil, nil // none, or two jobs in one certificate: refused rather than guessed
	}
	role := authorization.RoleWriter
	if found[0] == node || found[0] == operator {
		role = authorization.RoleAdmin
	}
	return &authorization.Claims{
		Subject:    info.TLSSubject.CommonName,
		System:     role,
		Extensions: who{identity: found[0], subject: info.TLSSubject.String(), name: info.TLSSubject.CommonName},
	}, nil
}

// The calls a worker makes to take and answer tasks: no other identity may make them (a forged answer to a
// QueryOrders task would settle a booking).
var workerTaskAPIs = set(
	"PollWorkflowTaskQueue", "RespondWorkflowTaskCompleted", "RespondWorkflowTaskFailed",
	"PollActivityTaskQueue", "RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById",
	"RespondActivityTaskCompleted", "RespondActivityTaskCompletedById", "RespondActivityTaskFailed",
	"RespondActivityTaskFailedById", "RespondActivityTaskCanceled", "RespondActivityTaskCanceledById",
	"PollNexusTaskQueue", "RespondNexusTaskCompleted", "RespondNexusTaskFailed",
	"RespondQueryTaskCompleted", "ResetStickyTaskQueue", "ShutdownWorker", "RecordWorkerHeartbeat",
)

// What a booking caller and the callback receiver may read: a booking's or order's state, history and result, the
// list of bookings, the namespace's description (the SDKs ask at connect), an update's outcome.
var callerReads = set(
	"GetSystemInfo", "GetClusterInfo", "DescribeNamespace", "GetSearchAttributes",
	"DescribeWorkflowExecution", "GetWorkflowExecutionHistory", "GetWorkflowExecutionHistoryReverse",
	"ListWorkflowExecutions", "CountWorkflowExecutions", "QueryWorkflow", "PollWorkflowExecutionUpdate",
)

// operatorAdminAPIs: the admin service calls an operator may make. No runbook (docs/operations.md,
// docs/production.md) uses the admin service, so only two reads for looking at a stuck run and the cluster. Nothing
// that writes (ReapplyEvents injects any signal into a run, RefreshWorkflowTasks, DeleteWorkflowExecution, the
// replication and DLQ calls) and no other read: those are a server engineer's, with the nodes' certificate.
var operatorAdminAPIs = set("DescribeMutableState", "DescribeCluster")

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

type roleAuthorizer struct {
	audit    *auditLog
	partners partnerNamespaces
}

// partnerNamespaces: a partner's name (its certificate's CN=partner:<name>) → the namespaces its booking callers act in.
type partnerNamespaces map[string][]string

const partnerNamePrefix = "partner:"

// defaultPartnerNamespaces: without TEMPORAL_PARTNER_NAMESPACES, the stack's own partner in the stack's namespace.
const defaultPartnerNamespaces = "stack=default"

// parsePartnerNamespaces reads "name=namespace,name=namespace"; an empty text maps nobody.
func parsePartnerNamespaces(text string) (partnerNamespaces, error) {
	out := partnerNamespaces{}
	for _, entry := range strings.Split(text, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, namespace, ok := strings.Cut(entry, "=")
		name, namespace = strings.TrimSpace(name), strings.TrimSpace(namespace)
		if !ok || name == "" || namespace == "" {
			return nil, fmt.Errorf("TEMPORAL_PARTNER_NAMESPACES: %q is not <partner>=<namespace>", entry)
		}
		out[name] = append(out[name], namespace)
	}
	return out, nil
}

func partnerNamespacesFromEnv() (partnerNamespaces, error) {
	text, set := os.LookupEnv("TEMPORAL_PARTNER_NAMESPACES")
	if !set {
		text = defaultPartnerNamespaces
	}
	return parsePartnerNamespaces(text)
}

// Bound identities: a certificate of one of these acts in the namespaces its common name gives it and nowhere else.
// A booking caller's CN names its partner (CN=partner:<name>, mapped to namespaces by TEMPORAL_PARTNER_NAMESPACES);
// a worker's and a receiver's CN names its one namespace itself (CN=worker:<namespace>, CN=receiver:<namespace>), so
// a stolen worker key polls, completes and starts in that namespace only. Operators and the nodes are not bound.
const (
	workerNamePrefix   = "worker:"
	receiverNamePrefix = "receiver:"
)

// namespaceLessAPIs: the only calls a bound identity may make that name no namespace. What the workers, the receiver
// and the callers actually call outside their namespace (src/worker.ts, src/runtime/namespace/setup.ts, the SDKs at connect):
// GetSystemInfo (every SDK, at connect; Temporal lets it through as a health check before any rule) and
// GetClusterInfo (the CLI, the Go SDK); both describe the server, not any namespace. DescribeNamespace and ListSearchAttributes, which a worker checks at start, name its own namespace, so
// they need nothing here. ListNamespaces is not one of them: it would show every partner's namespace.
var namespaceLessAPIs = set(workflowServicePrefix+"GetSystemInfo", workflowServicePrefix+"GetClusterInfo")

// outsideNamespace: why a bound identity may not act in the call's namespace ("" when it may, and for operators and
// the nodes, which are not bound).
func (p partnerNamespaces) outsideNamespace(w who, target *authorization.CallTarget) string {
	var mine []string
	var holder string // who the refusal names
	switch w.identity {
	case caller:
		partner, ok := strings.CutPrefix(w.name, partnerNamePrefix)
		if !ok {
			return "a booking caller's certificate names no partner (CN=partner:<name>)"
		}
		mine, holder = p[partner], "partner "+partner
	case worker, receiver:
		prefix, job := workerNamePrefix, "worker"
		if w.identity == receiver {
			prefix, job = receiverNamePrefix, "callback receiver"
		}
		namespace, ok := strings.CutPrefix(w.name, prefix)
		if !ok || namespace == "" {
			return fmt.Sprintf("a %s's certificate names no namespace (CN=%s<namespace>)", job, prefix)
		}
		mine, holder = []string{namespace}, w.name
	default:
		return ""
	}
	if target.Namespace == "" {
		if namespaceLessAPIs[target.APIName] {
			return ""
		}
		if w.identity == caller {
			return "a booking caller acts in its partner's namespace only"
		}
		return fmt.Sprintf("%s acts in its own namespace only", w.name)
	}
	if !slices.Contains(mine, target.Namespace) {
		return fmt.Sprintf("%s may not act in namespace %s", holder, target.Namespace)
	}
	return ""
}

var allow = authorization.Result{Decision: authorization.DecisionAllow}

func deny(reason string) authorization.Result {
	return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}
}

func (a roleAuthorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	if authorization.IsHealthCheckAPI(target.APIName) {
		return allow, nil
	}
	var w who
	if claims != nil {
		w, _ = claims.Extensions.(who)
	}
	var result authorization.Result
	if w.identity == "" {
		result = deny("no identity: the client certificate names none of the cluster's jobs")
	} else if reason := a.partners.outsideNamespace(w, target); reason != "" {
		result = deny(reason)
	} else {
		result = decide(w.identity, target.APIName, target.Request)
	}
	a.audit.record(w, target, result)
	return result, nil
}

// decide is the allow-list: what each identity's job needs, and nothing else.
func decide(id identity, apiName string, request any) authorization.Result {
	method, isWorkflowService := strings.CutPrefix(apiName, workflowServicePrefix)
	if id == node {
		return allow // the nodes' system workers (schedules, batches, the scheduler's starts)
	}
	if isWorkflowService && workerTaskAPIs[method] {
		if id == worker {
			return allow
		}
		return deny("only a worker certificate takes and answers tasks")
	}
	if reason := forbiddenStartOptions(id, request); reason != "" {
		return deny(reason)
	}
	switch id {
	case operator:
		return operatorRule(apiName, isWorkflowService, request)
	case worker:
		return workerRule(apiName, method, isWorkflowService, request)
	case caller:
		return callerRule(apiName, method, isWorkflowService, request)
	case receiver:
		return receiverRule(apiName, method, isWorkflowService, request)
	}
	return deny("unknown identity")
}

// operatorRule: everything an administrator does (terminate, reset, delete, schedules, task-queue configuration,
// activity pause and options, versioning, notes, checks), except the signals only the system sends.
func operatorRule(apiName string, isWorkflowService bool, request any) authorization.Result {
	if method, ok := strings.CutPrefix(apiName, adminServicePrefix); ok {
		if operatorAdminAPIs[method] {
			return allow
		}
		return deny(fmt.Sprintf("operators may call %s of the admin service only (%s is not in a runbook)", strings.Join(sortedKeys(operatorAdminAPIs), ", "), method))
	}
	if !isWorkflowService {
		return allow // operator service (search attributes, namespaces)
	}
	if name := signalName(request); name == autoCancelSignal || name == supplierHintSignal {
		return deny(fmt.Sprintf("the %s signal is sent by the system only", name))
	}
	if batch, ok := request.(*workflowservice.StartBatchOperationRequest); ok {
		if op := batch.GetSignalOperation(); op != nil &&
			(op.GetSignal() == autoCancelSignal || op.GetSignal() == supplierHintSignal) {
			return deny(fmt.Sprintf("the %s signal is sent by the system only", op.GetSignal()))
		}
	}
	return allow
}

// workerRule: tasks (above), every read, the order runs a confirmed booking hands over, the system's own cancellation
// (autoCancel by signal-with-start), and keeping its own reconciliation Schedule (created and updated, never paused or
// deleted).
func workerRule(apiName, method string, isWorkflowService bool, request any) authorization.Result {
	if isReadOnly(apiName) {
		return allow
	}
	if !isWorkflowService {
		return deny("a worker changes no server settings")
	}
	switch r := request.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		return startOf(r.GetWorkflowType(), r.GetWorkflowId(), orderWorkflowType, orderIDPrefix)
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		if res := startOf(r.GetWorkflowType(), r.GetWorkflowId(), orderWorkflowType, orderIDPrefix); res != allow {
			return res
		}
		if r.GetSignalName() != autoCancelSignal {
			return deny("a worker signals-with-start an order run with autoCancel only")
		}
		return allow
	case *workflowservice.CreateScheduleRequest:
		if p := r.GetInitialPatch(); p != nil && (p.GetPause() != "" || p.GetTriggerImmediately() != nil || len(p.GetBackfillRequest()) > 0) {
			return deny("a worker's schedule starts unpatched")
		}
		return sweepSchedule(r.GetScheduleId(), r.GetSchedule())
	case *workflowservice.UpdateScheduleRequest:
		return sweepSchedule(r.GetScheduleId(), r.GetSchedule())
	}
	return deny(fmt.Sprintf("a worker may not call %s", method))
}

// callerRule: a partner's service starts bookings, reads them, answers a price change, cancels through the order
// run's Update-With-Start and asks a booking in flight to cancel; nothing else writes.
func callerRule(apiName, method string, isWorkflowService bool, request any) authorization.Result {
	if isWorkflowService && callerReads[method] || apiName == operatorServicePrefix+"ListSearchAttributes" {
		return allow
	}
	switch r := request.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		return startOf(r.GetWorkflowType(), r.GetWorkflowId(), bookingWorkflowType, bookingIDPrefix)
	case *workflowservice.UpdateWorkflowExecutionRequest:
		if r.GetRequest().GetInput().GetName() != approvePriceUpdate ||
			!strings.HasPrefix(r.GetWorkflowExecution().GetWorkflowId(), bookingIDPrefix) {
			return deny("a booking caller sends approvePriceChange to booking:<ref> only; cancelBooking goes by Update-With-Start")
		}
		return allow
	case *workflowservice.ExecuteMultiOperationRequest:
		return cancelWithStart(r)
	case *workflowservice.RequestCancelWorkflowExecutionRequest:
		// The door onCancelAfterBook needs: a partner asks its own booking in flight to cancel (Authorize has bound
		// the call to the partner's namespaces); not an order run, which a caller cancels by cancelBooking.
		if !strings.HasPrefix(r.GetWorkflowExecution().GetWorkflowId(), bookingIDPrefix) {
			return deny("a booking caller asks to cancel booking:<ref> only")
		}
		return allow
	}
	return deny(fmt.Sprintf("a booking caller may not call %s", method))
}

// receiverRule: the callback receiver reads a run's description, passes a supplier's hint to the booking or order
// run that owns the reference, and starts an order check by signal-with-start (operators may too: the console).
func receiverRule(apiName, method string, isWorkflowService bool, request any) authorization.Result {
	if isWorkflowService && callerReads[method] {
		return allow
	}
	switch r := request.(type) {
	case *workflowservice.SignalWorkflowExecutionRequest:
		id := r.GetWorkflowExecution().GetWorkflowId()
		if r.GetSignalName() != supplierHintSignal || !(strings.HasPrefix(id, bookingIDPrefix) || strings.HasPrefix(id, orderIDPrefix)) {
			return deny("the callback receiver sends supplierOrderUpdate to booking:<ref> or order:<ref> only")
		}
		return allow
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		if res := startOf(r.GetWorkflowType(), r.GetWorkflowId(), orderWorkflowType, orderIDPrefix); res != allow {
			return res
		}
		// checkOrder only: the check itself (an OrderCheck). A hint goes to a run already open, as a plain signal.
		if r.GetSignalName() != checkOrderSignal {
			return deny("the callback receiver starts an order check with checkOrder only")
		}
		return allow
	}
	return deny(fmt.Sprintf("the callback receiver may not call %s", method))
}

// cancelWithStart: exactly the client helper's cancelBooking (src/api/client): start-or-join orderWorkflow under
// order:<ref> and the cancelBooking update on that same id.
func cancelWithStart(r *workflowservice.ExecuteMultiOperationRequest) authorization.Result {
	ops := r.GetOperations()
	if len(ops) != 2 || ops[0].GetStartWorkflow() == nil || ops[1].GetUpdateWorkflow() == nil {
		return deny("a booking caller's multi-operation is cancelBooking's Update-With-Start only")
	}
	start, update := ops[0].GetStartWorkflow(), ops[1].GetUpdateWorkflow()
	if res := startOf(start.GetWorkflowType(), start.GetWorkflowId(), orderWorkflowType, orderIDPrefix); res != allow {
		return res
	}
	if update.GetRequest().GetInput().GetName() != cancelBookingUpdate ||
		update.GetWorkflowExecution().GetWorkflowId() != start.GetWorkflowId() {
		return deny("a booking caller's Update-With-Start sends cancelBooking to the order run it starts")
	}
	return allow
}

func startOf(t *commonpb.WorkflowType, workflowID, wantType, wantPrefix string) authorization.Result {
	if t.GetName() != wantType || !strings.HasPrefix(workflowID, wantPrefix) {
		return deny(fmt.Sprintf("this identity starts %s under %s<ref> only", wantType, wantPrefix))
	}
	return allow
}

// sweepSchedule: the worker's own Schedule (reconciliation:<queue>), starting the sweep, not paused.
func sweepSchedule(id string, s *schedulepb.Schedule) authorization.Result {
	start := s.GetAction().GetStartWorkflow()
	if !strings.HasPrefix(id, sweepSchedulePrefix) || start.GetWorkflowType().GetName() != sweepWorkflowType || s.GetState().GetPaused() {
		return deny("a worker keeps its reconciliation:<queue> schedule of reconciliationSweepWorkflow only, unpaused")
	}
	return allow
}

// startRequest: what a start asks for, the same on a start, a signal-with-start and Update-With-Start's start.
type startRequest interface {
	GetWorkflowId() string
	GetTaskQueue() *taskqueuepb.TaskQueue
	GetWorkflowExecutionTimeout() *durationpb.Duration
	GetWorkflowRunTimeout() *durationpb.Duration
	GetWorkflowTaskTimeout() *durationpb.Duration
	GetWorkflowIdReusePolicy() enumspb.WorkflowIdReusePolicy
	GetWorkflowIdConflictPolicy() enumspb.WorkflowIdConflictPolicy
	GetRetryPolicy() *commonpb.RetryPolicy
	GetCronSchedule() string
	GetMemo() *commonpb.Memo
	GetSearchAttributes() *commonpb.SearchAttributes
	GetHeader() *commonpb.Header
	GetWorkflowStartDelay() *durationpb.Duration
	GetVersioningOverride() *workflowpb.VersioningOverride
}

// headersAllowed: the only header key our clients' interceptors add: the OpenTelemetry interceptor's trace context
// (TRACE_HEADER of @temporalio/interceptors-opentelemetry; the Python and Go clients add no interceptor, and their
// SDKs' tracing contribs use the same key).
var headersAllowed = set("_tracer-data")

// bookingTaskQueues: the task queues a start may name (TEMPORAL_BOOKING_TASK_QUEUES); nil: any.
var bookingTaskQueues = set(defaultBookingTaskQueue)

// defaultBookingTaskQueue: DEFAULT_TASK_QUEUE of the contract (src/api/contract/definitions.ts).
const defaultBookingTaskQueue = "hotel-booking"

// parseBookingTaskQueues reads TEMPORAL_BOOKING_TASK_QUEUES: the booking task queues, comma-separated, each the
// workers' BOOKING_TASK_QUEUE; unset or empty, hotel-booking; "*", any (the test clusters, which run a queue per test
// file). Starts never name the QueryOrders companion queue (<queue>-query-orders): activities only run there.
func parseBookingTaskQueues(text string) map[string]bool {
	text = strings.TrimSpace(text)
	if text == "*" {
		return nil
	}
	out := map[string]bool{}
	for _, q := range strings.Split(text, ",") {
		if q = strings.TrimSpace(q); q != "" {
			out[q] = true
		}
	}
	if len(out) == 0 {
		out[defaultBookingTaskQueue] = true
	}
	return out
}

// forbiddenStartOptions: what a start asks for that is someone else's job (the rules below check names: type, id
// prefix, signal, update). Every start is read: a start, a signal-with-start, and the start inside an
// Update-With-Start (ExecuteMultiOperation). For everyone:
//   - eager execution hands the first task to the starter (workers only); a versioning override pins a run to a
//     build (operators only); a cron schedule or completion callbacks: nobody's job here.
//
// Operators may set the rest (an operator's own starts and restarts). For every other identity:
//   - conflict policy TERMINATE_EXISTING and reuse policy TERMINATE_IF_RUNNING end a running run (a booking mid-Book,
//     an order run following its Cancel);
//   - an execution, run or task timeout, a start delay, a retry policy: a booking cut off after Book is an order
//     nobody follows, and a retry starts a run the workflow cannot tell from the first;
//   - a task queue other than the booking task queue (TEMPORAL_BOOKING_TASK_QUEUES): a worker we did not vet;
//   - search attributes other than CustomerReferenceNo equal to the id's reference (and a booking's first
//     BookingStage, which the client helper sets at start): BookingStage is read back by the receiver, the console
//     and the order run;
//   - a memo, or a header other than the SDK interceptors' own.
func forbiddenStartOptions(id identity, request any) string {
	var start startRequest
	var eager bool
	var callbacks int
	switch r := request.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		start, eager, callbacks = r, r.GetRequestEagerExecution(), len(r.GetCompletionCallbacks())
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		start = r
	case *workflowservice.ExecuteMultiOperationRequest:
		for _, op := range r.GetOperations() {
			if s := op.GetStartWorkflow(); s != nil {
				if reason := forbiddenStartOptions(id, s); reason != "" {
					return reason
				}
			}
		}
		return ""
	default:
		return ""
	}
	switch {
	case eager && id != worker:
		return "eager execution is for workers only"
	case start.GetVersioningOverride() != nil && id != operator:
		return "a versioning override is for operators only"
	case start.GetCronSchedule() != "":
		return "no run here is started on a cron schedule"
	case callbacks > 0:
		return "no run here is started with completion callbacks"
	}
	if id == operator {
		return ""
	}
	return startOptionsOfOthers(start)
}

// startOptionsOfOthers: the options of a start by anyone but an operator (forbiddenStartOptions).
func startOptionsOfOthers(start startRequest) string {
	switch {
	case start.GetWorkflowIdConflictPolicy() == enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING:
		return "conflict policy TERMINATE_EXISTING is for operators only"
	case start.GetWorkflowIdReusePolicy() == enumspb.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING:
		return "reuse policy TERMINATE_IF_RUNNING is for operators only"
	// Exactly zero: our clients' SDKs send none (TypeScript and Python leave the fields out unless set; Go 1.50 sends
	// a zero duration). The server then applies its defaults (no execution or run timeout, a 10 s task timeout).
	case start.GetWorkflowExecutionTimeout().AsDuration() != 0 || start.GetWorkflowRunTimeout().AsDuration() != 0 ||
		start.GetWorkflowTaskTimeout().AsDuration() != 0:
		return "no execution, run or task timeout: a run ends by its own rules"
	case start.GetWorkflowStartDelay().AsDuration() != 0:
		return "no start delay"
	case start.GetRetryPolicy() != nil:
		return "no retry policy: a run is never started again by the server"
	case len(start.GetMemo().GetFields()) > 0:
		return "no memo"
	case bookingTaskQueues != nil && !bookingTaskQueues[start.GetTaskQueue().GetName()]:
		return fmt.Sprintf("task queue %q is not a booking task queue (TEMPORAL_BOOKING_TASK_QUEUES)", start.GetTaskQueue().GetName())
	}
	for key := range start.GetHeader().GetFields() {
		if !headersAllowed[key] {
			return fmt.Sprintf("header %q is not one our SDKs send", key)
		}
	}
	return searchAttributesOfOthers(start)
}

// searchAttributesOfOthers: CustomerReferenceNo equal to the reference the id names; BookingStage only a booking's
// first stage, on booking:<ref>.
func searchAttributesOfOthers(start startRequest) string {
	_, ref, _ := strings.Cut(start.GetWorkflowId(), ":")
	for key, payload := range start.GetSearchAttributes().GetIndexedFields() {
		var value string
		if err := json.Unmarshal(payload.GetData(), &value); err != nil {
			return fmt.Sprintf("search attribute %s: not a keyword", key)
		}
		switch {
		case key == customerReferenceNoAttribute && value == ref && ref != "":
		case key == bookingStageAttribute && value == firstBookingStage && strings.HasPrefix(start.GetWorkflowId(), bookingIDPrefix):
		default:
			return fmt.Sprintf("search attribute %s=%q is not the start's to set", key, value)
		}
	}
	return ""
}

func isReadOnly(apiName string) bool {
	return api.GetMethodMetadata(apiName).Access == api.AccessReadOnly
}

func signalName(request any) string {
	switch r := request.(type) {
	case *workflowservice.SignalWorkflowExecutionRequest:
		return r.GetSignalName()
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		return r.GetSignalName()
	}
	return ""
}

// workflowID: the workflow (or schedule) a request names, for the audit line; for a task's answer, the task's workflow.
func workflowID(request any) string {
	switch r := request.(type) {
	case interface{ GetWorkflowId() string }:
		return r.GetWorkflowId()
	case interface {
		GetWorkflowExecution() *commonpb.WorkflowExecution
	}:
		return r.GetWorkflowExecution().GetWorkflowId()
	case *workflowservice.ExecuteMultiOperationRequest:
		if ops := r.GetOperations(); len(ops) > 0 {
			return ops[0].GetStartWorkflow().GetWorkflowId()
		}
	case interface{ GetScheduleId() string }:
		return r.GetScheduleId()
	case interface{ GetTaskToken() []byte }:
		// A task's answer names its workflow only inside the token (a query task's token is of another kind: none).
		if token, err := taskTokens.Deserialize(r.GetTaskToken()); err == nil {
			return token.GetWorkflowId()
		}
	}
	return ""
}

var taskTokens = tasktoken.NewSerializer()

// auditLog: one JSON line per write and per refusal. Reads and task polls are not written (polls are reads of a
// queue, repeated every minute by every worker). Refusals are counted, not written one by one: the first refusal of a
// (subject, namespace, API, reason) is written, the same again within denialWindow is only counted, and once the
// window has passed one line with the count is written (on the next line the log writes, or by flushEvery). So no
// certificate holder can flood the log, and none of its refusals goes unseen.
type auditLog struct {
	mu      sync.Mutex
	out     io.Writer
	now     func() time.Time // time.Now; a test's clock
	denials denialCounter
}

// denialWindow: how long a repeated refusal is counted rather than written; denialKeys: the most kinds of refusal
// counted at once (past it the oldest kind's count is written early and forgotten).
const (
	denialWindow = time.Minute
	denialKeys   = 10_000
)

// denialCounter: the refusals counted in their window, oldest first (each kind's window starts at its first
// refusal, so the oldest first is also the first to end).
type denialCounter struct {
	counts map[string]*denialCount
	order  []string
}

type denialCount struct {
	first    auditLine // the line written for the first refusal: the summary repeats it with the count
	since    time.Time
	repeated int
}

type auditLine struct {
	Time           string `json:"time"`
	Decision       string `json:"decision"`
	Identity       string `json:"identity"`
	Subject        string `json:"subject"`
	API            string `json:"api"`
	Namespace      string `json:"namespace"`
	WorkflowID     string `json:"workflowId,omitempty"`
	WorkflowType   string `json:"workflowType,omitempty"`
	Signal         string `json:"signal,omitempty"`
	Update         string `json:"update,omitempty"`
	ConflictPolicy string `json:"conflictPolicy,omitempty"`
	ReusePolicy    string `json:"reusePolicy,omitempty"`
	Reason         string `json:"reason,omitempty"`
	// A summary line: how many more refusals like this one came from `since` on, each not written.
	Repeated int    `json:"repeated,omitempty"`
	Since    string `json:"since,omitempty"`
}

func (l *auditLog) record(w who, target *authorization.CallTarget, result authorization.Result) {
	allowed := result.Decision == authorization.DecisionAllow
	method := target.APIName[strings.LastIndex(target.APIName, "/")+1:]
	if allowed && (isReadOnly(target.APIName) || strings.HasPrefix(method, "Poll")) {
		return
	}
	line := auditLine{
		Decision:   map[bool]string{true: "allow", false: "deny"}[allowed],
		Identity:   string(w.identity),
		Subject:    w.subject,
		API:        method,
		Namespace:  target.Namespace,
		WorkflowID: workflowID(target.Request),
		Reason:     result.Reason,
	}
	describeRequest(&line, target.Request)
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.clock()
	l.writeSummaries(at, false)
	if !allowed {
		if l.denials.counted(line) {
			return
		}
		if len(l.denials.counts) >= denialKeys {
			l.writeSummaries(at, true) // bounded: the oldest kind's count is written early
		}
		l.denials.add(line, at)
	}
	line.Time = at.UTC().Format(time.RFC3339Nano)
	l.write(line)
}

// flush writes the counts whose window has passed; flushEvery calls it when nothing else is written.
func (l *auditLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeSummaries(l.clock(), false)
}

func (l *auditLog) flushEvery(interval time.Duration) {
	for range time.Tick(interval) {
		l.flush()
	}
}

func (l *auditLog) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// writeSummaries writes and forgets the counts whose window ended by `at` (all of the oldest one too when `full`).
func (l *auditLog) writeSummaries(at time.Time, full bool) {
	for _, c := range l.denials.expire(at, full) {
		if c.repeated == 0 {
			continue
		}
		summary := c.first
		summary.Time, summary.Since, summary.Repeated = at.UTC().Format(time.RFC3339Nano), c.since.UTC().Format(time.RFC3339Nano), c.repeated
		l.write(summary)
	}
}

func (l *auditLog) write(line auditLine) {
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	_, _ = l.out.Write(append(b, '\n'))
}

func denialKey(line auditLine) string {
	return strings.Join([]string{line.Subject, line.Namespace, line.API, line.Reason}, "\x00")
}

// counted: whether a refusal of this kind is in its window already; if so, it is counted.
func (d *denialCounter) counted(line auditLine) bool {
	c, ok := d.counts[denialKey(line)]
	if ok {
		c.repeated++
	}
	return ok
}

// add starts the window of a kind of refusal, with its first line.
func (d *denialCounter) add(line auditLine, at time.Time) {
	if d.counts == nil {
		d.counts = map[string]*denialCount{}
	}
	key := denialKey(line)
	d.counts[key] = &denialCount{first: line, since: at}
	d.order = append(d.order, key)
}

// expire removes and answers the counts whose window ended by `at`, oldest first; with `full`, at least the oldest.
func (d *denialCounter) expire(at time.Time, full bool) []*denialCount {
	var out []*denialCount
	for len(d.order) > 0 {
		c := d.counts[d.order[0]]
		if !full && at.Sub(c.since) < denialWindow {
			break
		}
		full = false
		out = append(out, c)
		delete(d.counts, d.order[0])
		d.order = d.order[1:]
	}
	return out
}

// describeRequest: the workflow type, the signal or update name and a start's policies, where the request has them.
func describeRequest(line *auditLine, request any) {
	if r, ok := request.(*workflowservice.ExecuteMultiOperationRequest); ok {
		for _, op := range r.GetOperations() {
			if s := op.GetStartWorkflow(); s != nil {
				describeRequest(line, s)
			}
			if u := op.GetUpdateWorkflow(); u != nil {
				describeRequest(line, u)
			}
		}
		return
	}
	if r, ok := request.(interface{ GetWorkflowType() *commonpb.WorkflowType }); ok {
		line.WorkflowType = r.GetWorkflowType().GetName()
	}
	if name := signalName(request); name != "" {
		line.Signal = name
	}
	if r, ok := request.(*workflowservice.UpdateWorkflowExecutionRequest); ok {
		line.Update = r.GetRequest().GetInput().GetName()
	}
	if r, ok := request.(startRequest); ok {
		if p := r.GetWorkflowIdConflictPolicy(); p != enumspb.WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED {
			line.ConflictPolicy = p.String() // e.g. UseExisting, TerminateExisting
		}
		if p := r.GetWorkflowIdReusePolicy(); p != enumspb.WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED {
			line.ReusePolicy = p.String()
		}
	}
}

func openAuditLog() (*auditLog, error) {
	path := os.Getenv("TEMPORAL_AUDIT_LOG")
	var out io.Writer = os.Stderr
	if path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("unable to open the audit log %s: %w", path, err)
		}
		out = f
	}
	l := &auditLog{out: out}
	go l.flushEvery(denialWindow)
	return l, nil
}

// nodesOnlyInternode: the TLS settings of the config, with the internode listeners taking only a certificate whose
// OU is the nodes' own. (Temporal's config can name the client CAs of a listener, not the subject it requires; one
// CA signs every identity here.)
type nodesOnlyInternode struct{ encryption.TLSConfigProvider }

func (p nodesOnlyInternode) GetInternodeServerConfig() (*tls.Config, error) {
	cfg, err := p.TLSConfigProvider.GetInternodeServerConfig()
	if err != nil || cfg == nil {
		return cfg, err
	}
	out := cfg.Clone()
	out.VerifyConnection = requireNodeUnit
	if perClient := cfg.GetConfigForClient; perClient != nil {
		out.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c, err := perClient(hello)
			if err != nil || c == nil {
				return c, err
			}
			c = c.Clone()
			c.VerifyConnection = requireNodeUnit
			return c, nil
		}
	}
	return out, nil
}

func requireNodeUnit(state tls.ConnectionState) error {
	if len(state.VerifiedChains) > 0 && len(state.VerifiedChains[0]) > 0 &&
		slices.Contains(state.VerifiedChains[0][0].Subject.OrganizationalUnit, nodeUnit) {
		return nil
	}
	return errors.New("internode port: only the nodes' certificate (OU=" + nodeUnit + ") is accepted")
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	flags := flag.NewFlagSet("temporal-server-authz", flag.ContinueOnError)
	root := flags.String("root", ".", "root directory")
	configDir := flags.String("config", "config", "config directory, relative to --root")
	env := flags.String("env", "development", "config file name, without .yaml")
	zone := flags.String("zone", "", "availability zone")
	flags.Bool("allow-no-auth", false, "accepted for temporal-server's command line")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if rest := flags.Args(); len(rest) != 1 || rest[0] != "start" {
		return fmt.Errorf("usage: temporal-server-authz --root DIR --config SUBDIR --env NAME start (got %v)", rest)
	}

	cfg, err := config.LoadConfig(*env, filepath.Join(*root, *configDir), *zone)
	if err != nil {
		return fmt.Errorf("unable to load configuration: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))

	dynamicConfigClient := dynamicconfig.NewNoopClient()
	if cfg.DynamicConfigClient != nil {
		fileClient, err := dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh())
		if err != nil {
			return fmt.Errorf("unable to create dynamic config client: %w", err)
		}
		dynamicConfigClient = fileClient
	}

	auth := cfg.Global.Authorization
	var authorizer authorization.Authorizer
	if auth.Authorizer == authorizerName {
		audit, err := openAuditLog()
		if err != nil {
			return err
		}
		partners, err := partnerNamespacesFromEnv()
		if err != nil {
			return err
		}
		bookingTaskQueues = parseBookingTaskQueues(os.Getenv("TEMPORAL_BOOKING_TASK_QUEUES"))
		authorizer = roleAuthorizer{audit: audit, partners: partners}
	} else if authorizer, err = authorization.GetAuthorizerFromConfig(&auth); err != nil {
		return fmt.Errorf("unable to instantiate authorizer: %w", err)
	}
	var claimMapper authorization.ClaimMapper
	options := []temporal.ServerOption{}
	if auth.ClaimMapper == claimMapperName {
		claimMapper = subjectClaimMapper{}
		if cfg.Global.TLS.Internode.IsServerEnabled() {
			// The provider's own metrics (certificate expiry) are not reported: the server's handler is made later.
			provider, err := encryption.NewTLSConfigProviderFromConfig(cfg.Global.TLS, metrics.NoopMetricsHandler, logger, nil)
			if err != nil {
				return fmt.Errorf("unable to load the TLS settings: %w", err)
			}
			options = append(options, temporal.WithTLSConfigFactory(nodesOnlyInternode{provider}))
		}
	} else if claimMapper, err = authorization.GetClaimMapperFromConfig(&auth, logger); err != nil {
		return fmt.Errorf("unable to instantiate claim mapper: %w", err)
	}
	audienceMapper, err := authorization.GetAudienceMapperFromConfig(&auth)
	if err != nil {
		return fmt.Errorf("unable to instantiate audience mapper: %w", err)
	}

	server, err := temporal.NewServer(append(options,
		temporal.ForServices(temporal.DefaultServices), // all four in one process, as temporal-server by default
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dynamicConfigClient),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithAudienceGetter(func(*config.Config) authorization.JWTAudienceMapper { return audienceMapper }),
	)...)
	if err != nil {
		return fmt.Errorf("unable to create server: %w", err)
	}
	return server.Start()
}
