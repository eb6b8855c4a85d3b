package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// Turn is one scripted model response. Its JSON form is what script files hold.
type Turn struct {
	// Content is streamed back block by block: text, tool_use, thinking,
	// redacted_thinking, server_tool_use, or any block carried in Raw
	// (web_search_tool_result…). A tool_use or server_tool_use without an ID
	// gets a fresh unique one each time it is served.
	Content []llm.Block `json:"content"`
	// StopReason defaults to "tool_use" when Content holds a tool_use, else "end_turn".
	StopReason string `json:"stop_reason,omitempty"`
	// Usage defaults to small plausible numbers: input ≈ request bytes / 4,
	// output ≈ content bytes / 4, no cache tokens.
	Usage *llm.Usage `json:"usage,omitempty"`
	// Model defaults to the model named by the request.
	Model string `json:"model,omitempty"`
	// Faults are served one per attempt, in order, before the turn itself.
	Faults []Fault `json:"faults,omitempty"`
	// MalformedInput lets tool_use blocks of this turn carry input that is not
	// a JSON object (built with MalformedToolUse), as a model cut off by
	// max_tokens produces. The client must send such a call back with input {}.
	MalformedInput bool `json:"malformed_input,omitempty"`
	// Delay is waited before the first byte of every response to this turn,
	// faults included (JSON "delay_ms"). The wait ends early when the client
	// goes away or the server closes.
	Delay time.Duration `json:"-"`
	// When, if set on any turn, switches the server to matching: each
	// request is answered with the first turn not yet served whose When is
	// nil or accepts it. Concurrent conversations (a session and its
	// subagents) then each get their own turns whatever order their requests
	// arrive in. The echo check is skipped and faults cannot be scripted in
	// this mode, since requests interleave.
	When func(*Request) bool `json:"-"`
	// Build, when set, makes the content from the request it answers,
	// replacing Content: a model that uses an id it was just given.
	Build func(*Request) []llm.Block `json:"-"`
}

// Fault is one failed attempt at a turn. Set Status for an HTTP error
// response, or CutAfter and/or ErrorEvent for a stream that breaks.
type Fault struct {
	// Status is the HTTP status of an error response (429, 500, 529…); its body
	// is an Anthropic error object whose type follows from the status.
	Status int `json:"status,omitempty"`
	// RetryAfter is the value of the retry-after header of a Status fault.
	RetryAfter string `json:"retry_after,omitempty"`
	// CutAfter streams this many SSE events of the turn, then drops the
	// connection (or sends ErrorEvent, when set). It must be smaller than the
	// number of events of the turn, or the stream would be complete.
	CutAfter int `json:"cut_after,omitempty"`
	// ErrorEvent, when set, ends the stream after CutAfter events with an SSE
	// error event of this type (e.g. "overloaded_error") instead of a drop.
	ErrorEvent string `json:"error_event,omitempty"`
	// Message replaces the default error message of a Status or ErrorEvent
	// fault, e.g. "prompt is too long: 210000 tokens > 200000 maximum".
	Message string `json:"message,omitempty"`
}

// turnJSON is Turn's JSON form; it differs only in the delay's unit.
type turnJSON struct {
	Content    []llm.Block `json:"content"`
	StopReason string      `json:"stop_reason,omitempty"`
	Usage      *llm.Usage  `json:"usage,omitempty"`
	Model      string      `json:"model,omitempty"`
	Faults     []Fault     `json:"faults,omitempty"`
	Malformed  bool        `json:"malformed_input,omitempty"`
	DelayMS    int64       `json:"delay_ms,omitempty"`
}

// MarshalJSON writes the script-file form, with Delay as "delay_ms".
func (t Turn) MarshalJSON() ([]byte, error) {
	return jsonx.Marshal(turnJSON{
		Content: t.Content, StopReason: t.StopReason, Usage: t.Usage,
		Model: t.Model, Faults: t.Faults, Malformed: t.MalformedInput, DelayMS: t.Delay.Milliseconds(),
	})
}

// UnmarshalJSON reads the script-file form. Unknown keys are errors, so a
// misspelt "stop_reason" or "cut_after" does not silently do nothing.
func (t *Turn) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w turnJSON
	if err := dec.Decode(&w); err != nil {
		return err
	}
	if w.DelayMS < 0 {
		return fmt.Errorf("delay_ms %d is negative", w.DelayMS)
	}
	*t = Turn{
		Content: w.Content, StopReason: w.StopReason, Usage: w.Usage,
		Model: w.Model, Faults: w.Faults, MalformedInput: w.Malformed, Delay: time.Duration(w.DelayMS) * time.Millisecond,
	}
	return nil
}

// LoadScript reads a script file: a JSON array of turns.
func LoadScript(path string) ([]Turn, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: load script: %w", err)
	}
	var turns []Turn
	if err := json.Unmarshal(data, &turns); err != nil {
		return nil, fmt.Errorf("llmtest: load script %s: %w", path, err)
	}
	if err := validateTurns(turns, 0); err != nil {
		return nil, fmt.Errorf("llmtest: load script %s: %w", path, err)
	}
	return turns, nil
}

// MalformedToolUse returns a tool_use whose streamed input is the given text,
// which need not be JSON (use it in a Turn with MalformedInput set).
func MalformedToolUse(name, input string) llm.Block {
	return llm.Block{Type: llm.TypeToolUse, Name: name, Input: json.RawMessage(input)}
}

// Reply returns a turn made of blocks, with every other field defaulted.
func Reply(blocks ...llm.Block) Turn { return Turn{Content: blocks} }

// Text returns a text block.
func Text(s string) llm.Block { return llm.Text(s) }

// ToolUse returns a tool_use block calling name with input marshalled to
// JSON (nil means {}). Its ID is left empty so the server assigns a unique
// "toolu_…" id when serving it; set ID to pin one. It panics if input cannot
// be marshalled, which is a mistake in the test itself.
func ToolUse(name string, input any) llm.Block {
	raw := json.RawMessage("{}")
	if input != nil {
		enc, err := jsonx.Marshal(input)
		if err != nil {
			panic(fmt.Sprintf("llmtest.ToolUse(%q): marshal input: %v", name, err))
		}
		raw = enc
	}
	return llm.Block{Type: llm.TypeToolUse, Name: name, Input: raw}
}

// Thinking returns a thinking block with a fake signature derived from text.
func Thinking(text string) llm.Block {
	return llm.Block{Type: llm.TypeThinking, Thinking: text, Signature: fakeSignature(text)}
}

// RedactedThinking returns a redacted_thinking block holding data.
func RedactedThinking(data string) llm.Block {
	return llm.Block{Type: llm.TypeRedactedThinking, Data: data}
}

// fakeSignature looks like a real thinking signature (opaque base64) and is
// stable for a given text, so golden outputs do not change between runs.
func fakeSignature(text string) string {
	sum := sha256.Sum256([]byte("llmtest-thinking\x00" + text))
	return "EqoB" + base64.StdEncoding.EncodeToString(sum[:])
}

// stopReasons are the values the API sends in message_delta.
var stopReasons = map[string]bool{
	"end_turn": true, "tool_use": true, "max_tokens": true, "stop_sequence": true,
	"pause_turn": true, "refusal": true, "model_context_window_exceeded": true,
}

// validateTurns checks every turn; first is the script index of turns[0].
func validateTurns(turns []Turn, first int) error {
	var errs []error
	for i := range turns {
		if err := turns[i].validate(); err != nil {
			errs = append(errs, fmt.Errorf("turn %d: %w", first+i, err))
		}
	}
	return errors.Join(errs...)
}

// validate reports mistakes in a scripted turn: they would otherwise show up
// as confusing failures in the client under test.
func (t *Turn) validate() error {
	var errs []error
	ids := map[string]bool{}
	for i, b := range t.Content {
		if err := validateBlock(b, t.MalformedInput); err != nil {
			errs = append(errs, fmt.Errorf("content[%d]: %w", i, err))
		}
		if b.ID != "" && (b.Type == llm.TypeToolUse || b.Type == llm.TypeServerToolUse) {
			if ids[b.ID] {
				errs = append(errs, fmt.Errorf("content[%d]: duplicate id %q", i, b.ID))
			}
			ids[b.ID] = true
		}
	}
	if t.StopReason != "" && !stopReasons[t.StopReason] {
		errs = append(errs, fmt.Errorf("unknown stop_reason %q", t.StopReason))
	}
	if t.Delay < 0 {
		errs = append(errs, fmt.Errorf("negative delay %v", t.Delay))
	}
	events := -1 // computed on demand: only cut faults need it
	for i, f := range t.Faults {
		switch {
		case f.Status != 0 && (f.CutAfter != 0 || f.ErrorEvent != ""):
			errs = append(errs, fmt.Errorf("fault %d: status cannot be combined with cut_after or error_event", i))
		case f.Status != 0:
			if f.Status < 400 || f.Status > 599 {
				errs = append(errs, fmt.Errorf("fault %d: status %d is not an HTTP error status", i, f.Status))
			}
		case f.CutAfter == 0 && f.ErrorEvent == "":
			errs = append(errs, fmt.Errorf("fault %d: empty fault: set status, cut_after or error_event", i))
		default:
			if f.RetryAfter != "" {
				errs = append(errs, fmt.Errorf("fault %d: retry_after needs status", i))
			}
			if f.CutAfter < 0 {
				errs = append(errs, fmt.Errorf("fault %d: negative cut_after %d", i, f.CutAfter))
				continue
			}
			if events < 0 {
				events = renderStream(streamParams{content: t.Content}).count()
			}
			if f.CutAfter >= events {
				errs = append(errs, fmt.Errorf("fault %d: cut_after %d but the turn has only %d events, so the stream would be complete", i, f.CutAfter, events))
			}
		}
	}
	return errors.Join(errs...)
}

func validateBlock(b llm.Block, malformedOK bool) error {
	if len(b.Raw) > 0 {
		if !json.Valid(b.Raw) {
			return errors.New("raw block is not valid JSON")
		}
		return nil
	}
	switch b.Type {
	case llm.TypeText, llm.TypeThinking, llm.TypeRedactedThinking:
		return nil
	case llm.TypeToolUse, llm.TypeServerToolUse:
		if b.Name == "" {
			return fmt.Errorf("%s without a name", b.Type)
		}
		if len(b.Input) > 0 && !isJSONObject(b.Input) && !malformedOK {
			return fmt.Errorf("%s %q: input must be a JSON object, got %s", b.Type, b.Name, b.Input)
		}
		return nil
	case "":
		return errors.New("block without a type")
	default:
		return fmt.Errorf("a model cannot send a %q block (carry other block types in Raw)", b.Type)
	}
}

// isJSONObject reports whether raw is a valid JSON object.
func isJSONObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// SystemContains is a When that accepts requests whose system prompt holds s.
func SystemContains(s string) func(*Request) bool {
	return func(r *Request) bool {
		for _, b := range r.System {
			if strings.Contains(b.Text, s) {
				return true
			}
		}
		return false
	}
}

// FirstUserContains is a When that accepts requests whose first user
// message has a text block holding s: the prompt that began the conversation.
func FirstUserContains(s string) func(*Request) bool {
	return func(r *Request) bool {
		for _, m := range r.Messages {
			if m.Role != llm.RoleUser {
				continue
			}
			for _, b := range m.Content {
				if b.Type == llm.TypeText && strings.Contains(b.Text, s) {
					return true
				}
			}
			return false
		}
		return false
	}
}
