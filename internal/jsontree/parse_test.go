package jsontree

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseOffsets(t *testing.T) {
	src := []byte(`{"a": [1, "x", {"b": null}], "c": true}`)
	root, err := Parse(src, nil)
	if err != nil {
		t.Fatal(err.Msg)
	}
	if root.Kind != Object || len(root.Members) != 2 || root.Off != 0 || root.End != len(src) {
		t.Fatalf("root: %+v", root)
	}
	a := root.Members[0]
	if a.Key != "a" || a.KeyOff != 1 || a.Value.Off != 6 || a.Value.Kind != Array || len(a.Value.Elems) != 3 {
		t.Fatalf("a: %+v", a)
	}
	for i, want := range []struct {
		kind Kind
		text string
	}{{Number, "1"}, {String, `"x"`}, {Object, `{"b": null}`}} {
		e := a.Value.Elems[i]
		if e.Kind != want.kind || string(src[e.Off:e.End]) != want.text {
			t.Errorf("elem %d: kind %v text %q", i, e.Kind, src[e.Off:e.End])
		}
	}
	if b := a.Value.Elems[2].Members[0]; b.Key != "b" || b.Value.Kind != Null || string(src[b.KeyOff:b.KeyOff+3]) != `"b"` {
		t.Errorf("b: %+v", b)
	}
	if c := root.Members[1]; c.Value.Kind != Bool || !c.Value.Bool || string(src[c.Value.Off:c.Value.End]) != "true" {
		t.Errorf("c: %+v", c)
	}
}

func TestParseStrings(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:                  "plain",
		`"é\u00e9\n\t\"\\\/"`:      "éé\n\t\"\\/",
		`"\ud83d\ude00"`:           "😀",
		`"\ud83d"`:                 "\ufffd",
		`"\ud83dx"`:                "\ufffdx",
		`"\ude00\ud83d\ude00"`:     "\ufffd😀",
		`"\ud83d\u0041"`:           "\ufffdA",
		"\"bad \xff\xfe utf8\"":    "bad \ufffd\ufffd utf8",
		`"\b\f\r"`:                 "\b\f\r",
		`""`:                       "",
		"\"tail \\u0041\xc3\xa9\"": "tail Aé",
	} {
		n, err := Parse([]byte(in), nil)
		if err != nil {
			t.Errorf("%q: %s", in, err.Msg)
			continue
		}
		if n.Str != want {
			t.Errorf("%q: got %q, want %q", in, n.Str, want)
		}
		var std string
		if err := json.Unmarshal([]byte(in), &std); err != nil || std != want {
			t.Errorf("%q: encoding/json gives %q (%v), the test expects %q", in, std, err, want)
		}
	}
}

// TestParseErrors checks the offset and message of syntax errors. The
// offset is marked in each input by ‸, which is removed before parsing.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"{\n  ‸// a comment\n}", "comments are not allowed"},
		{"{\"a\": 1 ‸/* c */}", "comments are not allowed"},
		{"[1, ‸/* c */ 2]", "comments are not allowed"},
		{"{\"a\": 1}\n‸# note", "invalid character '#'"},
		{`{"a": 1‸,}`, "trailing comma before '}'"},
		{`[1, 2‸, ]`, "trailing comma before ']'"},
		{`{"a" ‸1}`, "missing ':'"},
		{`{"a": 1 ‸"b": 2}`, "missing ','"},
		{`[1 ‸2]`, "missing ','"},
		{`{‸'a': 1}`, "double quotes, not single"},
		{`{‸a: 1}`, "object keys must be strings"},
		{`{"a": ‸yes}`, "invalid value yes"},
		{`{"a": ‸True}`, "lower case: true"},
		{`{"a": ‸NaN}`, "JSON has no NaN"},
		{`{"a": ‸01}`, "leading zeros"},
		{`{"a": ‸-}`, "digit must follow '-'"},
		{`{"a": ‸1.}`, "decimal point"},
		{`{"a": ‸1e}`, "exponent"},
		{`{"a": ‸.5}`, "invalid number"},
		{`{"a": ‸+5}`, "invalid number"},
		{`{"a": "x‸\q"}`, `invalid escape \q`},
		{`{"a": "x‸\u12G4"}`, `invalid \u escape`},
		{"{\"a\": \"x‸\x01\"}", "control character U+0001"},
		{"{\"a\": ‸\"x\n\"}", "not closed on its line"},
		{`{"a": ‸"x`, "string is not closed"},
		{`{"a": ‸"x\`, "string is not closed"},
		{`‸{"a": 1`, "'{' is not closed"},
		{`{"a": ‸[1, 2`, "'[' is not closed"},
		{`‸{"a"`, "'{' is not closed"},
		{`‸{"a":`, "'{' is not closed"},
		{`{"a": 1}‸}`, "unmatched '}'"},
		{`{"a": 1} ‸x`, "after the end of the top-level value"},
		{`{"a": 1‸]`, "']' does not close the '{'"},
		{`[1, 2‸}`, "'}' does not close the '['"},
		{`[1, 2‸:`, "after a list element"},
		{`{"a": 1‸:`, "after an object member"},
		{`{"a": ‸}`, "where a value was expected"},
		{"{\"a\": ‸\u00a0}", "U+00A0"},
		{"{\"a\": ‸\xff}", "byte 0xff"},
		{"‸\ufeff{}", "U+FEFF"}, // a BOM is not JSON; parseDocument strips a leading one first
	} {
		mark := strings.Index(c.in, "‸")
		src := []byte(strings.Replace(c.in, "‸", "", 1))
		_, err := Parse(src, nil)
		if err == nil {
			t.Errorf("%q: no error", c.in)
			continue
		}
		if err.Off != mark || !strings.Contains(err.Msg, c.msg) {
			t.Errorf("%q: error at %d %q, want at %d containing %q", c.in, err.Off, err.Msg, mark, c.msg)
		}
		if json.Valid(src) {
			t.Errorf("%q: encoding/json accepts what Parse refuses", c.in)
		}
	}
}

func TestParseDepth(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Parse([]byte(deep), nil); err != nil {
		t.Fatalf("depth %d refused: %s", MaxDepth, err.Msg)
	}
	tooDeep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := Parse([]byte(tooDeep), nil); err == nil || !strings.Contains(err.Msg, "nesting") {
		t.Fatalf("depth %d accepted: %v", MaxDepth+1, err)
	}
}

// TestParseDecodesLikeEncodingJSON: keys, escapes, surrogate pairs, lone
// surrogates and invalid UTF-8 come out as encoding/json decodes them.
func TestParseDecodesLikeEncodingJSON(t *testing.T) {
	src := `{"k\u00e9y": ["\ud83c\udf89", "a\"b\\c\/d\n", "\udc00 lone", "` + "\xff" + ` bad", 1.5e3, -0, true, false, null, {}]}`
	n, serr := Parse([]byte(src), nil)
	if serr != nil {
		t.Fatal(serr.Msg)
	}
	var want map[string][]any
	if err := json.Unmarshal([]byte(src), &want); err != nil {
		t.Fatal(err)
	}
	if n.Members[0].Key != "kéy" {
		t.Errorf("key %q", n.Members[0].Key)
	}
	got := n.Members[0].Value.Elems
	for i := 0; i < 4; i++ {
		if got[i].Str != want["kéy"][i] {
			t.Errorf("element %d: %q, encoding/json %q", i, got[i].Str, want["kéy"][i])
		}
	}
}

func TestShallowSubtreesAreCheckedButNotBuilt(t *testing.T) {
	src := []byte(`{"history": [{"x": "y"}], "keep": {"a": [1]}, "n": 12, "t": true, "s": "x\ny"}`)
	var paths []string
	keep := func(p []string) Build {
		paths = append(paths, strings.Join(p, "."))
		if p[0] == "keep" {
			return Full
		}
		return Shallow
	}
	n, serr := Parse(src, keep)
	if serr != nil {
		t.Fatal(serr.Msg)
	}
	if got := strings.Join(paths, " "); got != "history keep n t s" {
		t.Errorf("the filter was asked about %s", got)
	}
	h, k := n.Lookup("history"), n.Lookup("keep")
	if h.Kind != Array || h.Elems != nil || string(src[h.Off:h.End]) != `[{"x": "y"}]` {
		t.Errorf("history %+v", h)
	}
	if a := k.Lookup("a"); a == nil || len(a.Elems) != 1 || a.Elems[0].Str != "1" {
		t.Errorf("keep was not built: %+v", k)
	}
	// Shallow scalars have their kind, extent and truth, not their text.
	if v := n.Lookup("n"); v.Kind != Number || v.Str != "" || string(src[v.Off:v.End]) != "12" {
		t.Errorf("n %+v", v)
	}
	if v := n.Lookup("t"); v.Kind != Bool || !v.Bool {
		t.Errorf("t %+v", v)
	}
	if v := n.Lookup("s"); v.Kind != String || v.Str != "" || string(src[v.Off:v.End]) != `"x\ny"` {
		t.Errorf("s %+v", v)
	}
	// A syntax error inside a shallow subtree is still an error.
	if _, serr := Parse([]byte(`{"history": [1,]}`), keep); serr == nil {
		t.Error("invalid JSON in a shallow subtree was accepted")
	}
}

func TestFilterPaths(t *testing.T) {
	src := []byte(`{"projects": {"/a": {"mcpServers": {"x": {"command": "c"}}, "history": [{"d": 1}]}, "/b": {"mcpServers": {}}}, "top": [{"k": {"l": 1}}]}`)
	var asked []string
	keep := func(p []string) Build {
		asked = append(asked, strings.Join(p, "/"))
		switch {
		case len(p) < 2:
			return Filtered
		case len(p) == 2 && p[1] == "/a":
			return Filtered
		case len(p) == 3 && p[2] == "mcpServers":
			return Full
		}
		return Shallow
	}
	root, serr := Parse(src, keep)
	if serr != nil {
		t.Fatal(serr.Msg)
	}
	// Members of Full values and list elements are not asked about.
	if got, want := strings.Join(asked, " "), "projects projects//a projects//a/mcpServers projects//a/history projects//b top"; got != want {
		t.Errorf("asked %s, want %s", got, want)
	}
	a := root.Lookup("projects").Lookup("/a")
	if c := a.Lookup("mcpServers").Lookup("x").Lookup("command"); c == nil || c.Str != "c" {
		t.Errorf("mcpServers of /a not built: %+v", a)
	}
	if b := root.Lookup("projects").Lookup("/b"); b == nil || b.Kind != Object || b.Members != nil {
		t.Errorf("/b built: %+v", b)
	}
	// A list below a Filtered object is built whole.
	if l := root.Lookup("top").Elems[0].Lookup("k").Lookup("l"); l == nil || l.Str != "1" {
		t.Errorf("top not built: %+v", root.Lookup("top"))
	}
}

func TestLookup(t *testing.T) {
	src := []byte(`{"a": 1, "b": 2, "a": 3}`)
	n, serr := Parse(src, nil)
	if serr != nil {
		t.Fatal(serr.Msg)
	}
	if v := n.Lookup("a"); v == nil || v.Str != "3" {
		t.Errorf("Lookup(a) = %+v, want the last a", v)
	}
	if i := n.Index("a"); i != 2 {
		t.Errorf("Index(a) = %d", i)
	}
	if v, i := n.Lookup("c"), n.Index("c"); v != nil || i != -1 {
		t.Errorf("c: %+v %d", v, i)
	}
	m := n.Members[1]
	if string(src[m.KeyOff:m.KeyEnd]) != `"b"` || string(src[m.Value.Off:m.Value.End]) != "2" {
		t.Errorf("b at %d..%d", m.KeyOff, m.KeyEnd)
	}
	var none *Node
	if none.Lookup("a") != nil || none.Index("a") != -1 || n.Members[0].Value.Lookup("a") != nil {
		t.Error("Lookup in nil or in a number")
	}
}

func TestSyntaxErrorMessages(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"{\"a\": [1,\n  2}", "'}' does not close the '[' at line 1, column 7 (want ']')"},
		{"[\"é\",\n {\"a\": 1]]", "']' does not close the '{' at line 2, column 2 (want '}')"},
		{`{"a": "\` + "\t" + `"}`, `invalid escape \U+0009 in string`},
		{`[1] ]`, `unmatched ']' after the end of the top-level value`},
	} {
		_, err := Parse([]byte(c.in), nil)
		if err == nil || err.Msg != c.msg {
			t.Errorf("%q: got %v, want %s", c.in, err, c.msg)
		}
	}
	err := &SyntaxError{Off: 3, Msg: "m"}
	if err.Error() != "invalid JSON at byte offset 3: m" {
		t.Error(err.Error())
	}
}

func TestKindString(t *testing.T) {
	var got []string
	for k := Null; k <= Object; k++ {
		got = append(got, k.String())
	}
	if s := strings.Join(got, ", "); s != "null, a boolean, a number, a string, a list, an object" {
		t.Error(s)
	}
}
