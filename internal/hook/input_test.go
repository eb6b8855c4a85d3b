package hook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// sampleLines returns the payloads Claude Code 2.1.328 gave its hooks
// (shared/compat/samples/hooks_log.stdin.jsonl, stdin part only).
func sampleLines(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/hooks_log.stdin.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			lines = append(lines, bytes.Clone(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatal("no sample lines")
	}
	return lines
}

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("compact %s: %v", b, err)
	}
	return buf.String()
}

// dropKeys removes top-level keys tack does not model from a sample, keeping
// the order of the others.
func dropKeys(t *testing.T, b []byte, keys ...string) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", b)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(","+strings.Join(keys, ",")+",", ","+k.(string)+",") {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes()
}

// TestPayloadsMatchClaudeCodeBytes rebuilds every captured payload from the
// typed structs and checks the JSON is the same, key order included.
func TestPayloadsMatchClaudeCodeBytes(t *testing.T) {
	for _, line := range sampleLines(t) {
		in, err := ParseInput(line)
		if err != nil {
			t.Fatal(err)
		}
		got, err := in.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		// Stop's background_tasks and session_crons describe Claude Code
		// features tack does not have.
		want := compact(t, dropKeys(t, line, "background_tasks", "session_crons"))
		if string(got) != want {
			t.Errorf("%s payload differs:\n got %s\nwant %s", in.EventName(), got, want)
		}
	}
}

func TestMarshalSetsEventNameAndRequiredValues(t *testing.T) {
	in := PreToolUseInput{Base: Base{SessionID: "s", HookEventName: "Wrong"}, ToolName: "Bash"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"session_id":"s","transcript_path":"","cwd":"","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"tool_use_id":""}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// A pointer encodes the same; HTML is not escaped (hooks get the bytes
	// the model wrote; encoding/json.Marshal would escape them again).
	var p Input = &PostToolUseInput{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"a && b <c>"}`)}
	b, err = p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"tool_response":null`)) || !bytes.Contains(b, []byte(`"command":"a && b <c>"`)) || !bytes.Contains(b, []byte(`"hook_event_name":"PostToolUse"`)) {
		t.Errorf("unexpected PostToolUse JSON %s", b)
	}
}

func TestSubagentFieldsShadowBase(t *testing.T) {
	in := SubagentStopInput{Base: Base{AgentID: "outer"}, AgentID: "sub-1", AgentType: "Explore", AgentTranscriptPath: "/t"}
	b, _ := json.Marshal(in)
	if bytes.Count(b, []byte(`"agent_id"`)) != 1 || !bytes.Contains(b, []byte(`"agent_id":"sub-1"`)) {
		t.Errorf("agent_id should appear once, the subagent's: %s", b)
	}
	back, err := ParseInput(b)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.(SubagentStopInput); got.AgentID != "sub-1" || got.AgentType != "Explore" {
		t.Errorf("round trip: %+v", got)
	}
	if v, ok := back.MatchValue(); !ok || v != "Explore" {
		t.Errorf("SubagentStop matches agent_type, got %q %v", v, ok)
	}
}

func TestParseInputErrors(t *testing.T) {
	for _, bad := range []string{`not json`, `{"hook_event_name":"Nope"}`, `{"hook_event_name":"Stop","stop_hook_active":"yes"}`} {
		if _, err := ParseInput([]byte(bad)); err == nil {
			t.Errorf("ParseInput(%s) should fail", bad)
		}
	}
}

func TestHookName(t *testing.T) {
	cases := []struct {
		in   Input
		want string
	}{
		{PreToolUseInput{ToolName: "Bash"}, "PreToolUse:Bash"},
		{SessionStartInput{Source: "startup"}, "SessionStart:startup"},
		{StopInput{}, "Stop"},
		{UserPromptSubmitInput{Prompt: "x"}, "UserPromptSubmit"},
	}
	for _, c := range cases {
		if got := hookName(c.in); got != c.want {
			t.Errorf("hookName(%T) = %q, want %q", c.in, got, c.want)
		}
	}
}
