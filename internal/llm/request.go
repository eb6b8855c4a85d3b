package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ToolSpec is one entry of the tools array. A server tool (web search…) has
// only Raw, sent verbatim.
type ToolSpec struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	DeferLoading bool
	CacheControl *CacheControl
	Raw          json.RawMessage
}

// Thinking configures extended thinking: Type is "enabled" (with BudgetTokens),
// "adaptive" or "disabled".
type Thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	// Display is how thinking comes back: "summarized" or "omitted" (""
	// leaves the API's default).
	Display string `json:"display,omitempty"`
}

// EffortBeta and TaskBudgetBeta are the anthropic-beta values a request
// with an effort, or with a task budget, needs.
const (
	EffortBeta     = "effort-2025-11-24"
	TaskBudgetBeta = "task-budgets-2026-03-13"
)

// Request is one Messages API call. Its JSON form (Body) is what goes on the
// wire, built by hand so that the bytes of an unchanged prefix never move.
type Request struct {
	Model     string
	System    []Block // text blocks
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	Thinking  *Thinking
	// Effort is output_config.effort: low, medium, high, xhigh or max (""
	// sends none, and the API works at its default, high).
	Effort string
	// TaskBudget is output_config.task_budget: the tokens the whole task
	// may take, which the model paces itself by (0: none).
	TaskBudget  int
	ToolChoice  json.RawMessage
	Temperature *float64
	UserID      string // metadata.user_id
	Betas       []string
	// Cache, when set, reuses the encoding of messages an earlier request
	// of the same conversation sent (see EncodeCache). It changes no byte.
	Cache *EncodeCache
	// Extends promises Cache that Messages, when it is the very array the
	// cache's latest request sent (grown in its spare capacity, cut, or
	// neither), differs from that request's messages only at its last
	// message, at those that carried a cache breakpoint and past the end
	// of the shorter of the two, as a
	// conversation's requests do when each extends the previous one's
	// array. The cache then looks at those messages alone, and reuses the
	// bytes of all the others without reading them: the cost of a request
	// no longer grows with the history. A request in another array is
	// checked message by message, whatever Extends says.
	Extends bool
}

// Body returns the request body, with "stream": true, in one slice (see
// Encode).
func (r *Request) Body() ([]byte, error) {
	b, err := r.Encode()
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Encode returns the request body, with "stream": true, as segments. With a
// Cache, the messages an earlier request sent are not encoded again: their
// bytes are reused where they lie, and this body's are kept for the next
// request; none of them may be changed.
func (r *Request) Encode() (*EncodedBody, error) {
	if r.Cache != nil {
		r.Cache.mu.Lock()
		defer r.Cache.mu.Unlock()
	}
	w := &bodyWriter{}
	buf := &w.buf
	buf.Grow(r.sizeHint())
	buf.WriteString(`{"model":`)
	writeString(buf, r.Model)
	buf.WriteString(`,"max_tokens":`)
	buf.WriteString(strconv.Itoa(r.MaxTokens))
	if len(r.System) > 0 {
		buf.WriteString(`,"system":`)
		if err := encodeSystem(buf, r.System); err != nil {
			return nil, err
		}
	}
	buf.WriteString(`,"messages":[`)
	if err := r.Cache.encodeMessages(w, r.Messages, r.Extends); err != nil {
		return nil, err
	}
	buf.WriteByte(']')
	if len(r.Tools) > 0 {
		buf.WriteString(`,"tools":`)
		r.Cache.encodeTools(w, r.Tools)
	}
	if len(r.ToolChoice) > 0 {
		buf.WriteString(`,"tool_choice":`)
		buf.Write(r.ToolChoice)
	}
	if r.Thinking != nil {
		buf.WriteString(`,"thinking":`)
		writeJSON(buf, r.Thinking)
	}
	r.writeOutputConfig(buf)
	if r.Temperature != nil {
		buf.WriteString(`,"temperature":`)
		buf.WriteString(strconv.FormatFloat(*r.Temperature, 'g', -1, 64))
	}
	if r.UserID != "" {
		buf.WriteString(`,"metadata":{"user_id":`)
		writeString(buf, r.UserID)
		buf.WriteByte('}')
	}
	buf.WriteString(`,"stream":true}`)
	body, final := w.finish()
	if r.Cache != nil {
		r.Cache.done(w, final)
	}
	return body, nil
}

// encodeSystem writes the system array.
func encodeSystem(buf *bytes.Buffer, blocks []Block) error {
	buf.WriteByte('[')
	for i, b := range blocks {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := b.encode(buf); err != nil {
			return fmt.Errorf("system block %d: %w", i, err)
		}
	}
	buf.WriteByte(']')
	return nil
}

// EncodePrefix returns the system and tools arrays of the request's body,
// byte for byte as Encode writes them ("[]" when there are none), without
// the rest of the body.
func (r *Request) EncodePrefix() (system, tools []byte, err error) {
	var buf bytes.Buffer
	if err := encodeSystem(&buf, r.System); err != nil {
		return nil, nil, err
	}
	w := &bodyWriter{}
	(*EncodeCache)(nil).encodeTools(w, r.Tools)
	return buf.Bytes(), w.buf.Bytes(), nil
}

func (t ToolSpec) encode(buf *bytes.Buffer) {
	if len(t.Raw) > 0 {
		buf.Write(t.Raw)
		return
	}
	buf.WriteString(`{"name":`)
	writeString(buf, t.Name)
	if t.Description != "" {
		buf.WriteString(`,"description":`)
		writeString(buf, t.Description)
	}
	buf.WriteString(`,"input_schema":`)
	if len(t.InputSchema) == 0 {
		buf.WriteString(`{"type":"object","properties":{}}`)
	} else if json.Compact(buf, t.InputSchema) != nil {
		// Schemas are written for people (indented .json files, MCP
		// servers' own); the wire gets them without the whitespace.
		// One that is not valid JSON goes as it is, for the API to refuse.
		buf.Write(t.InputSchema)
	}
	if t.DeferLoading {
		buf.WriteString(`,"defer_loading":true`)
	}
	if t.CacheControl != nil {
		buf.WriteString(`,"cache_control":`)
		writeJSON(buf, t.CacheControl)
	}
	buf.WriteByte('}')
}

func (r *Request) sizeHint() int {
	n := 512
	for _, b := range r.System {
		n += len(b.Text) + 64
	}
	for _, t := range r.Tools {
		n += len(t.Description) + len(t.InputSchema) + len(t.Raw) + 64
	}
	if c := r.Cache; c != nil && len(c.keys) > 0 {
		// Only the new messages are written here: room for a turn is
		// cheaper than walking a long history to add up its sizes. When
		// the history is copied in (see maxRuns), its size is known.
		if c.runs > maxRuns {
			n += c.historySize()
		}
		return n + 16<<10
	}
	return n + messagesSize(r.Messages)
}

// messagesSize is about the size of msgs encoded.
func messagesSize(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			n += 64 + len(b.Text) + len(b.Input) + len(b.Thinking) + len(b.Raw)
			for _, c := range b.Content {
				n += 32 + len(c.Text)
				if c.Source != nil {
					n += len(c.Source.Data)
				}
			}
		}
	}
	return n
}

// writeOutputConfig writes output_config when the request has an effort or
// a task budget.
func (r *Request) writeOutputConfig(buf *bytes.Buffer) {
	if r.Effort == "" && r.TaskBudget <= 0 {
		return
	}
	buf.WriteString(`,"output_config":{`)
	if r.Effort != "" {
		buf.WriteString(`"effort":`)
		writeString(buf, r.Effort)
	}
	if r.TaskBudget > 0 {
		if r.Effort != "" {
			buf.WriteByte(',')
		}
		buf.WriteString(`"task_budget":{"type":"tokens","total":`)
		buf.WriteString(strconv.Itoa(r.TaskBudget))
		buf.WriteByte('}')
	}
	buf.WriteByte('}')
}
