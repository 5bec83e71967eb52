package booking

import (
	"context"
	"errors"
	"regexp"
	"time"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RetryAttempts is how often Start and CancelBooking make a call the server asked to retry, the first pause 200 ms
// and doubled each time, as the TypeScript client helper does.
const RetryAttempts = 5

const retryFirstPause = 200 * time.Millisecond

var (
	pleaseRetry         = regexp.MustCompile(`(?i)please retry`)
	updateAborted       = regexp.MustCompile(`(?i)update due to unexpected workflow task failure`)
	workflowNotStarted  = regexp.MustCompile(`(?i)workflow was not started: `)
	errNoAttemptAllowed = errors.New("no attempt made: the context ended first")
)

// ServerAskedToRetry says whether the server's answer means the call was not done and should be made again as it
// was:
//   - UNKNOWN or INTERNAL "... please retry": the frontend's mask over an internal error (a persistence error inside
//     an Update-With-Start's per-operation errors reaches the caller this way; the same call again goes through);
//   - FAILED_PRECONDITION "... update due to unexpected workflow task failure" (WorkflowNotReady): the update was
//     aborted, never accepted, because the workflow task that carried it failed; asked again, it reaches the run
//     as it is now;
//   - UNAVAILABLE "Workflow was not started: <outcome>": an Update-With-Start lost a race with another start of the
//     same id; the update was not applied, and the server's code says to retry the whole operation.
func ServerAskedToRetry(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		code, ok := grpcCode(e)
		if !ok {
			continue
		}
		text := e.Error()
		switch {
		case (code == codes.Unknown || code == codes.Internal) && pleaseRetry.MatchString(text):
			return true
		case code == codes.FailedPrecondition && updateAborted.MatchString(text):
			return true
		case code == codes.Unavailable && workflowNotStarted.MatchString(text):
			return true
		}
	}
	return false
}

// grpcCode is the gRPC code an error carries itself (a service error or a gRPC status), not one read from its text.
func grpcCode(e error) (codes.Code, bool) {
	if se, ok := e.(serviceerror.ServiceError); ok {
		return se.Status().Code(), true
	}
	if gs, ok := e.(interface{ GRPCStatus() *status.Status }); ok {
		return gs.GRPCStatus().Code(), true
	}
	return codes.OK, false
}

// retriedWhenAsked makes call again, a few times with growing pauses, while the server asks to retry; any other
// error, or the last attempt's, goes to the caller. Only for calls that are safe to repeat as they are (a start that
// attaches to the running workflow, an update with a fixed id).
func retriedWhenAsked[T any](ctx context.Context, call func() (T, error)) (T, error) {
	pause := retryFirstPause
	for attempt := 1; ; attempt++ {
		result, err := call()
		if err == nil || attempt >= RetryAttempts || !ServerAskedToRetry(err) {
			return result, err
		}
		select {
		case <-ctx.Done():
			return result, errors.Join(err, errNoAttemptAllowed)
		case <-time.After(pause):
		}
		pause *= 2
	}
}
