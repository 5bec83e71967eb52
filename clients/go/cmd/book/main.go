// Command book starts a booking on the orchestrator by name, the way a Go backend service would, for the
// demo traveller `npm run book` uses, and prints its decrypted outcome as JSON on stdout.
//
//	go run ./cmd/book -scenario confirmAfterMs=0
//
// Exit code: 0 confirmed, 2 any other outcome, 1 an error. It reads TEMPORAL_ADDRESS (localhost:7233),
// TEMPORAL_NAMESPACE (default), the TEMPORAL_TLS_* variables, BOOKING_TASK_QUEUE (hotel-booking) and the workers'
// encryption variables, PAYLOAD_ENCRYPTION_KEYS and PAYLOAD_ENCRYPTION_KEY_ID.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/hotel-booking-orchestrator/clients/go/booking"
	"github.com/hotel-booking-orchestrator/clients/go/codec"
)

func main() {
	ref := flag.String("ref", "", "booking reference, a UUID (default: a new one; retrying with it is safe)")
	ratePkg := flag.String("rate-pkg", "pkg-demo-deluxe", "rate package id")
	scenario := flag.String("scenario", "", "the sandbox supplier's Test header, e.g. confirmAfterMs=0")
	taskQueue := flag.String("task-queue", "", "default: BOOKING_TASK_QUEUE, else hotel-booking")
	cancel := flag.String("cancel", "", "once confirmed, cancel at the quoted fee with this reason; prints the quote, the answer and the order's end")
	flag.Parse()
	code, err := run(*ref, *ratePkg, *scenario, *taskQueue, *cancel)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// demoRequest is a request the sandbox supplier accepts: src/operators/cli/book.ts's demo traveller.
func demoRequest(ref, ratePkg, scenario string) booking.Request {
	request := booking.Request{
		CustomerReferenceNo: ref,
		RatePkgID:           ratePkg,
		Holder: booking.Holder{
			FirstName: "Demo", LastName: "Traveller", Email: "demo@example.com",
			Phone: booking.Phone{CountryCode: "US", CountryNumber: 1, Number: "5550100"},
		},
		Guests: []booking.Guest{
			{RoomIndex: 0, FirstName: "Demo", LastName: "Traveller", NationalityCode: "US", Age: 30, IsChild: false},
		},
	}
	if scenario != "" {
		request.Context = &booking.Context{Test: scenario}
	}
	return request
}

func run(ref, ratePkg, scenario, taskQueue, cancelReason string) (int, error) {
	if os.Getenv(codec.KeysVariable) == "" {
		// The worker reads plain input too, so the booking would work, with the guest's data in clear in history.
		fmt.Fprintln(os.Stderr, codec.KeysVariable+" is not set: the booking's input is stored unencrypted")
	}
	c, err := booking.Dial(client.Options{
		// The SDK logs each connection at INFO; stdout carries the outcome only, stderr what needs a look.
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	})
	if err != nil {
		return 1, err
	}
	defer c.Close()
	if ref == "" {
		ref = booking.NewReference()
	}
	ctx := context.Background()
	started, err := booking.Start(ctx, c, demoRequest(ref, ratePkg, scenario), taskQueue)
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(os.Stderr, "Booking %s started as workflow %s\n", ref, started.GetID())
	// Raw JSON, so the outcome prints as the workflow returned it, fields this client does not know included.
	var raw json.RawMessage
	if err := started.Get(ctx, &raw); err != nil {
		return 1, err
	}
	var outcome booking.Outcome
	if err := json.Unmarshal(raw, &outcome); err != nil {
		return 1, err
	}
	fmt.Println(string(raw))
	if outcome.Kind != booking.KindConfirmed {
		return 2, nil
	}
	if cancelReason == "" {
		return 0, nil
	}
	return cancelConfirmed(ctx, c, ref, cancelReason, taskQueue)
}

// cancelConfirmed quotes, cancels at the quoted fee and follows the order to its end, printing one JSON line
// {"quote", "answer", "outcome"}. Exit 0 when the order ended cancelled, 2 otherwise.
func cancelConfirmed(ctx context.Context, c client.Client, ref, reason, taskQueue string) (int, error) {
	quote, err := booking.QuoteCancellation(ctx, c, ref, taskQueue)
	if err != nil {
		return 1, err
	}
	answer, err := booking.CancelBooking(ctx, c, ref, booking.CancelRequest{Confirm: true, AcceptedFee: quote.Quote.Fee, Reason: reason}, taskQueue)
	if err != nil {
		return 1, err
	}
	ended, err := booking.AwaitOrderOutcome(ctx, c, ref)
	if err != nil {
		return 1, err
	}
	line, err := json.Marshal(map[string]interface{}{"quote": quote, "answer": answer, "outcome": ended.Raw})
	if err != nil {
		return 1, err
	}
	fmt.Println(string(line))
	if ended.Kind == "cancelled" {
		return 0, nil
	}
	return 2, nil
}
