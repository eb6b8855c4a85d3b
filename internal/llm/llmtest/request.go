package llmtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// Request is one request the server received, with its body decoded and a
// record of how it was answered.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte // raw body

	// The decoded body; zero where the body lacks the key or is not JSON.
	Model      string
	MaxTokens  int
	System     []llm.Block // a string system prompt becomes one text block
	Messages   []llm.Message
	Tools      []json.RawMessage // each tool object verbatim
	Stream     bool
	Thinking   json.RawMessage
	ToolChoice json.RawMessage
	Metadata   json.RawMessage

	// TurnIndex is the index in the script of the turn this request was
	// answered with (or would have been: for a violation, the current turn;
	// when the script is exhausted, its length). -1 for a request to a path
	// other than /v1/messages.
	TurnIndex int
	// Attempt is 1 for the first request at a turn, 2 for the one after the
	// first fault, and so on.
	Attempt int
	// Fault is the fault served to this request; nil when the turn itself was
	// served or the request was rejected.
	Fault *Fault
	// Response is the content streamed back, with the ids the server filled
	// in; nil when the answer was an HTTP error. For a cut stream it is the
	// whole turn, of which only a part reached the client.
	Response []llm.Block
	// Unauthorized is set when Options.Authorize refused the request: it
	// was answered 401 and did not count as an attempt at its turn.
	Unauthorized bool
	// Violations are the invariants this request broke; when there are any
	// the answer was an error and the script did not move.
	Violations []string

	// Received is when the request arrived; Done is when the last byte of the
	// answer was written (zero if the client went away first). The gap from
	// one request's Done to the next one's Received is time spent in the client.
	Received, Done time.Time

	// chat is set for a Chat Completions request: its answers are in that
	// format. Its decoded fields above are the Messages form of the body.
	chat bool
}

// ToolUseIDs returns the ids of the tool_use blocks served in Response.
func (r Request) ToolUseIDs() []string {
	var ids []string
	for _, b := range r.Response {
		if b.Type == llm.TypeToolUse {
			ids = append(ids, b.ID)
		}
	}
	return ids
}

// ToolNames returns the name of each tool in the tools array, in order.
func (r Request) ToolNames() []string {
	names := make([]string, 0, len(r.Tools))
	for _, raw := range r.Tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil {
			names = append(names, t.Name)
		}
	}
	return names
}

// Tool returns the tool object named name, nil when there is none.
func (r Request) Tool(name string) json.RawMessage {
	for _, raw := range r.Tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Name == name {
			return raw
		}
	}
	return nil
}

// SystemText joins the text of the system blocks.
func (r Request) SystemText() string { return llm.TextOf(r.System) }

// LastMessage returns the last message, the zero Message when there is none.
func (r Request) LastMessage() llm.Message {
	if len(r.Messages) == 0 {
		return llm.Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// LastUserText joins the text blocks of the last user message (tool_result
// content excluded).
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return llm.TextOf(r.Messages[i].Content)
		}
	}
	return ""
}

// ToolResults returns the tool_result blocks of the last message.
func (r Request) ToolResults() []llm.Block {
	var out []llm.Block
	for _, b := range r.LastMessage().Content {
		if b.Type == llm.TypeToolResult {
			out = append(out, b)
		}
	}
	return out
}

// ToolResult returns the tool_result answering toolUseID in any message.
func (r Request) ToolResult(toolUseID string) (llm.Block, bool) {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == llm.TypeToolResult && b.ToolUseID == toolUseID {
				return b, true
			}
		}
	}
	return llm.Block{}, false
}

// CacheBreakpoints counts the cache_control markers in tools, system and
// messages, tool_result content included.
func (r Request) CacheBreakpoints() int {
	return len(breakpoints(r.System, r.Tools, r.Messages))
}

// breakpoint is one cache_control marker and where it is.
type breakpoint struct {
	loc string
	cc  llm.CacheControl
}

// breakpoints lists cache_control markers in prefix order: tools, system,
// messages (the order the API builds the cached prefix in).
func breakpoints(system []llm.Block, tools []json.RawMessage, msgs []llm.Message) []breakpoint {
	var out []breakpoint
	for i, raw := range tools {
		if cc, ok := rawCacheControl(raw); ok {
			out = append(out, breakpoint{loc: "tools[" + itoa(i) + "]", cc: cc})
		}
	}
	for i, b := range system {
		out = appendBlockBreakpoints(out, "system["+itoa(i)+"]", b)
	}
	for i, m := range msgs {
		for j, b := range m.Content {
			out = appendBlockBreakpoints(out, "messages["+itoa(i)+"].content["+itoa(j)+"]", b)
		}
	}
	return out
}

func appendBlockBreakpoints(out []breakpoint, loc string, b llm.Block) []breakpoint {
	switch {
	case b.CacheControl != nil:
		out = append(out, breakpoint{loc: loc, cc: *b.CacheControl})
	case len(b.Raw) > 0:
		// llm.Block keeps the marker of a block type it does not model
		// inside Raw.
		if cc, ok := rawCacheControl(b.Raw); ok {
			out = append(out, breakpoint{loc: loc, cc: cc})
		}
	}
	for k, c := range b.Content {
		out = appendBlockBreakpoints(out, loc+".content["+itoa(k)+"]", c)
	}
	return out
}

// rawCacheControl reads the cache_control of a JSON object.
func rawCacheControl(raw json.RawMessage) (llm.CacheControl, bool) {
	if !bytes.Contains(raw, []byte(`"cache_control"`)) {
		return llm.CacheControl{}, false // the common case, without a parse
	}
	var v struct {
		CacheControl *llm.CacheControl `json:"cache_control"`
	}
	if json.Unmarshal(raw, &v) != nil || v.CacheControl == nil {
		return llm.CacheControl{}, false
	}
	return *v.CacheControl, true
}
