package agent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// The SDK's message types are the runtime's, field for field (the
// conversions in publicMessage compile only then); this holds their JSON
// tags — what stream-json prints — equal too.
func TestMessagesEncodeAsTheRuntimesDo(t *testing.T) {
	text, parent := "the answer", "toolu_1"
	msgs := []protocol.Message{
		&protocol.System{Subtype: protocol.SubtypeInit, SessionID: "s", UUID: "u", Init: &protocol.Init{Cwd: "/w", Tools: []string{"Read"}}},
		&protocol.System{Subtype: "task_started", SessionID: "s", UUID: "u", Fields: map[string]any{"task_id": "t"}},
		&protocol.Assistant{Type: "assistant", Message: protocol.APIMessage{ID: "m", Content: []llm.Block{llm.Text("hi")}}, ParentToolUseID: &parent, SessionID: "s", UUID: "u", RequestID: "r", Error: "e"},
		&protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("q")}}, SessionID: "s", UUID: "u", ToolUseResult: map[string]string{"stdout": "x"}, IsSynthetic: true, IsReplay: true},
		&protocol.StreamEvent{Type: "stream_event", Event: json.RawMessage(`{"type":"ping"}`), ParentToolUseID: &parent, SessionID: "s", UUID: "u"},
		&protocol.Result{Type: "result", Subtype: protocol.ResultSuccess, Result: &text, Errors: []string{"e"}, SessionID: "s", UUID: "u", NumTurns: 2,
			DurationMS: 3, DurationAPIMS: 4, TotalCostUSD: 0.5, ModelUsage: map[string]protocol.ModelUsage{"m": {InputTokens: 1}},
			PermissionDenials: []protocol.PermissionDenial{{ToolName: "Bash"}}, StopReason: &text, TerminalReason: "completed", StructuredOutput: map[string]int{"n": 1}},
	}
	for _, m := range msgs {
		pub := publicMessage(m)
		if reflect.TypeOf(pub) == reflect.TypeOf(m) || pub.MessageType() != m.MessageType() {
			t.Errorf("%T became %T", m, pub)
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(pub)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%T encodes as\n%s\nthe runtime's as\n%s", pub, got, want)
		}
	}
}
