package openai

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// chunk is one streamed Chat Completions chunk, as far as tack reads it.
type chunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// accumulator builds a response from the chunks of one attempt and
// reports them as the Messages API's events: each run of text, of
// reasoning and each tool call is one content block, opened when its first
// fragment arrives and closed when another kind begins.
type accumulator struct {
	model        string // the name tack knows the model by ("local/qwen3")
	caps         Capabilities
	resp         llm.Response
	started      bool
	open         int            // index of the open block, -1 for none
	calls        map[int]int    // tool call index → block index
	partial      map[int][]byte // block index → arguments so far
	finishReason string
	sawDone      bool
}

func newAccumulator(model string, caps Capabilities) *accumulator {
	return &accumulator{model: model, caps: caps, open: -1, calls: map[int]int{}, partial: map[int][]byte{}}
}

// add folds one chunk in, emitting its events.
func (a *accumulator) add(data []byte, emit func(llm.StreamEvent)) error {
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &streamError{err: fmt.Errorf("decode chunk: %w", err)}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		typ, msg := errorBody(append(append([]byte(`{"error":`), c.Error...), '}'))
		return &llm.APIError{Type: typ, Message: msg}
	}
	if !a.started {
		a.started = true
		a.resp = llm.Response{ID: c.ID, Model: a.model}
		start := map[string]any{"type": "message_start", "message": map[string]any{
			"id": c.ID, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 0, "output_tokens": 0},
		}}
		a.emit(emit, llm.StreamEvent{Type: "message_start"}, start)
	}
	if u := c.Usage; u != nil {
		var cached int64
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		// prompt_tokens counts the cached ones; the Messages API's
		// input_tokens does not, and cost prices the two apart.
		a.resp.Usage.InputTokens = max(0, u.PromptTokens-cached)
		a.resp.Usage.CacheReadInputTokens = cached
		a.resp.Usage.OutputTokens = u.CompletionTokens
	}
	for _, ch := range c.Choices {
		d := ch.Delta
		reasoning := d.ReasoningContent
		if reasoning == nil {
			reasoning = d.Reasoning
		}
		if reasoning != nil && *reasoning != "" && a.caps.Reasoning {
			a.text(emit, llm.TypeThinking, *reasoning)
		}
		if d.Content != nil && *d.Content != "" {
			a.text(emit, llm.TypeText, *d.Content)
		}
		for _, tc := range d.ToolCalls {
			a.toolCall(emit, tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finishReason = *ch.FinishReason
		}
	}
	return nil
}

// text appends a text or thinking fragment, opening a block for it when
// the open one is of another kind.
func (a *accumulator) text(emit func(llm.StreamEvent), typ, s string) {
	if a.open < 0 || a.resp.Content[a.open].Type != typ {
		b := llm.Block{Type: typ}
		a.startBlock(emit, b)
	}
	b := &a.resp.Content[a.open]
	var delta map[string]string
	se := llm.StreamEvent{Type: "content_block_delta", Index: a.open}
	if typ == llm.TypeText {
		b.Text += s
		delta = map[string]string{"type": "text_delta", "text": s}
		se.Delta = llm.Delta{Type: "text_delta", Text: s}
	} else {
		b.Thinking += s
		delta = map[string]string{"type": "thinking_delta", "thinking": s}
		se.Delta = llm.Delta{Type: "thinking_delta", Text: s}
	}
	a.emit(emit, se, map[string]any{"type": "content_block_delta", "index": a.open, "delta": delta})
}

// toolCall folds in a fragment of tool call i: the first carries its id
// and name and opens its block; the rest carry arguments.
func (a *accumulator) toolCall(emit func(llm.StreamEvent), i int, id, name, args string) {
	idx, ok := a.calls[i]
	if !ok {
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", a.resp.ID, i)
		}
		a.startBlock(emit, llm.Block{Type: llm.TypeToolUse, ID: id, Name: name, Input: json.RawMessage("{}")})
		idx = a.open
		a.calls[i] = idx
	} else if name != "" && a.resp.Content[idx].Name == "" {
		a.resp.Content[idx].Name = name
	}
	if args == "" {
		return
	}
	a.partial[idx] = append(a.partial[idx], args...)
	if idx != a.open {
		// A fragment of a call whose block is closed (servers send the
		// calls one after another; this one did not): its arguments are
		// kept, but no event can carry them any more.
		return
	}
	se := llm.StreamEvent{Type: "content_block_delta", Index: idx, Delta: llm.Delta{Type: "input_json_delta", Text: args}}
	a.emit(emit, se, map[string]any{"type": "content_block_delta", "index": idx,
		"delta": map[string]string{"type": "input_json_delta", "partial_json": args}})
}

func (a *accumulator) startBlock(emit func(llm.StreamEvent), b llm.Block) {
	a.closeBlock(emit)
	a.resp.Content = append(a.resp.Content, b)
	a.open = len(a.resp.Content) - 1
	var start any
	switch b.Type {
	case llm.TypeText:
		start = map[string]string{"type": "text", "text": ""}
	case llm.TypeThinking:
		start = map[string]string{"type": "thinking", "thinking": "", "signature": ""}
	default:
		start = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
	}
	a.emit(emit, llm.StreamEvent{Type: "content_block_start", Index: a.open},
		map[string]any{"type": "content_block_start", "index": a.open, "content_block": start})
}

func (a *accumulator) closeBlock(emit func(llm.StreamEvent)) {
	if a.open < 0 {
		return
	}
	a.emit(emit, llm.StreamEvent{Type: "content_block_stop", Index: a.open},
		map[string]any{"type": "content_block_stop", "index": a.open})
	a.open = -1
}

// finish ends the response: the stream must have given a finish reason.
func (a *accumulator) finish(emit func(llm.StreamEvent)) (*llm.Response, error) {
	if !a.started {
		return nil, &streamError{err: errors.New("no chunk before the end of the stream")}
	}
	if a.finishReason == "" {
		return nil, &streamError{err: errors.New("stream ended before a finish_reason")}
	}
	a.closeBlock(emit)
	for idx, args := range a.partial {
		// Kept even when it is not valid JSON: the engine reports that
		// to the model as a tool_use_error rather than guessing here.
		a.resp.Content[idx].Input = json.RawMessage(args)
	}
	a.resp.StopReason = stopReason(a.finishReason, a.calls)
	u := a.resp.Usage
	a.emit(emit, llm.StreamEvent{Type: "message_delta"}, map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": a.resp.StopReason, "stop_sequence": nil},
		"usage": map[string]int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "cache_read_input_tokens": u.CacheReadInputTokens}})
	a.emit(emit, llm.StreamEvent{Type: "message_stop"}, map[string]string{"type": "message_stop"})
	resp := a.resp
	return &resp, nil
}

// stopReason maps finish_reason to the Messages API's stop reason. Some
// servers finish a turn of tool calls with "stop": the calls decide.
func stopReason(finish string, calls map[int]int) string {
	switch {
	case len(calls) > 0 && (finish == "stop" || finish == "tool_calls" || finish == "function_call"):
		return "tool_use"
	case finish == "length":
		return "max_tokens"
	case finish == "content_filter":
		return "refusal"
	}
	return "end_turn"
}

func (a *accumulator) emit(emit func(llm.StreamEvent), se llm.StreamEvent, raw any) {
	if emit == nil {
		return
	}
	se.Raw, _ = jsonx.Marshal(raw)
	emit(se)
}
