package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestLineIndex(t *testing.T) {
	src := []byte("ab\ncdé\r\nf\rg\tz")
	// offsets:     a0 b1 \n2 c3 d4 é5,6 \r7 \n8 f9 \r10 g11 \t12 z13
	for _, c := range []struct{ off, line, col int }{
		{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, // the newline itself ends line 1
		{3, 2, 1}, {5, 2, 3}, {7, 2, 4}, // é is one column
		{9, 3, 1},              // after \r\n
		{11, 4, 1}, {13, 4, 3}, // after a lone \r; a tab is one column
		{14, 4, 4}, {99, 4, 4}, {-5, 1, 1}, // clamped
	} {
		x := lineIndex{src: src}
		if l, col := x.pos(c.off); l != c.line || col != c.col {
			t.Errorf("pos(%d) = %d:%d, want %d:%d", c.off, l, col, c.line, c.col)
		}
	}
	var empty lineIndex
	if l, c := empty.pos(0); l != 1 || c != 1 {
		t.Errorf("empty: %d:%d", l, c)
	}
}

func TestParseJSONOffsets(t *testing.T) {
	src := []byte(`{"a": [1, "x", {"b": null}], "c": true}`)
	root, err := parseJSON(src)
	if err != nil {
		t.Fatal(err.msg)
	}
	if root.kind != kindObject || len(root.mems) != 2 || root.off != 0 || root.end != len(src) {
		t.Fatalf("root: %+v", root)
	}
	a := root.mems[0]
	if a.key != "a" || a.keyOff != 1 || a.val.off != 6 || a.val.kind != kindArray || len(a.val.elems) != 3 {
		t.Fatalf("a: %+v", a)
	}
	for i, want := range []struct {
		kind kind
		text string
	}{{kindNumber, "1"}, {kindString, `"x"`}, {kindObject, `{"b": null}`}} {
		e := a.val.elems[i]
		if e.kind != want.kind || string(src[e.off:e.end]) != want.text {
			t.Errorf("elem %d: kind %v text %q", i, e.kind, src[e.off:e.end])
		}
	}
	if b := a.val.elems[2].mems[0]; b.key != "b" || b.val.kind != kindNull || string(src[b.keyOff:b.keyOff+3]) != `"b"` {
		t.Errorf("b: %+v", b)
	}
	if c := root.mems[1]; c.val.kind != kindBool || !c.val.b || string(src[c.val.off:c.val.end]) != "true" {
		t.Errorf("c: %+v", c)
	}
}

func TestParseJSONStrings(t *testing.T) {
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
		n, err := parseJSON([]byte(in))
		if err != nil {
			t.Errorf("%q: %s", in, err.msg)
			continue
		}
		if n.str != want {
			t.Errorf("%q: got %q, want %q", in, n.str, want)
		}
		var std string
		if err := json.Unmarshal([]byte(in), &std); err != nil || std != want {
			t.Errorf("%q: encoding/json gives %q (%v), the test expects %q", in, std, err, want)
		}
	}
}

// TestParseJSONErrors checks the offset and message of syntax errors. The
// offset is marked in each input by ‸, which is removed before parsing.
func TestParseJSONErrors(t *testing.T) {
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
		_, err := parseJSON(src)
		if err == nil {
			t.Errorf("%q: no error", c.in)
			continue
		}
		if err.off != mark || !strings.Contains(err.msg, c.msg) {
			t.Errorf("%q: error at %d %q, want at %d containing %q", c.in, err.off, err.msg, mark, c.msg)
		}
		if json.Valid(src) {
			t.Errorf("%q: encoding/json accepts what parseJSON refuses", c.in)
		}
	}
}

func TestParseJSONDepth(t *testing.T) {
	deep := strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth)
	if _, err := parseJSON([]byte(deep)); err != nil {
		t.Fatalf("depth %d refused: %s", maxDepth, err.msg)
	}
	tooDeep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, err := parseJSON([]byte(tooDeep)); err == nil || !strings.Contains(err.msg, "nesting") {
		t.Fatalf("depth %d accepted: %v", maxDepth+1, err)
	}
}

// toAny converts a node as encoding/json decodes into an any.
func toAny(n *node) any {
	switch n.kind {
	case kindNull:
		return nil
	case kindBool:
		return n.b
	case kindNumber:
		f, _ := strconv.ParseFloat(n.str, 64)
		return f
	case kindString:
		return n.str
	case kindArray:
		out := make([]any, len(n.elems))
		for i, e := range n.elems {
			out[i] = toAny(e)
		}
		return out
	}
	out := make(map[string]any, len(n.mems))
	for _, m := range n.mems {
		out[m.key] = toAny(m.val) // the last duplicate wins, as in encoding/json
	}
	return out
}

// checkSameAsEncodingJSON fails when parseJSON and encoding/json disagree
// on whether data is JSON or on what it means.
func checkSameAsEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	n, serr := parseJSON(data)
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		if serr != nil || n != nil {
			t.Fatalf("%q: blank input should give nothing", data)
		}
		return
	}
	valid := json.Valid(data)
	if valid != (serr == nil) {
		t.Fatalf("%q: encoding/json valid=%v, parseJSON error=%v", data, valid, serr)
	}
	if serr != nil {
		if serr.off < 0 || serr.off > len(data) {
			t.Fatalf("%q: error offset %d out of range", data, serr.off)
		}
		return
	}
	if n.off < 0 || n.end > len(data) || n.off >= n.end {
		t.Fatalf("%q: bad span %d..%d", data, n.off, n.end)
	}
	var std any
	if err := json.Unmarshal(data, &std); err != nil {
		return // e.g. 1e400: valid JSON that does not fit a float64
	}
	if got := toAny(n); !reflect.DeepEqual(got, std) {
		t.Fatalf("%q: parseJSON gives %#v, encoding/json %#v", data, got, std)
	}
}

var jsonSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+10`, `1E-2`, `"s"`, ` {"a" : [ 1 , {"b":"c"} ] } `,
	`{"a":1,"a":2}`, `"\ud83d\ude00 \u00e9 \/"`, "\"\xff\"", `{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.1`,
	`{"a":tru}`, `nul`, `[`, `{"a":"b`, "{\n// c\n}", `{"x":1}}`, `"\u"`, "\"a\tb\"", `1e400`, `[1 2]`,
	`{"permissions":{"allow":["Bash(npm test *)"],"defaultMode":"plan"}}`,
}

func TestParseJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkSameAsEncodingJSON(t, []byte(s))
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsEncodingJSON(t, data)
	})
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"permisions", "permissions"},
		{"Permissions", "permissions"},
		{"deni", "deny"},
		{"PreTooluse", "PreToolUse"},
		{"pretooluse", "PreToolUse"},
		{"spinnerTipsEnabled", ""},
		{"permissions", ""},
		{"xyz", ""},
	} {
		cands := append(append(append([]string{}, topLevelKeys...), permissionKeys...), hookEvents[:]...)
		if got := suggest(c.in, cands); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if d := editDistance("kitten", "sitting", 10); d != 3 {
		t.Errorf("editDistance = %d", d)
	}
	if d := editDistance("a", "abcdef", 3); d != 3 {
		t.Errorf("limited editDistance = %d", d)
	}
}
