package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/llm"
)

// accumulator builds a response from the SSE events of one attempt.
type accumulator struct {
	resp    llm.Response
	partial [][]byte // input_json_delta text per block index
	started bool
	done    bool
}

// event is the part of an SSE event's JSON the accumulator reads.
type event struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      json.RawMessage `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        struct {
		Type         string  `json:"type"`
		Text         string  `json:"text"`
		PartialJSON  string  `json:"partial_json"`
		Thinking     string  `json:"thinking"`
		Signature    string  `json:"signature"`
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *llm.Usage `json:"usage"`
}

// add folds one event in and returns it in provider-neutral form.
func (a *accumulator) add(raw []byte) (llm.StreamEvent, error) {
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return llm.StreamEvent{}, fmt.Errorf("decode event: %w", err)
	}
	se := llm.StreamEvent{Type: ev.Type, Index: ev.Index, Raw: raw}
	switch ev.Type {
	case "message_start":
		var m struct {
			ID    string    `json:"id"`
			Model string    `json:"model"`
			Usage llm.Usage `json:"usage"`
		}
		if err := json.Unmarshal(ev.Message, &m); err != nil {
			return se, fmt.Errorf("decode message_start: %w", err)
		}
		a.resp = llm.Response{ID: m.ID, Model: m.Model, Usage: m.Usage}
		a.partial = nil
		a.started = true
	case "content_block_start":
		if !a.started {
			return se, fmt.Errorf("content_block_start before message_start")
		}
		if ev.Index != len(a.resp.Content) {
			return se, fmt.Errorf("content_block_start index %d, expected %d", ev.Index, len(a.resp.Content))
		}
		var b llm.Block
		if err := json.Unmarshal(ev.ContentBlock, &b); err != nil {
			return se, fmt.Errorf("decode content block %d: %w", ev.Index, err)
		}
		a.resp.Content = append(a.resp.Content, b)
		a.partial = append(a.partial, nil)
	case "content_block_delta":
		if ev.Index < 0 || ev.Index >= len(a.resp.Content) {
			return se, fmt.Errorf("delta for unknown block %d", ev.Index)
		}
		b := &a.resp.Content[ev.Index]
		se.Delta.Type = ev.Delta.Type
		switch ev.Delta.Type {
		case "text_delta":
			b.Text += ev.Delta.Text
			se.Delta.Text = ev.Delta.Text
		case "input_json_delta":
			a.partial[ev.Index] = append(a.partial[ev.Index], ev.Delta.PartialJSON...)
			se.Delta.Text = ev.Delta.PartialJSON
		case "thinking_delta":
			b.Thinking += ev.Delta.Thinking
			se.Delta.Text = ev.Delta.Thinking
		case "signature_delta":
			b.Signature += ev.Delta.Signature
			se.Delta.Text = ev.Delta.Signature
		}
	case "content_block_stop":
		if ev.Index < 0 || ev.Index >= len(a.resp.Content) {
			return se, fmt.Errorf("stop for unknown block %d", ev.Index)
		}
		b := &a.resp.Content[ev.Index]
		if js := bytes.TrimSpace(a.partial[ev.Index]); len(js) > 0 {
			// Kept even when it is not valid JSON: the engine reports that
			// to the model as a tool_use_error rather than guessing here.
			b.Input = json.RawMessage(js)
		} else if (b.Type == llm.TypeToolUse || b.Type == llm.TypeServerToolUse) && len(b.Input) == 0 {
			b.Input = json.RawMessage("{}")
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.resp.StopReason = ev.Delta.StopReason
		}
		if ev.Delta.StopSequence != nil {
			a.resp.StopSequence = *ev.Delta.StopSequence
		}
		if u := ev.Usage; u != nil {
			// message_delta usage is cumulative; input counts appear only
			// when the server revises them.
			a.resp.Usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				a.resp.Usage.InputTokens = u.InputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				a.resp.Usage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
			if u.CacheReadInputTokens > 0 {
				a.resp.Usage.CacheReadInputTokens = u.CacheReadInputTokens
			}
			if u.ServerToolUse != nil {
				a.resp.Usage.ServerToolUse = u.ServerToolUse
			}
			if u.CacheCreation != nil {
				a.resp.Usage.CacheCreation = u.CacheCreation
			}
		}
	case "message_stop":
		a.done = true
	}
	return se, nil
}

// finish returns the assembled response.
func (a *accumulator) finish() (*llm.Response, error) {
	if !a.started {
		return nil, &streamError{err: fmt.Errorf("no message_start")}
	}
	resp := a.resp
	return &resp, nil
}
