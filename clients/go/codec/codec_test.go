package codec

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"google.golang.org/protobuf/proto"
)

type vector struct {
	KeyID     string `json:"keyId"`
	KeyBase64 string `json:"keyBase64"`
	NonceHex  string `json:"nonceHex"`
	Inner     struct {
		Metadata map[string]string `json:"metadata"`
		Data     string            `json:"data"`
	} `json:"inner"`
	Outer struct {
		Metadata map[string]string `json:"metadata"`
		DataHex  string            `json:"dataHex"`
	} `json:"outer"`
}

func loadVector(t *testing.T) (vector, *commonpb.Payload, *commonpb.Payload, *Codec) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "payload-encryption-vector.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v vector
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	meta := func(m map[string]string) map[string][]byte {
		out := map[string][]byte{}
		for k, s := range m {
			out[k] = []byte(s)
		}
		return out
	}
	data, _ := hex.DecodeString(v.Outer.DataHex)
	key, _ := base64.StdEncoding.DecodeString(v.KeyBase64)
	c, err := New(map[string][]byte{v.KeyID: key, "old": make([]byte, 32)}, v.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	return v, &commonpb.Payload{Metadata: meta(v.Inner.Metadata), Data: []byte(v.Inner.Data)},
		&commonpb.Payload{Metadata: meta(v.Outer.Metadata), Data: data}, c
}

func TestVectorEncryptsExactlyWithItsNonce(t *testing.T) {
	v, inner, outer, c := loadVector(t)
	nonce, _ := hex.DecodeString(v.NonceHex)
	sealed, err := c.seal(inner, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(sealed, outer) {
		t.Fatalf("sealed payload differs from the vector: %x", sealed.Data)
	}
}

func TestVectorDecrypts(t *testing.T) {
	_, inner, outer, c := loadVector(t)
	got, err := c.Decode([]*commonpb.Payload{outer})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got[0], inner) {
		t.Fatalf("decrypted %v, want %v", got[0], inner)
	}
}

func TestRoundTripPassThroughAndUnknownKey(t *testing.T) {
	_, inner, outer, c := loadVector(t)
	enc, err := c.Encode([]*commonpb.Payload{inner, inner})
	if err != nil {
		t.Fatal(err)
	}
	if string(enc[0].Data) == string(enc[1].Data) {
		t.Fatal("two encryptions share a nonce")
	}
	dec, err := c.Decode(append(enc, inner))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range dec {
		if !proto.Equal(p, inner) {
			t.Fatalf("round trip gave %v", p)
		}
	}
	other, _ := New(map[string][]byte{"other": make([]byte, 32)}, "other")
	if _, err := other.Decode([]*commonpb.Payload{outer}); err == nil || !strings.Contains(err.Error(), "test-2026-11") {
		t.Fatalf("an unknown key id should be named, got %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	v, _, _, _ := loadVector(t)
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if c, err := newFromLookup(env(nil)); c != nil || err != nil {
		t.Fatalf("no keys: encryption off, got %v %v", c, err)
	}
	keys := "old:" + base64.StdEncoding.EncodeToString(make([]byte, 32)) + ", " + v.KeyID + ":" + v.KeyBase64
	c, err := newFromLookup(env(map[string]string{"PAYLOAD_ENCRYPTION_KEYS": keys}))
	if err != nil || c.activeID != v.KeyID {
		t.Fatalf("the last key listed is active by default, got %v %v", c, err)
	}
	for _, bad := range []map[string]string{
		{"PAYLOAD_ENCRYPTION_KEYS": "k1:c2hvcnQ="},
		{"PAYLOAD_ENCRYPTION_KEYS": "no-colon"},
		{"PAYLOAD_ENCRYPTION_KEYS": keys, "PAYLOAD_ENCRYPTION_KEY_ID": "missing"},
		{"PAYLOAD_ENCRYPTION_KEY_ID": "k1"},
	} {
		_, err := newFromLookup(env(bad))
		if err == nil || !strings.Contains(err.Error(), "PAYLOAD_ENCRYPTION_KEY") {
			t.Fatalf("%v: want an error naming the variable, got %v", bad, err)
		}
		if strings.Contains(err.Error(), v.KeyBase64) || strings.Contains(err.Error(), "c2hvcnQ=") {
			t.Fatalf("error shows key material: %v", err)
		}
	}
}
