package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

const citySchema = `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`

func TestStructuredOutputIsValidatedAndReturned(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.Text("It is Lyon.")}},
		{Content: []llm.Block{llmtest.ToolUse("StructuredOutput", map[string]any{"city": 5})}},
		{Content: []llm.Block{llmtest.ToolUse("StructuredOutput", map[string]any{"city": "Lyon"})}},
		{Content: []llm.Block{llmtest.Text("asked again after the structured output")}},
	}})
	opts := testOptions(t, srv)
	opts.JSONSchema = json.RawMessage(citySchema)
	msgs := collect(t, context.Background(), "which city?", opts)
	var results []*agent.ResultMessage
	for _, m := range msgs {
		if r, ok := m.(*agent.ResultMessage); ok {
			results = append(results, r)
		}
	}
	if len(results) != 1 {
		t.Fatalf("%d result messages, want 1", len(results))
	}
	r := results[0]
	if got, _ := json.Marshal(r.StructuredOutput); r.IsError || string(got) != `{"city":"Lyon"}` {
		t.Errorf("structured_output %s (error %v)", got, r.IsError)
	}
	if r.NumTurns != 3 {
		t.Errorf("num_turns %d, want 3 (both runs)", r.NumTurns)
	}
	// The accepted call ends the turn: the model is not asked again.
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3: none after the accepted StructuredOutput call", len(reqs))
	}
	if d := toolDescription(t, reqs[0], "StructuredOutput"); d == "" {
		t.Error("no StructuredOutput tool")
	}
	if !strings.Contains(string(reqs[1].Body), "without calling the StructuredOutput tool") {
		t.Error("no reminder after a turn that ended without the structured output")
	}
	if res := reqs[2].ToolResults(); len(res) != 1 || !res[0].IsError {
		t.Errorf("an input that breaks the schema was accepted: %+v", res)
	}
}

// A first call that matches the schema is the whole turn: one request.
func TestStructuredOutputEndsTheTurn(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		{Content: []llm.Block{llmtest.ToolUse("StructuredOutput", map[string]any{"city": "Lyon"})}},
		{Content: []llm.Block{llmtest.Text("asked again after the structured output")}},
	}})
	opts := testOptions(t, srv)
	opts.JSONSchema = json.RawMessage(citySchema)
	msgs := collect(t, context.Background(), "which city?", opts)
	r := msgs[len(msgs)-1].(*agent.ResultMessage)
	if got, _ := json.Marshal(r.StructuredOutput); r.IsError || r.Subtype != "success" || string(got) != `{"city":"Lyon"}` {
		t.Errorf("result %+v, structured_output %s", r, got)
	}
	if n := len(srv.Requests()); n != 1 || r.NumTurns != 1 {
		t.Errorf("%d requests, num_turns %d: want 1 and 1", n, r.NumTurns)
	}
	if r.Result != nil && strings.Contains(*r.Result, "asked again") {
		t.Errorf("result text %q comes from a second request", *r.Result)
	}
}

func TestStructuredOutputGivesUp(t *testing.T) {
	var turns []llmtest.Turn
	for range agent.MaxStructuredOutputRetries + 1 {
		turns = append(turns, llmtest.Turn{Content: []llm.Block{llmtest.Text("prose only")}})
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: turns})
	opts := testOptions(t, srv)
	opts.JSONSchema = json.RawMessage(citySchema)
	msgs := collect(t, context.Background(), "which city?", opts)
	r := msgs[len(msgs)-1].(*agent.ResultMessage)
	if !r.IsError || r.Subtype != "error_max_structured_output_retries" || len(srv.Requests()) != agent.MaxStructuredOutputRetries+1 {
		t.Errorf("result %+v after %d requests", r, len(srv.Requests()))
	}
}

func TestStructuredOutputNeedsAnObjectSchema(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{})
	opts := testOptions(t, srv)
	opts.JSONSchema = json.RawMessage(`{"type":"string"}`)
	for _, err := range agent.Query(context.Background(), "x", opts) {
		if err == nil || !strings.Contains(err.Error(), "--json-schema") {
			t.Errorf("err %v", err)
		}
		break
	}
}
