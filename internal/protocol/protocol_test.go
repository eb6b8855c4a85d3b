package protocol

import (
	"encoding/json"
	"testing"

	"github.com/tackcode/tack/internal/jsonx"
)

func decode(t *testing.T, m Message) map[string]any {
	t.Helper()
	b, err := jsonx.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return out
}

func TestSystemMessagesAreFlat(t *testing.T) {
	init := decode(t, &System{Subtype: SubtypeInit, SessionID: "s", UUID: "u", Init: &Init{Cwd: "/x", Tools: []string{"Read"}, Model: "m", PermissionMode: "default"}})
	if init["type"] != "system" || init["subtype"] != "init" || init["cwd"] != "/x" || init["session_id"] != "s" || init["uuid"] != "u" || init["permissionMode"] != "default" {
		t.Errorf("init %v", init)
	}
	retry := decode(t, &System{Subtype: SubtypeAPIRetry, Attempt: 2, MaxRetries: 10, RetryDelayMS: 500, ErrorStatus: 529, Error: "overloaded_error"})
	if retry["attempt"] != 2.0 || retry["error_status"] != 529.0 || retry["retry_delay_ms"] != 500.0 || retry["error"] != "overloaded_error" {
		t.Errorf("api_retry %v", retry)
	}
	if v, ok := decode(t, &System{Subtype: SubtypeAPIRetry})["error_status"]; !ok || v != nil {
		t.Errorf("a broken stream has error_status null, got %v", v)
	}
	denied := decode(t, &System{Subtype: SubtypePermissionDenied, ToolName: "Write", ToolUseID: "t", Reason: "no"})
	if denied["tool_name"] != "Write" || denied["message"] != "no" {
		t.Errorf("permission_denied %v", denied)
	}
	custom := decode(t, &System{Subtype: "status", Fields: map[string]any{"status": "requesting"}})
	if custom["status"] != "requesting" {
		t.Errorf("status %v", custom)
	}
}

func TestResultOmitsTextOnError(t *testing.T) {
	text := "done"
	ok := decode(t, &Result{Type: "result", Subtype: ResultSuccess, Result: &text, PermissionDenials: []PermissionDenial{}})
	if ok["result"] != "done" || ok["stop_reason"] != nil {
		t.Errorf("%v", ok)
	}
	if _, has := ok["errors"]; has {
		t.Error("a success has errors")
	}
	bad := decode(t, &Result{Type: "result", Subtype: ResultMaxTurns, IsError: true, Errors: []string{"x"}})
	if _, has := bad["result"]; has {
		t.Error("an error result has result text")
	}
	if (&Result{}).Text() != "" {
		t.Error("Text of an error result")
	}
}

func TestCostReport(t *testing.T) {
	r := &Result{TotalCostUSD: 0.01234, DurationAPIMS: 1234, DurationMS: 250, ModelUsage: map[string]ModelUsage{
		"claude-sonnet-5-5": {InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 5_000_000, CacheCreationInputTokens: 2700, CostUSD: 0.01},
		"claude-haiku-4-5":  {InputTokens: 10, CostUSD: 0.00234},
	}}
	want := "Total cost:            $0.0123\n" +
		"Total duration (API):  1.2s\n" +
		"Total duration (wall): 250ms\n" +
		"Usage by model:\n" +
		"  claude-haiku-4-5: 10 input, 0 output, 0 cache read, 0 cache write ($0.0023)\n" +
		"  claude-sonnet-5-5: 1.2k input, 300 output, 5.0M cache read, 2.7k cache write ($0.0100)\n"
	if got := r.CostReport(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
