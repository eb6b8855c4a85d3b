package jsonx

import (
	"encoding/json"
	"testing"
)

func TestAppendStringRoundTrips(t *testing.T) {
	cases := []string{"", "plain", "<system-reminder>&</system-reminder>", "quote \" back \\ slash",
		"ctl \x00\x01\x1f\n\r\t", "é 日本 🎉", "bad \xff utf8", "sep \u2028 \u2029"}
	for _, s := range cases {
		enc := AppendString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("%q: %s does not parse: %v", s, enc, err)
		}
		want := s
		if s == "bad \xff utf8" {
			want = "bad \ufffd utf8"
		}
		if got != want {
			t.Errorf("%q: round trip gave %q", s, got)
		}
	}
	if got := string(AppendString(nil, "<a>&")); got != `"<a>&"` {
		t.Errorf("HTML was escaped: %s", got)
	}
}

func TestMarshalKeepsHTML(t *testing.T) {
	b, err := Marshal(map[string]string{"k": "<x>"})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"k":"<x>"}` {
		t.Errorf("got %s", b)
	}
}
