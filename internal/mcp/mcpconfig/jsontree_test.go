package mcpconfig

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSyntaxErrorsArePositioned(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{\n  \"a\": 1,\n}", "f:2:9: invalid JSON: trailing comma before '}'"},
		{"{\n  // note\n  \"a\": 1\n}", "f:2:3: invalid JSON: comments are not allowed in JSON"},
		{"{\"a\": 'x'}", "f:1:7: invalid JSON: strings must be in double quotes"},
		{"{\"a\": 1 \"b\": 2}", "f:1:9: invalid JSON: missing ',' before this key"},
		{"{\"a\": [1 2]}", "f:1:10: invalid JSON: missing ',' before this list element"},
		{"{\"a\": tru}", "f:1:7: invalid JSON: invalid value tru"},
		{"{\"a\": True}", "f:1:7: invalid JSON: invalid value True (JSON literals"},
		{"{\"a\": \"x\n\"}", "f:1:7: invalid JSON: string is not closed on its line"},
		{"{\"a\": \"\\q\"}", "f:1:8: invalid JSON: invalid escape \\q"},
		{"{\"a\": 01}", "f:1:7: invalid JSON: invalid number (JSON does not allow leading zeros)"},
		{"{\"a\": 1", "f:1:1: invalid JSON: '{' is not closed"},
		{"{a: 1}", "f:1:2: invalid JSON: object keys must be strings in double quotes"},
		{"{} {}", "f:1:4: invalid JSON: invalid character '{' after the end of the top-level value"},
		{"{\"é\": ]}", "f:1:7: invalid JSON: invalid character ']' where a value was expected"}, // columns count characters
	}
	for _, c := range cases {
		_, err := parseDoc([]byte(c.src), "f", nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s…", c.src, err, c.want)
		}
	}
}

func TestParserDecodesLikeEncodingJSON(t *testing.T) {
	src := `{"k\u00e9y": ["\ud83c\udf89", "a\"b\\c\/d\n", "\udc00 lone", "` + "\xff" + ` bad", 1.5e3, -0, true, false, null, {}]}`
	n, serr := parseJSON([]byte(src), nil)
	if serr != nil {
		t.Fatal(serr.msg)
	}
	var want map[string][]any
	if err := json.Unmarshal([]byte(src), &want); err != nil {
		t.Fatal(err)
	}
	if n.mems[0].key != "kéy" {
		t.Errorf("key %q", n.mems[0].key)
	}
	got := n.mems[0].val.elems
	for i := 0; i < 4; i++ {
		if got[i].str != want["kéy"][i] {
			t.Errorf("element %d: %q, encoding/json %q", i, got[i].str, want["kéy"][i])
		}
	}
}

func TestShallowSubtreesAreCheckedButNotBuilt(t *testing.T) {
	src := []byte(`{"history": [{"x": "y"}], "keep": {"a": [1]}}`)
	keep := func(p []string) build {
		if p[0] == "keep" {
			return full
		}
		return shallow
	}
	n, serr := parseJSON(src, keep)
	if serr != nil {
		t.Fatal(serr.msg)
	}
	h, _ := n.lookup("history")
	k, _ := n.lookup("keep")
	if h.kind != kindArray || h.elems != nil || string(src[h.off:h.end]) != `[{"x": "y"}]` {
		t.Errorf("history %+v", h)
	}
	if a, _ := k.lookup("a"); a == nil || len(a.elems) != 1 {
		t.Errorf("keep was not built: %+v", k)
	}
	// A syntax error inside a shallow subtree is still an error.
	if _, serr := parseJSON([]byte(`{"history": [1,]}`), keep); serr == nil {
		t.Error("invalid JSON in a shallow subtree was accepted")
	}
}

func FuzzParserAcceptsWhatEncodingJSONAccepts(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\u00e9"`, `[1,]`, `{"a":1,}`, "\"\xff\"", `-0.5e+3`, `{"a" 1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		shallowAll := func([]string) build { return shallow }
		for _, keep := range []filter{nil, shallowAll} {
			n, serr := parseJSON([]byte(s), keep)
			valid := json.Valid([]byte(s))
			empty := strings.Trim(s, " \t\r\n") == ""
			if (serr == nil) != (valid || empty) {
				t.Fatalf("%q: parser error %v, json.Valid %v", s, serr, valid)
			}
			if n != nil && keep == nil && n.kind == kindString {
				var want string
				_ = json.Unmarshal([]byte(s), &want)
				if n.str != want {
					t.Fatalf("%q decoded as %q, encoding/json %q", s, n.str, want)
				}
			}
		}
	})
}
