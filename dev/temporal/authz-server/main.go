// Command temporal-server-authz is the Temporal server of the production topology with three additions, chosen in
// the node's config (global.authorization), because Temporal's own binary can do none of them:
//
//   - claimMapper "certificate-subject": a caller's identity comes from the organizational unit (OU) of the client
//     certificate it presented, which mutual TLS has already checked against the cluster's CA. One OU per job:
//     "temporal-cluster" (the nodes), "workers", "booking-callers" (one certificate per partner, CN=partner:<name>),
//     "callback-receivers", "operators" (people and the console). Any other OU, or two of them, is no identity.
//   - authorizer "certificate-roles": an allow-list per identity over the API and, where the request names them,
//     the workflow type and id prefix, the signal name and the update name (rules below). Everything not listed is
//     refused with PERMISSION_DENIED. Every write, and every refusal, is one JSON line on the audit log
//     (TEMPORAL_AUDIT_LOG, a file; default stderr): subject, identity, API, namespace, workflow id, decision.
//   - partners apart: a booking caller's certificate (CN=partner:<name>) acts only in its partner's namespaces,
//     given to the authorizer in TEMPORAL_PARTNER_NAMESPACES ("stack=default,acme=partner-acme"; a partner named
//     twice has two; unset: "stack=default", the stack's own partner). Any call naming another namespace, a read
//     included, is refused; a partner in no entry may do nothing. Workers, the receiver and operators serve every
//     namespace (one worker process per namespace, each with its namespace's payload key).
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

	commonpb "go.temporal.io/api/common/v1"
	schedulepb "go.temporal.io/api/schedule/v1"
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

// The contract's names (src/contract/definitions.ts) the rules speak of.
const (
	bookingWorkflowType   = "bookingWorkflow"
	orderWorkflowType     = "orderWorkflow"
	sweepWorkflowType     = "reconciliationSweepWorkflow"
	bookingIDPrefix       = "booking:"
	orderIDPrefix         = "order:"
	sweepSchedulePrefix   = "reconciliation:"
	approvePriceUpdate    = "approvePriceChange"
	cancelBookingUpdate   = "cancelBooking"
	supplierHintSignal    = "supplierOrderUpdate"
	checkOrderSignal      = "checkOrder"
	autoCancelSignal      = "autoCancel"
	workflowServicePrefix = "/temporal.api.workflowservice.v1.WorkflowService/"
	operatorServicePrefix = "/temporal.api.operatorservice.v1.OperatorService/"
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

// namespaceLessCallerAPIs: the only calls a booking caller makes that name no namespace (the SDKs ask at connect).
var namespaceLessCallerAPIs = set(workflowServicePrefix+"GetSystemInfo", workflowServicePrefix+"GetClusterInfo")

// outsideNamespace: why a booking caller may not act in the call's namespace ("" when it may; other identities are
// not bound here).
func (p partnerNamespaces) outsideNamespace(w who, target *authorization.CallTarget) string {
	if w.identity != caller {
		return ""
	}
	partner, ok := strings.CutPrefix(w.name, partnerNamePrefix)
	if !ok {
		return "a booking caller's certificate names no partner (CN=partner:<name>)"
	}
	if target.Namespace == "" {
		if namespaceLessCallerAPIs[target.APIName] {
			return ""
		}
		return "a booking caller acts in its partner's namespace only"
	}
	if !slices.Contains(p[partner], target.Namespace) {
		return fmt.Sprintf("partner %s may not act in namespace %s", partner, target.Namespace)
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
		return operatorRule(isWorkflowService, request)
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
func operatorRule(isWorkflowService bool, request any) authorization.Result {
	if !isWorkflowService {
		return allow // operator service (search attributes, namespaces), admin service
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

// callerRule: a partner's service starts bookings, reads them, answers a price change and cancels through the order
// run's Update-With-Start; nothing else writes.
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

// cancelWithStart: exactly the client helper's cancelBooking (src/client): start-or-join orderWorkflow under
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
	if reason := forbiddenStartOptions(caller, start); reason != "" {
		return deny(reason)
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

// forbiddenStartOptions: options of a start that are someone else's job. Eager execution hands the first task to
// the starter (workers only); a versioning override pins a run to a build (operators only); a cron schedule
// repeats a start forever and completion callbacks call out from the server (nobody's job here).
func forbiddenStartOptions(id identity, request any) string {
	var eager bool
	var cron string
	var override bool
	var callbacks int
	switch r := request.(type) {
	case *workflowservice.StartWorkflowExecutionRequest:
		eager, cron, override, callbacks = r.GetRequestEagerExecution(), r.GetCronSchedule(), r.GetVersioningOverride() != nil, len(r.GetCompletionCallbacks())
	case *workflowservice.SignalWithStartWorkflowExecutionRequest:
		cron, override = r.GetCronSchedule(), r.GetVersioningOverride() != nil
	default:
		return ""
	}
	switch {
	case eager && id != worker:
		return "eager execution is for workers only"
	case override && id != operator:
		return "a versioning override is for operators only"
	case cron != "":
		return "no run here is started on a cron schedule"
	case callbacks > 0:
		return "no run here is started with completion callbacks"
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
// queue, repeated every minute by every worker).
type auditLog struct {
	mu  sync.Mutex
	out io.Writer
}

type auditLine struct {
	Time       string `json:"time"`
	Decision   string `json:"decision"`
	Identity   string `json:"identity"`
	Subject    string `json:"subject"`
	API        string `json:"api"`
	Namespace  string `json:"namespace"`
	WorkflowID string `json:"workflowId,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

func (l *auditLog) record(w who, target *authorization.CallTarget, result authorization.Result) {
	allowed := result.Decision == authorization.DecisionAllow
	method := target.APIName[strings.LastIndex(target.APIName, "/")+1:]
	if allowed && (isReadOnly(target.APIName) || strings.HasPrefix(method, "Poll")) {
		return
	}
	line := auditLine{
		Time:       time.Now().UTC().Format(time.RFC3339Nano),
		Decision:   map[bool]string{true: "allow", false: "deny"}[allowed],
		Identity:   string(w.identity),
		Subject:    w.subject,
		API:        method,
		Namespace:  target.Namespace,
		WorkflowID: workflowID(target.Request),
		Reason:     result.Reason,
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.out.Write(append(b, '\n'))
}

func openAuditLog() (*auditLog, error) {
	path := os.Getenv("TEMPORAL_AUDIT_LOG")
	if path == "" {
		return &auditLog{out: os.Stderr}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("unable to open the audit log %s: %w", path, err)
	}
	return &auditLog{out: f}, nil
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
