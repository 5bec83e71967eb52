// Command codec-roundtrip lets another implementation of the payload encryption check that it
// interoperates with this one (the orchestrator's cross-language test runs it). It reads
// {"decode": [payload...], "encode": [payload...]} as JSON on stdin, payloads as
// {"metadata": {key: base64}, "data": base64}, and writes {"decoded": [...], "encoded": [...]}, with the
// keys of PAYLOAD_ENCRYPTION_KEYS and PAYLOAD_ENCRYPTION_KEY_ID. Errors go to stderr, with exit code 1.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	commonpb "go.temporal.io/api/common/v1"

	"github.com/hotel-booking-orchestrator/clients/go/codec"
)

// encoding/json writes []byte as base64, the form the payloads travel in.
type jsonPayload struct {
	Metadata map[string][]byte `json:"metadata"`
	Data     []byte            `json:"data"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	c, err := codec.NewFromEnv()
	if err != nil {
		return err
	}
	var in struct {
		Decode []jsonPayload `json:"decode"`
		Encode []jsonPayload `json:"encode"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		return err
	}
	decoded, err := c.Decode(toProto(in.Decode))
	if err != nil {
		return err
	}
	encoded, err := c.Encode(toProto(in.Encode))
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string][]jsonPayload{"decoded": fromProto(decoded), "encoded": fromProto(encoded)})
}

func toProto(ps []jsonPayload) []*commonpb.Payload {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		out[i] = &commonpb.Payload{Metadata: p.Metadata, Data: p.Data}
	}
	return out
}

func fromProto(ps []*commonpb.Payload) []jsonPayload {
	out := make([]jsonPayload, len(ps))
	for i, p := range ps {
		out[i] = jsonPayload{Metadata: p.GetMetadata(), Data: p.GetData()}
	}
	return out
}
