package booking

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestServerAskedToRetryReadsTheAnswersThatAskAgain(t *testing.T) {
	for _, err := range []error{
		status.Error(codes.Unknown, "something went wrong, please retry (2738015394)"),
		serviceerror.NewInternal("Please retry"),
		serviceerror.NewFailedPrecondition("Unable to perform workflow execution update due to unexpected workflow task failure."),
		serviceerror.NewUnavailable("Workflow was not started: StartDeduped"),
		status.Error(codes.Unknown, "please retry"),
		// As the SDK wraps an Update-With-Start's operation error.
		fmt.Errorf("failed workflow start: %w", serviceerror.NewUnavailable("Workflow was not started: StartDeduped")),
	} {
		if !ServerAskedToRetry(err) {
			t.Errorf("not read as asked to retry: %v", err)
		}
	}
}

func TestServerAskedToRetryLeavesEverythingElseToTheCaller(t *testing.T) {
	for _, err := range []error{
		status.Error(codes.Unknown, "something went wrong"),
		serviceerror.NewFailedPrecondition("workflow is not running"),
		serviceerror.NewUnavailable("connection refused"),
		serviceerror.NewNotFound("please retry"),
		errors.New("please retry"),
		nil,
	} {
		if ServerAskedToRetry(err) {
			t.Errorf("read as asked to retry: %v", err)
		}
	}
}

func TestRetriedWhenAskedStopsAfterItsAttempts(t *testing.T) {
	calls := 0
	_, err := retriedWhenAsked(context.Background(), func() (int, error) {
		calls++
		return 0, serviceerror.NewFailedPrecondition("update due to unexpected workflow task failure")
	})
	if err == nil || calls != RetryAttempts {
		t.Fatalf("calls %d, error %v", calls, err)
	}
	calls = 0
	answer, err := retriedWhenAsked(context.Background(), func() (int, error) {
		calls++
		if calls == 1 {
			return 0, status.Error(codes.Unknown, "please retry")
		}
		return 42, nil
	})
	if err != nil || answer != 42 || calls != 2 {
		t.Fatalf("answer %d after %d calls, error %v", answer, calls, err)
	}
}
