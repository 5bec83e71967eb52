package booking

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/temporal"

	"github.com/hotel-booking-orchestrator/clients/go/codec"
)

// referencePattern is the schema's pattern for customerReferenceNo (a UUID as zod checks it).
var referencePattern = regexp.MustCompile(`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$`)

var customerReferenceNoKey = temporal.NewSearchAttributeKeyKeyword(CustomerReferenceNoAttribute)

// NewReference is a new booking reference (a UUID). Keep it: retrying with it is safe, a new one books again.
func NewReference() string {
	return uuid.NewString()
}

// InvalidRequestError means nothing was started; Issues name fields, never their values (they may be personal).
type InvalidRequestError struct{ Issues []string }

func (e *InvalidRequestError) Error() string {
	return "invalid booking request: " + strings.Join(e.Issues, "; ")
}

// check looks at the fields the start itself depends on; the workflow validates the whole request.
func (r Request) check() error {
	var issues []string
	if !referencePattern.MatchString(r.CustomerReferenceNo) {
		issues = append(issues, "customerReferenceNo: must be a UUID")
	}
	if r.RatePkgID == "" {
		issues = append(issues, "ratePkgId: required")
	}
	if len(r.Guests) == 0 {
		issues = append(issues, "guests: at least one")
	}
	if issues != nil {
		return &InvalidRequestError{Issues: issues}
	}
	return nil
}

// Dial connects the way the workers do, by Temporal's own variables (go.temporal.io/sdk/contrib/envconfig):
// TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_API_KEY, and for mutual TLS
// TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH, TEMPORAL_TLS_SERVER_CA_CERT_PATH and
// TEMPORAL_TLS_SERVER_NAME; with the payload encryption of PAYLOAD_ENCRYPTION_KEYS and PAYLOAD_ENCRYPTION_KEY_ID.
// A TOML profile is read only when TEMPORAL_CONFIG_FILE names one. Fields already set in options are kept.
func Dial(options client.Options) (client.Client, error) {
	loaded, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{
		DisableFile: os.Getenv("TEMPORAL_CONFIG_FILE") == "",
	})
	if err != nil {
		return nil, fmt.Errorf("temporal connection settings: %w", err)
	}
	if options.HostPort == "" {
		options.HostPort = loaded.HostPort
	}
	if options.HostPort == "" {
		options.HostPort = client.DefaultHostPort
	}
	if options.Namespace == "" {
		options.Namespace = loaded.Namespace
	}
	if options.Namespace == "" {
		options.Namespace = client.DefaultNamespace
	}
	if options.ConnectionOptions.TLS == nil {
		options.ConnectionOptions.TLS = loaded.ConnectionOptions.TLS
	}
	if options.Credentials == nil {
		options.Credentials = loaded.Credentials
	}
	if options.DataConverter == nil {
		dc, err := codec.DataConverterFromEnv()
		if err != nil {
			return nil, err
		}
		options.DataConverter = dc
	}
	return client.Dial(options)
}

// Start starts the booking, or returns the workflow that already exists for its reference, running or
// ended: a caller that retries after a timeout never makes a second booking. The task queue is taskQueue,
// else BOOKING_TASK_QUEUE, else hotel-booking. An *InvalidRequestError means nothing was started. A start the
// server asks to retry (ServerAskedToRetry) is made again: it attaches to the booking if the first one started it.
func Start(ctx context.Context, c client.Client, request Request, taskQueue string) (client.WorkflowRun, error) {
	if err := request.check(); err != nil {
		return nil, err
	}
	if taskQueue == "" {
		taskQueue = getenv(TaskQueueVariable, DefaultTaskQueue)
	}
	ref := request.CustomerReferenceNo
	run, err := retriedWhenAsked(ctx, func() (client.WorkflowRun, error) {
		return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:        WorkflowID(ref),
			TaskQueue: taskQueue,
			// A retried start while the booking runs attaches to it; after it ended, the id is never reused.
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
			TypedSearchAttributes:    temporal.NewSearchAttributes(customerReferenceNoKey.ValueSet(ref)),
			// Shown in the Web UI's list; summaries are stored in clear, so references only.
			StaticSummary: fmt.Sprintf("Booking %s · ref %s", request.RatePkgID, ref),
		}, WorkflowType, request)
	})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		// The booking ran before and ended: its workflow, not a new one, is the answer.
		return c.GetWorkflow(ctx, WorkflowID(ref), ""), nil
	}
	return run, err
}

// AwaitOutcome waits for the booking's outcome, following continue-as-new runs, and returns it decrypted.
func AwaitOutcome(ctx context.Context, c client.Client, customerReferenceNo string) (Outcome, error) {
	var outcome Outcome
	err := c.GetWorkflow(ctx, WorkflowID(customerReferenceNo), "").Get(ctx, &outcome)
	return outcome, err
}

func getenv(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
