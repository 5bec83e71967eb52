// Package codec reads and writes the booking orchestrator's encrypted payloads from Go, for backend
// services that start bookings (format: docs/payload-encryption.md in the orchestrator's repository).
//
// Every payload the workers store is AES-256-GCM encrypted with a key named in its metadata; a caller
// must encrypt its input and decrypt the outcome with the same keys, read from the same variables as the
// worker: PAYLOAD_ENCRYPTION_KEYS ("keyId:base64key,...") and PAYLOAD_ENCRYPTION_KEY_ID.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
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
	// KeyIDMetadata names the key a payload was encrypted with.
	KeyIDMetadata = "encryption-key-id"
	nonceBytes    = 12
	keyBytes      = 32
)

// Codec is a converter.PayloadCodec for the orchestrator's payloads.
type Codec struct {
	aeads    map[string]cipher.AEAD
	activeID string
}

var _ converter.PayloadCodec = (*Codec)(nil)

// New builds a codec over 32-byte keys; new payloads use activeKeyID.
func New(keys map[string][]byte, activeKeyID string) (*Codec, error) {
	c := &Codec{aeads: map[string]cipher.AEAD{}, activeID: activeKeyID}
	for id, key := range keys {
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
	if _, ok := c.aeads[activeKeyID]; !ok {
		return nil, fmt.Errorf("active key %q is not among the keys", activeKeyID)
	}
	return c, nil
}

// NewFromEnv reads PAYLOAD_ENCRYPTION_KEYS and PAYLOAD_ENCRYPTION_KEY_ID (default: the last key listed).
// It returns nil, nil when PAYLOAD_ENCRYPTION_KEYS is unset: encryption is off. Errors name the variable
// and the key id, never key material.
func NewFromEnv() (*Codec, error) {
	return newFromLookup(os.Getenv)
}

func newFromLookup(getenv func(string) string) (*Codec, error) {
	text := getenv("PAYLOAD_ENCRYPTION_KEYS")
	active := getenv("PAYLOAD_ENCRYPTION_KEY_ID")
	if strings.TrimSpace(text) == "" {
		if active != "" {
			return nil, fmt.Errorf("PAYLOAD_ENCRYPTION_KEY_ID: set, but PAYLOAD_ENCRYPTION_KEYS is not")
		}
		return nil, nil
	}
	keys := map[string][]byte{}
	last := ""
	for _, entry := range strings.Split(text, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		id, encoded, found := strings.Cut(entry, ":")
		if !found || id == "" {
			return nil, fmt.Errorf("PAYLOAD_ENCRYPTION_KEYS: each entry must be keyId:base64key")
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil || len(key) != keyBytes {
			return nil, fmt.Errorf("PAYLOAD_ENCRYPTION_KEYS: key %q must be 32 bytes (base64)", id)
		}
		keys[id] = key
		last = id
	}
	if active == "" {
		active = last
	}
	if _, ok := keys[active]; !ok {
		return nil, fmt.Errorf("PAYLOAD_ENCRYPTION_KEY_ID: %q is not among PAYLOAD_ENCRYPTION_KEYS", active)
	}
	return New(keys, active)
}

// DataConverterFromEnv is the SDK's default data converter, with the codec when the environment turns it on.
func DataConverterFromEnv() (converter.DataConverter, error) {
	c, err := NewFromEnv()
	if err != nil || c == nil {
		return converter.GetDefaultDataConverter(), err
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c), nil
}

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
	plain, err := proto.Marshal(p)
	if err != nil {
		return nil, err
	}
	return &commonpb.Payload{
		Metadata: map[string][]byte{
			converter.MetadataEncoding: []byte(EncryptedEncoding),
			KeyIDMetadata:              []byte(c.activeID),
		},
		// nonce || ciphertext || tag, as GCM's Seal appends them to the nonce.
		Data: c.aeads[c.activeID].Seal(append([]byte{}, nonce...), nonce, plain, nil),
	}, nil
}

// Decode decrypts encrypted payloads; others (written before encryption was on) pass through.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != EncryptedEncoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[KeyIDMetadata])
		aead, ok := c.aeads[id]
		if !ok {
			return nil, fmt.Errorf("payload encrypted with key %q, which is not configured (PAYLOAD_ENCRYPTION_KEYS)", id)
		}
		data := p.GetData()
		if len(data) < nonceBytes+aead.Overhead() {
			return nil, fmt.Errorf("payload encrypted with key %q is too short", id)
		}
		plain, err := aead.Open(nil, data[:nonceBytes], data[nonceBytes:], nil)
		if err != nil {
			return nil, fmt.Errorf("payload encrypted with key %q: %w", id, err)
		}
		inner := &commonpb.Payload{}
		if err := proto.Unmarshal(plain, inner); err != nil {
			return nil, err
		}
		out[i] = inner
	}
	return out, nil
}
