// Package codec reads and writes the booking orchestrator's encrypted payloads from Go, for backend
// services that start bookings (the format: docs/payload-encryption.md in the orchestrator's repository).
//
// Workers with encryption on store every payload AES-256-GCM encrypted under a key named in its metadata,
// so a caller must seal its input and open the outcome with the same keys. It reads them from the
// variables the workers read: PAYLOAD_ENCRYPTION_KEYS ("keyId:base64key,...") and PAYLOAD_ENCRYPTION_KEY_ID.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

const (
	// EncryptedEncoding is the `encoding` metadata of an encrypted payload.
	EncryptedEncoding = "binary/encrypted"
	// KeyIDMetadata is the metadata entry naming the key a payload was encrypted with.
	KeyIDMetadata = "encryption-key-id"
	// KeysVariable holds every key a process may need, `keyId:base64key,...`.
	KeysVariable = "PAYLOAD_ENCRYPTION_KEYS"
	// KeyIDVariable names the key new payloads are encrypted with (default: the last one listed).
	KeyIDVariable = "PAYLOAD_ENCRYPTION_KEY_ID"

	nonceBytes = 12
	tagBytes   = 16
	keyBytes   = 32
)

// ErrNotConfigured is returned by NewFromEnv when PAYLOAD_ENCRYPTION_KEYS is unset: encryption is off.
var ErrNotConfigured = errors.New(KeysVariable + " is not set: payload encryption is off")

// UnknownKeyError means a payload names a key this process was not given. It carries the key id only.
type UnknownKeyError struct{ KeyID string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("payload encrypted with key %q, which is not configured (%s)", e.KeyID, KeysVariable)
}

// Codec is a converter.PayloadCodec for the orchestrator's payloads; safe for concurrent use.
type Codec struct {
	aeads    map[string]cipher.AEAD
	activeID string
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New builds a codec over 32-byte keys, keyed by id; new payloads are encrypted with activeKeyID.
func New(keys map[string][]byte, activeKeyID string) (*Codec, error) {
	if _, ok := keys[activeKeyID]; !ok {
		return nil, fmt.Errorf("active key %q is not among the keys given", activeKeyID)
	}
	c := &Codec{aeads: make(map[string]cipher.AEAD, len(keys)), activeID: activeKeyID}
	for id, key := range keys {
		// aes.NewCipher would accept 16 or 24 bytes too (AES-128/192); the format is AES-256 only.
		if len(key) != keyBytes {
			return nil, fmt.Errorf("key %q must be 32 bytes", id)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", id, err)
		}
		c.aeads[id] = aead
	}
	return c, nil
}

// NewFromEnv builds the codec PAYLOAD_ENCRYPTION_KEYS and PAYLOAD_ENCRYPTION_KEY_ID describe. It returns
// ErrNotConfigured when the keys are unset (DataConverterFromEnv treats that as encryption off). Errors
// name the variable and the key id, never key material.
func NewFromEnv() (*Codec, error) {
	return newFromLookup(os.Getenv)
}

func newFromLookup(getenv func(string) string) (*Codec, error) {
	text, active := getenv(KeysVariable), getenv(KeyIDVariable)
	if text == "" {
		if active != "" {
			return nil, fmt.Errorf("%s: set, but %s is not", KeyIDVariable, KeysVariable)
		}
		return nil, ErrNotConfigured
	}
	keys, order, err := parseKeys(text)
	if err != nil {
		return nil, err
	}
	if active == "" {
		active = order[len(order)-1]
	}
	if _, ok := keys[active]; !ok {
		return nil, fmt.Errorf("%s: %q is not among %s", KeyIDVariable, active, KeysVariable)
	}
	return New(keys, active)
}

// parseKeys reads `keyId:base64key,...`; order lists the ids as first given, as the workers' parser
// does, so a repeated id does not move the default active key.
func parseKeys(text string) (map[string][]byte, []string, error) {
	keys := map[string][]byte{}
	var order []string
	for _, entry := range strings.Split(text, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, encoded, found := strings.Cut(entry, ":")
		if !found || id == "" {
			return nil, nil, fmt.Errorf("%s: each entry must be keyId:base64key", KeysVariable)
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil || len(key) != keyBytes {
			// Not err itself: base64's error quotes the offending byte of the key.
			return nil, nil, fmt.Errorf("%s: key %q must be 32 bytes (base64)", KeysVariable, id)
		}
		if _, seen := keys[id]; !seen {
			order = append(order, id)
		}
		keys[id] = key
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("%s: no key given", KeysVariable)
	}
	return keys, order, nil
}

// DataConverterFromEnv is the SDK's default data converter, encrypting when PAYLOAD_ENCRYPTION_KEYS is
// set and plain (as workers without keys are) when it is not.
func DataConverterFromEnv() (converter.DataConverter, error) {
	c, err := NewFromEnv()
	if errors.Is(err, ErrNotConfigured) {
		return converter.GetDefaultDataConverter(), nil
	}
	if err != nil {
		return nil, err
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c), nil
}

// ActiveKeyID is the key new payloads are encrypted with.
func (c *Codec) ActiveKeyID() string { return c.activeID }

// Encode encrypts each payload with the active key and a fresh random nonce.
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		nonce := make([]byte, nonceBytes)
		if _, err := rand.Read(nonce); err != nil {
			return nil, err
		}
		sealed, err := c.seal(p, nonce)
		if err != nil {
			return nil, err
		}
		out[i] = sealed
	}
	return out, nil
}

func (c *Codec) seal(p *commonpb.Payload, nonce []byte) (*commonpb.Payload, error) {
	// Deterministic: metadata entries in key order, so a payload always seals to the same plaintext.
	plain, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
	if err != nil {
		return nil, err
	}
	return &commonpb.Payload{
		Metadata: map[string][]byte{
			converter.MetadataEncoding: []byte(EncryptedEncoding),
			KeyIDMetadata:              []byte(c.activeID),
		},
		// Seal appends ciphertext and tag to its first argument: a copy of the nonce gives nonce‖ciphertext‖tag.
		Data: c.aeads[c.activeID].Seal(append([]byte(nil), nonce...), nonce, plain, nil),
	}, nil
}

// Decode decrypts encrypted payloads with the key each names; payloads with another encoding (written
// before encryption was on, or by a caller without it) pass through unchanged.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncryptedEncoding {
			out[i] = p
			continue
		}
		opened, err := c.open(p)
		if err != nil {
			return nil, err
		}
		out[i] = opened
	}
	return out, nil
}

func (c *Codec) open(p *commonpb.Payload) (*commonpb.Payload, error) {
	id := string(p.GetMetadata()[KeyIDMetadata])
	aead, ok := c.aeads[id]
	if !ok {
		return nil, &UnknownKeyError{KeyID: id}
	}
	data := p.GetData()
	if len(data) < nonceBytes+tagBytes {
		return nil, fmt.Errorf("payload encrypted with key %q: %d bytes, shorter than nonce and tag", id, len(data))
	}
	plain, err := aead.Open(nil, data[:nonceBytes], data[nonceBytes:], nil)
	if err != nil {
		// A wrong key under the right id, or a payload changed in storage: GCM cannot tell which.
		return nil, fmt.Errorf("payload encrypted with key %q does not authenticate: %w", id, err)
	}
	inner := &commonpb.Payload{}
	if err := proto.Unmarshal(plain, inner); err != nil {
		return nil, fmt.Errorf("payload encrypted with key %q: the plaintext is not a Payload: %w", id, err)
	}
	return inner, nil
}
