package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

var scanSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+10`, `true`, `null`, ` {"a" : [1, 2.5, {"b": null}], "c": "\u00e9\n\"x\""} `,
	`{"a":1,}`, `[1,]`, `01`, `1.`, `.5`, `-`, `1e`, `"\x"`, `"\u12"`, "\"a\tb\"", `{"a" 1}`, `{a:1}`, `[1 2]`,
	`"\ud83d\ude00 \ud83d x \ude00"`, "\"\xff\xfe\"", `{"type":"assist`, `nul`, `tru`, `{"a":1}x`, `[[[[]]]]`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

// FuzzScanLine: the scanner accepts exactly what encoding/json accepts and
// decodes strings the same way.
func FuzzScanLine(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, err := scanLine(data)
		if valid := json.Valid(data); valid != (err == nil) {
			t.Fatalf("scanLine(%q) error %v, json.Valid %v", data, err, valid)
		}
		if err != nil || sp.kind != kindString {
			return
		}
		var want string
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if got := sp.str(data); got != want {
			t.Fatalf("decode %q = %q, want %q", data, got, want)
		}
	})
}

func TestScanLineSeeds(t *testing.T) {
	for _, s := range scanSeeds {
		_, err := scanLine([]byte(s))
		if json.Valid([]byte(s)) != (err == nil) {
			t.Errorf("%.40q: scanLine error %v", s, err)
		}
	}
}

// TestDecodeMatchesLLM: message content decodes as llm.Message would.
func TestDecodeMatchesLLM(t *testing.T) {
	contents := []string{
		`"plain \"text\" \u2028 é"`,
		`[{"type":"text","text":"a","cache_control":{"type":"ephemeral","ttl":"1h"}}]`,
		`[{"type":"text","text":"cited","citations":[{"type":"char_location","cited_text":"x"}]}]`,
		`[{"type":"tool_use","id":"t","name":"Bash","input":{ "command" : "ls" }}]`,
		`[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}],"is_error":true}]`,
		`[{"type":"tool_result","tool_use_id":"t","content":"out"}]`,
		`[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"redacted_thinking","data":"zz"}]`,
		`[{"type":"server_tool_use","id":"s","name":"web_search","input":{"query":"q"}},{"type":"web_search_tool_result","tool_use_id":"s","content":[{"type":"web_search_result","url":"u"}]}]`,
		`[{"type":"image","source":{"type":"url","url":"https://x/y.png"}},{"type":"document","source":{"type":"text","data":"d"}}]`,
	}
	for _, c := range contents {
		line := `{"type":"user","uuid":"u","message":{"role":"user","content":` + c + `}}`
		ln, ok := decodeLine([]byte(line))
		if !ok {
			t.Fatalf("%s: not decoded", c)
		}
		var want llm.Message
		if err := json.Unmarshal([]byte(`{"role":"user","content":`+c+`}`), &want); err != nil {
			t.Fatal(err)
		}
		if got := jsonOf(t, ln.content); got != jsonOf(t, want.Content) {
			t.Errorf("%s:\n got %s\nwant %s", c, got, jsonOf(t, want.Content))
		}
	}
}

func TestDecodeLineEnvelope(t *testing.T) {
	ln, ok := decodeLine([]byte(`{"type":"assistant","uuid":"a","parentUuid":"p","isSidechain":1,"isMeta":"yes","teamName":"",` +
		`"message":{"id":"m","model":"x","role":"assistant","content":[{"type":"tool_use","id":5}]},"cwd":"/w","uuid":"a2"}`))
	if !ok || ln.uuid != "a2" || ln.parent != "p" || !ln.sidechain || !ln.isMeta || ln.metaTrue || ln.teamName ||
		ln.msgID != "m" || ln.model != "x" || len(ln.content) != 0 || ln.cwd != "/w" {
		t.Errorf("%+v", ln)
	}
	if _, ok := decodeLine([]byte(`[{"type":"user"}]`)); ok {
		t.Error("array decoded as a record")
	}
	if ln, _ := decodeLine([]byte(`{"type":"user","uuid":7}`)); ln.hasUUID {
		t.Error("number uuid")
	}
}
