package jsontree

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// toAny converts a node as encoding/json decodes into an any.
func toAny(n *Node) any {
	switch n.Kind {
	case Null:
		return nil
	case Bool:
		return n.Bool
	case Number:
		f, _ := strconv.ParseFloat(n.Str, 64)
		return f
	case String:
		return n.Str
	case Array:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = toAny(e)
		}
		return out
	}
	out := make(map[string]any, len(n.Members))
	for _, m := range n.Members {
		out[m.Key] = toAny(m.Value) // the last duplicate wins, as in encoding/json
	}
	return out
}

// checkSameAsEncodingJSON fails when Parse and encoding/json disagree
// on whether data is JSON or on what it means.
func checkSameAsEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	n, serr := Parse(data, nil)
	if len(bytes.Trim(data, " \t\r\n")) == 0 {
		if serr != nil || n != nil {
			t.Fatalf("%q: blank input should give nothing", data)
		}
		return
	}
	valid := json.Valid(data)
	if valid != (serr == nil) {
		t.Fatalf("%q: encoding/json valid=%v, Parse error=%v", data, valid, serr)
	}
	if serr != nil {
		if serr.Off < 0 || serr.Off > len(data) {
			t.Fatalf("%q: error offset %d out of range", data, serr.Off)
		}
		return
	}
	if n.Off < 0 || n.End > len(data) || n.Off >= n.End {
		t.Fatalf("%q: bad span %d..%d", data, n.Off, n.End)
	}
	var std any
	if err := json.Unmarshal(data, &std); err != nil {
		return // e.g. 1e400: valid JSON that does not fit a float64
	}
	if got := toAny(n); !reflect.DeepEqual(got, std) {
		t.Fatalf("%q: Parse gives %#v, encoding/json %#v", data, got, std)
	}
}

var jsonSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0.5e+10`, `1E-2`, `"s"`, ` {"a" : [ 1 , {"b":"c"} ] } `,
	`{"a":1,"a":2}`, `"\ud83d\ude00 \u00e9 \/"`, "\"\xff\"", `{"a":1,}`, `[1,]`, `{"a" 1}`, `01`, `1.`, `.1`,
	`{"a":tru}`, `nul`, `[`, `{"a":"b`, "{\n// c\n}", `{"x":1}}`, `"\u"`, "\"a\tb\"", `1e400`, `[1 2]`,
	`{"permissions":{"allow":["Bash(npm test *)"],"defaultMode":"plan"}}`,
}

// filterSeeds are the seeds of the fuzz test of internal/mcp/mcpconfig's
// parser, which brought the filter.
var filterSeeds = []string{`{}`, `{"a":[1,2,{"b":null}]}`, `"\u00e9"`, `[1,]`, `{"a":1,}`, "\"\xff\"", `-0.5e+3`, `{"a" 1}`}

func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, s := range append(jsonSeeds, filterSeeds...) {
		checkSameAsEncodingJSON(t, []byte(s))
		checkFiltersAgree(t, []byte(s))
	}
}

// FuzzParse checks that Parse accepts what encoding/json accepts, and reads
// it as encoding/json does.
func FuzzParse(f *testing.F) {
	for _, s := range append(jsonSeeds, filterSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsEncodingJSON(t, data)
	})
}

// FuzzParseFiltered checks that a Filter changes only what is built: the
// same documents are accepted, with the same errors, and what is built is
// what Parse without a filter builds.
func FuzzParseFiltered(f *testing.F) {
	for _, s := range append(filterSeeds, jsonSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFiltersAgree(t, data)
	})
}

// Filters for checkFiltersAgree: one that builds nothing below the root,
// and one that picks at random, by key.
var (
	shallowAll = func([]string) Build { return Shallow }
	byKey      = func(p []string) Build { return Build(len(p[len(p)-1]) % 3) }
)

func checkFiltersAgree(t *testing.T, data []byte) {
	t.Helper()
	full, ferr := Parse(data, nil)
	for i, keep := range []Filter{shallowAll, byKey} {
		n, serr := Parse(data, keep)
		switch {
		case (ferr == nil) != (serr == nil):
			t.Fatalf("%q, filter %d: error %v, without a filter %v", data, i, serr, ferr)
		case ferr != nil:
			if *ferr != *serr {
				t.Fatalf("%q, filter %d: error %v, without a filter %v", data, i, serr, ferr)
			}
		case (full == nil) != (n == nil):
			t.Fatalf("%q, filter %d: %v, without a filter %v", data, i, n, full)
		case n != nil:
			sameBuilt(t, data, full, n, Filtered, keep, nil)
		}
	}
}

// sameBuilt fails unless part, built as mode, is what full is so far as it
// was built.
func sameBuilt(t *testing.T, data []byte, full, part *Node, mode Build, keep Filter, path []string) {
	t.Helper()
	if part.Kind != full.Kind || part.Off != full.Off || part.End != full.End || part.Bool != full.Bool {
		t.Fatalf("%q at %v: %+v, without a filter %+v", data, path, part, full)
	}
	if mode == Shallow {
		if part.Str != "" || part.Elems != nil || part.Members != nil {
			t.Fatalf("%q at %v: shallow node built: %+v", data, path, part)
		}
		return
	}
	if part.Str != full.Str || len(part.Elems) != len(full.Elems) || len(part.Members) != len(full.Members) {
		t.Fatalf("%q at %v: %+v, without a filter %+v", data, path, part, full)
	}
	for i, e := range part.Elems {
		sameBuilt(t, data, full.Elems[i], e, Full, keep, path)
	}
	for i, m := range part.Members {
		fm := full.Members[i]
		if m.Key != fm.Key || m.KeyOff != fm.KeyOff || m.KeyEnd != fm.KeyEnd {
			t.Fatalf("%q at %v: member %+v, without a filter %+v", data, path, m, fm)
		}
		p := append(path[:len(path):len(path)], m.Key)
		sub := mode
		if mode == Filtered {
			sub = keep(p)
		}
		sameBuilt(t, data, fm.Value, m.Value, sub, keep, p)
	}
}
