// Command book starts a booking on the orchestrator by name, the way a Go backend service would, and
// prints its decrypted outcome as JSON; it exits 0 only when the booking is confirmed.
//
//	go run ./cmd/book -scenario confirmAfterMs=0
//
// It reads TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), BOOKING_TASK_QUEUE
// (hotel-booking) and the workers' encryption variables (PAYLOAD_ENCRYPTION_KEYS, PAYLOAD_ENCRYPTION_KEY_ID).
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"hotel-booking-orchestrator/clients/go/codec"
)

func main() {
	ref := flag.String("ref", "", "booking reference (uuid; default: a new one, keep it to retry)")
	ratePkg := flag.String("rate-pkg", "pkg-demo-deluxe", "rate package id")
	scenario := flag.String("scenario", "", "the sandbox supplier's Test header, e.g. confirmAfterMs=0")
	flag.Parse()
	code, err := run(*ref, *ratePkg, *scenario)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

func run(ref, ratePkg, scenario string) (int, error) {
	dataConverter, err := codec.DataConverterFromEnv()
	if err != nil {
		return 1, err
	}
	c, err := client.Dial(client.Options{
		HostPort:      getenv("TEMPORAL_ADDRESS", "localhost:7233"),
		Namespace:     getenv("TEMPORAL_NAMESPACE", "default"),
		DataConverter: dataConverter,
	})
	if err != nil {
		return 1, err
	}
	defer c.Close()
	if ref == "" {
		ref = newUUID()
	}
	request := map[string]any{
		"customerReferenceNo": ref,
		"ratePkgId":           ratePkg,
		"holder": map[string]any{
			"firstName": "Demo", "lastName": "Traveller", "email": "demo@example.com",
			"phone": map[string]any{"countryCode": "US", "countryNumber": 1, "number": "5550100"},
		},
		"guests": []map[string]any{{
			"roomIndex": 0, "firstName": "Demo", "lastName": "Traveller", "nationalityCode": "US", "age": 30, "isChild": false,
		}},
	}
	if scenario != "" {
		request["context"] = map[string]any{"test": scenario}
	}
	ctx := context.Background()
	workflowID := "booking:" + ref
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        workflowID,
		TaskQueue: getenv("BOOKING_TASK_QUEUE", "hotel-booking"),
		// A retried start while the booking runs attaches to it; after it ended, the id is never reused.
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword("CustomerReferenceNo").ValueSet(ref),
		),
		StaticSummary: fmt.Sprintf("Booking %s · ref %s", ratePkg, ref),
	}, "bookingWorkflow", request)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "Booking %s started as workflow %s\n", ref, workflowID)
	// The booking ran before and ended, or runs now: its workflow is the answer either way.
	var outcome map[string]any
	if err := c.GetWorkflow(ctx, workflowID, "").Get(ctx, &outcome); err != nil {
		return 1, err
	}
	out, _ := json.Marshal(outcome)
	fmt.Println(string(out))
	if outcome["kind"] == "confirmed" {
		return 0, nil
	}
	return 2, nil
}

func getenv(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func newUUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
