package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// The format's test vector, shared with the TypeScript and Python codecs.
type vector struct {
	KeyID     string `json:"keyId"`
	KeyBase64 string `json:"keyBase64"`
	NonceHex  string `json:"nonceHex"`
	Inner     struct {
		Metadata map[string]string `json:"metadata"`
		Data     string            `json:"data"`
	} `json:"inner"`
	InnerProtobufHex string `json:"innerProtobufHex"`
	Outer            struct {
		Metadata map[string]string `json:"metadata"`
		DataHex  string            `json:"dataHex"`
	} `json:"outer"`
}

// A second key, as after a rotation: the vector's key is the newer, active one.
var oldKey = bytes.Repeat([]byte{7}, 32)

func loadVector(t *testing.T) (v vector, inner, outer *commonpb.Payload, c *Codec) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "payload-encryption-vector.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	data, err := hex.DecodeString(v.Outer.DataHex)
	if err != nil {
		t.Fatal(err)
	}
	key, err := base64.StdEncoding.DecodeString(v.KeyBase64)
	if err != nil {
		t.Fatal(err)
	}
	c, err = New(map[string][]byte{v.KeyID: key, "old": oldKey}, v.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	inner = &commonpb.Payload{Metadata: bytesMap(v.Inner.Metadata), Data: []byte(v.Inner.Data)}
	outer = &commonpb.Payload{Metadata: bytesMap(v.Outer.Metadata), Data: data}
	return v, inner, outer, c
}

func bytesMap(m map[string]string) map[string][]byte {
	out := map[string][]byte{}
	for k, s := range m {
		out[k] = []byte(s)
	}
	return out
}

func jsonPayload(t *testing.T, value any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(value)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVectorSealsToExactlyItsBytes(t *testing.T) {
	v, inner, outer, c := loadVector(t)
	plain, _ := proto.Marshal(inner)
	if hex.EncodeToString(plain) != v.InnerProtobufHex {
		t.Fatalf("inner payload serializes to %x, the vector says %s", plain, v.InnerProtobufHex)
	}
	nonce, _ := hex.DecodeString(v.NonceHex)
	sealed, err := c.seal(inner, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(sealed, outer) {
		t.Fatalf("sealed payload differs from the vector: %x", sealed.Data)
	}
}

func TestVectorOpensToItsInnerPayload(t *testing.T) {
	_, inner, outer, c := loadVector(t)
	got, err := c.Decode([]*commonpb.Payload{outer})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got[0], inner) {
		t.Fatalf("decoded %v, want %v", got[0], inner)
	}
}

func TestRoundTripKeepsTheWholePayloadAndHidesIt(t *testing.T) {
	v, _, _, c := loadVector(t)
	guest := jsonPayload(t, map[string]string{"lastName": "Lovelace", "email": "ada@example.com"})
	guest.Metadata["messageType"] = []byte("guest") // a second metadata entry must survive too
	encoded, err := c.Encode([]*commonpb.Payload{guest, guest})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range encoded {
		if got := string(e.Metadata[converter.MetadataEncoding]); got != EncryptedEncoding {
			t.Errorf("encoding %q, want %q", got, EncryptedEncoding)
		}
		if got := string(e.Metadata[KeyIDMetadata]); got != v.KeyID {
			t.Errorf("key id %q, want the active %q", got, v.KeyID)
		}
		if len(e.Metadata) != 2 {
			t.Errorf("outer metadata %v: only encoding and key id may be in clear", e.Metadata)
		}
		if want := nonceBytes + proto.Size(guest) + tagBytes; len(e.Data) != want {
			t.Errorf("data is %d bytes, want nonce + plaintext + tag = %d", len(e.Data), want)
		}
		if bytes.Contains(e.Data, []byte("Lovelace")) || bytes.Contains(e.Data, []byte("guest")) {
			t.Error("the inner payload shows through")
		}
	}
	if bytes.Equal(encoded[0].Data[:nonceBytes], encoded[1].Data[:nonceBytes]) {
		t.Fatal("two payloads share a nonce")
	}
	decoded, err := c.Decode(encoded)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range decoded {
		if !proto.Equal(d, guest) {
			t.Fatalf("round trip gave %v, want %v", d, guest)
		}
	}
}

func TestPayloadsNotEncryptedPassThroughDecode(t *testing.T) {
	_, _, _, c := loadVector(t)
	plain := []*commonpb.Payload{
		jsonPayload(t, "written before encryption was on"),
		jsonPayload(t, nil), // binary/null
		{Metadata: map[string][]byte{"encoding": []byte("binary/plain")}, Data: []byte{0, 1, 2}},
		{},
	}
	decoded, err := c.Decode(plain)
	if err != nil {
		t.Fatal(err)
	}
	for i := range plain {
		if decoded[i] != plain[i] {
			t.Errorf("payload %d was changed: %v", i, decoded[i])
		}
	}
}

func TestPayloadsOfAnEarlierKeyStillOpen(t *testing.T) {
	v, inner, _, current := loadVector(t)
	key, _ := base64.StdEncoding.DecodeString(v.KeyBase64)
	before, err := New(map[string][]byte{"old": oldKey, v.KeyID: key}, "old")
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := before.Encode([]*commonpb.Payload{inner})
	if got := string(sealed[0].Metadata[KeyIDMetadata]); got != "old" {
		t.Fatalf("sealed under %q, want old", got)
	}
	opened, err := current.Decode(sealed)
	if err != nil || !proto.Equal(opened[0], inner) {
		t.Fatalf("rotated codec: %v %v", opened, err)
	}
}

func TestAnUnknownKeyIDIsNamed(t *testing.T) {
	_, _, outer, _ := loadVector(t)
	other, err := New(map[string][]byte{"other": oldKey}, "other")
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Decode([]*commonpb.Payload{outer})
	var unknown *UnknownKeyError
	if !errors.As(err, &unknown) || unknown.KeyID != "test-2026-11" {
		t.Fatalf("want UnknownKeyError for test-2026-11, got %v", err)
	}
	if want := `payload encrypted with key "test-2026-11", which is not configured (PAYLOAD_ENCRYPTION_KEYS)`; err.Error() != want {
		t.Fatalf("message %q, want %q", err, want)
	}
}

func TestChangedOrTruncatedCiphertextIsRefused(t *testing.T) {
	_, _, outer, c := loadVector(t)
	for name, data := range map[string][]byte{
		"a flipped bit": func() []byte { d := bytes.Clone(outer.Data); d[nonceBytes] ^= 1; return d }(),
		"another tag":   func() []byte { d := bytes.Clone(outer.Data); d[len(d)-1] ^= 1; return d }(),
		"truncated":     outer.Data[:nonceBytes+tagBytes-1],
		"empty":         nil,
	} {
		_, err := c.Decode([]*commonpb.Payload{{Metadata: outer.Metadata, Data: data}})
		if err == nil || !strings.Contains(err.Error(), `key "test-2026-11"`) {
			t.Errorf("%s: want an error naming the key id, got %v", name, err)
		}
	}
}

func TestNewChecksItsKeys(t *testing.T) {
	if _, err := New(map[string][]byte{"k": make([]byte, 16)}, "k"); err == nil || !strings.Contains(err.Error(), `"k" must be 32 bytes`) {
		t.Errorf("a 16-byte key (AES-128) must be refused, got %v", err)
	}
	if _, err := New(map[string][]byte{"k": oldKey}, "missing"); err == nil || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("an active key not given must be refused, got %v", err)
	}
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnvActiveKey(t *testing.T) {
	v, _, _, _ := loadVector(t)
	old := "old:" + base64.StdEncoding.EncodeToString(oldKey)
	latest := v.KeyID + ":" + v.KeyBase64
	for _, tc := range []struct {
		keys, active, want string
	}{
		{old + "," + latest, "", v.KeyID},                // the last listed, by default
		{" " + old + " , " + latest + " ,", "", v.KeyID}, // spaces and a trailing comma are ignored
		{old + "," + latest, "old", "old"},               // named
		{old + "," + latest + "," + old, "", v.KeyID},    // a repeated id keeps its first place, as in TypeScript
		{latest, "", v.KeyID},
	} {
		c, err := newFromLookup(envOf(map[string]string{KeysVariable: tc.keys, KeyIDVariable: tc.active}))
		if err != nil {
			t.Fatalf("%q: %v", tc.keys, err)
		}
		if c.ActiveKeyID() != tc.want {
			t.Errorf("%q with %q: active %q, want %q", tc.keys, tc.active, c.ActiveKeyID(), tc.want)
		}
	}
}

func TestFromEnvUnsetIsOff(t *testing.T) {
	if _, err := newFromLookup(envOf(nil)); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("want ErrNotConfigured, got %v", err)
	}
}

func TestFromEnvErrorsNameTheVariableNeverTheKey(t *testing.T) {
	v, _, _, _ := loadVector(t)
	short := base64.StdEncoding.EncodeToString([]byte("sixteen-byte-key"))
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{KeyIDVariable: "k1"}, "PAYLOAD_ENCRYPTION_KEY_ID: set, but PAYLOAD_ENCRYPTION_KEYS is not"},
		{map[string]string{KeysVariable: "k1:" + short}, `PAYLOAD_ENCRYPTION_KEYS: key "k1" must be 32 bytes (base64)`},
		{map[string]string{KeysVariable: "k1:" + v.KeyBase64[:20] + "!" + v.KeyBase64[21:]}, `PAYLOAD_ENCRYPTION_KEYS: key "k1" must be 32 bytes (base64)`},
		{map[string]string{KeysVariable: v.KeyBase64}, "PAYLOAD_ENCRYPTION_KEYS: each entry must be keyId:base64key"},
		{map[string]string{KeysVariable: ":" + v.KeyBase64}, "PAYLOAD_ENCRYPTION_KEYS: each entry must be keyId:base64key"},
		{map[string]string{KeysVariable: " , "}, "PAYLOAD_ENCRYPTION_KEYS: no key given"},
		{map[string]string{KeysVariable: "k1:" + v.KeyBase64, KeyIDVariable: "k2"}, `PAYLOAD_ENCRYPTION_KEY_ID: "k2" is not among PAYLOAD_ENCRYPTION_KEYS`},
	} {
		_, err := newFromLookup(envOf(tc.env))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: got %v, want %q", tc.env, err, tc.want)
			continue
		}
		for _, secret := range []string{v.KeyBase64, v.KeyBase64[:20], short} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows key material: %v", err)
			}
		}
	}
}

func TestDataConverterFromEnv(t *testing.T) {
	v, _, _, _ := loadVector(t)
	t.Setenv(KeysVariable, v.KeyID+":"+v.KeyBase64)
	t.Setenv(KeyIDVariable, "")
	dc, err := DataConverterFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	p, err := dc.ToPayload(map[string]string{"kind": "confirmed"})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Metadata[converter.MetadataEncoding]) != EncryptedEncoding {
		t.Fatalf("with keys, values are encrypted; got %v", p.Metadata)
	}
	var back map[string]string
	if err := dc.FromPayload(p, &back); err != nil || back["kind"] != "confirmed" {
		t.Fatalf("round trip gave %v %v", back, err)
	}

	t.Setenv(KeysVariable, "")
	if dc, err = DataConverterFromEnv(); err != nil {
		t.Fatal(err)
	}
	if p, _ = dc.ToPayload("x"); string(p.Metadata[converter.MetadataEncoding]) != converter.MetadataEncodingJSON {
		t.Fatalf("without keys, values stay plain JSON; got %v", p.Metadata)
	}

	t.Setenv(KeyIDVariable, "k1")
	if _, err = DataConverterFromEnv(); err == nil || !strings.Contains(err.Error(), KeyIDVariable) {
		t.Fatalf("a bad environment is an error, not encryption off; got %v", err)
	}
}
