package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tackcode/tack/internal/llm"
)

const (
	apiVersion     = "2023-06-01"
	maxBreakpoints = 4
)

// topLevelKeys are the body keys the Messages API accepts (beta ones
// included); the API rejects any other with "Extra inputs are not permitted".
var topLevelKeys = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true,
	"metadata": true, "max_tokens": true, "thinking": true, "stream": true,
	"temperature": true, "top_p": true, "top_k": true, "stop_sequences": true,
	"service_tier": true, "container": true, "mcp_servers": true,
	"context_management": true, "output_format": true, "output_config": true,
}

// inspection is what the checks that need server state (the echo of served
// tool_use blocks) learn from a request.
type inspection struct {
	hasAssistant bool
	toolUses     map[string]llm.Block // tool_use blocks of assistant messages, by id
	order        []string             // their ids in message order
}

// problems collects violation messages.
type problems []string

func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Sprintf(format, args...))
}

// inspectHeaders checks what every API call must carry.
func inspectHeaders(h http.Header, p *problems) {
	switch v := h.Get("anthropic-version"); v {
	case apiVersion:
	case "":
		p.add("header anthropic-version is missing (want %q)", apiVersion)
	default:
		p.add("header anthropic-version is %q, want %q", v, apiVersion)
	}
	bearer, isBearer := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if h.Get("x-api-key") == "" && (!isBearer || strings.TrimSpace(bearer) == "") {
		p.add("no credentials: want header x-api-key or authorization: Bearer <token>")
	}
	if ct := h.Get("Content-Type"); ct == "" {
		p.add("header content-type is missing (want application/json)")
	} else if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		p.add("header content-type is %q, want application/json", ct)
	}
}

// wireBody is a request body decoded in one pass: the big parts typed, the
// small ones raw so each gets a precise message when it has the wrong type.
type wireBody struct {
	Model      json.RawMessage   `json:"model"`
	MaxTokens  json.RawMessage   `json:"max_tokens"`
	Stream     json.RawMessage   `json:"stream"`
	System     json.RawMessage   `json:"system"`
	Messages   *[]llm.Message    `json:"messages"`
	Tools      []json.RawMessage `json:"tools"`
	Thinking   json.RawMessage   `json:"thinking"`
	ToolChoice json.RawMessage   `json:"tool_choice"`
	Metadata   json.RawMessage   `json:"metadata"`
}

// decodeBody decodes body and returns its top-level keys. The fast path is
// one Unmarshal and a key scan; only a body with a badly typed part takes
// the slow path, which decodes key by key to say which part is wrong.
func decodeBody(body []byte, p *problems) (wb wireBody, keys []string, ok bool) {
	if err := json.Unmarshal(body, &wb); err == nil {
		return wb, topKeys(body), true
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		p.add("body is not a JSON object: %v", err)
		return wireBody{}, nil, false
	}
	wb = wireBody{}
	for k, raw := range top {
		keys = append(keys, k)
		var err error
		switch k {
		case "model":
			wb.Model = raw
		case "max_tokens":
			wb.MaxTokens = raw
		case "stream":
			wb.Stream = raw
		case "system":
			wb.System = raw
		case "thinking":
			wb.Thinking = raw
		case "tool_choice":
			wb.ToolChoice = raw
		case "metadata":
			wb.Metadata = raw
		case "messages":
			err = json.Unmarshal(raw, &wb.Messages)
		case "tools":
			err = json.Unmarshal(raw, &wb.Tools)
		}
		if err != nil {
			p.add("%s cannot be decoded: %v", k, err)
		}
	}
	slices.Sort(keys)
	return wb, keys, true
}

// inspectBody decodes a Messages API body into req and checks it. For
// count_tokens (messagesCall false) max_tokens and stream are not required.
func (s *Server) inspectBody(body []byte, req *Request, messagesCall bool, p *problems) inspection {
	wb, keys, ok := decodeBody(body, p)
	if !ok {
		return inspection{}
	}
	if messagesCall {
		for _, k := range keys {
			if !topLevelKeys[k] {
				p.add("unknown body key %q: the API rejects extra inputs", k)
			}
		}
	}

	if wb.Model == nil {
		p.add("model is missing")
	} else if err := json.Unmarshal(wb.Model, &req.Model); err != nil {
		p.add("model must be a string, got %s", wb.Model)
	} else if req.Model == "" {
		p.add("model is empty")
	}
	if messagesCall {
		if wb.MaxTokens == nil {
			p.add("max_tokens is missing")
		} else if err := json.Unmarshal(wb.MaxTokens, &req.MaxTokens); err != nil {
			p.add("max_tokens must be an integer, got %s", wb.MaxTokens)
		} else if req.MaxTokens <= 0 {
			p.add("max_tokens must be > 0, got %d", req.MaxTokens)
		}
		if wb.Stream == nil {
			p.add("stream is missing: requests must be streamed (stream: true)")
		} else if err := json.Unmarshal(wb.Stream, &req.Stream); err != nil {
			p.add("stream must be a boolean, got %s", wb.Stream)
		} else if !req.Stream {
			p.add("stream is false: requests must be streamed (stream: true)")
		}
	}
	req.Thinking, req.ToolChoice, req.Metadata = wb.Thinking, wb.ToolChoice, wb.Metadata

	if wb.System != nil {
		sys, err := decodeSystem(wb.System)
		if err != nil {
			p.add("system: %v", err)
		}
		req.System = sys
		for i, b := range sys {
			if b.Type != llm.TypeText {
				p.add("system[%d] is a %q block; system takes text blocks only", i, b.Type)
			} else if msg := textProblem(b.Text); msg != "" {
				p.add("system[%d]: %s", i, msg)
			}
		}
	}
	req.Tools = wb.Tools
	s.inspectTools(req.Tools, p)

	var in inspection
	switch {
	case !slices.Contains(keys, "messages"):
		p.add("messages is missing")
	case wb.Messages == nil:
		// null, or undecodable (already reported)
		if !slices.ContainsFunc(*p, func(s string) bool { return strings.HasPrefix(s, "messages cannot be decoded") }) {
			p.add("messages must be an array")
		}
	case len(*wb.Messages) == 0:
		p.add("messages is empty")
	default:
		req.Messages = *wb.Messages
		in = inspectMessages(req.Messages, p)
	}
	inspectCache(breakpoints(req.System, req.Tools, req.Messages), p)
	return in
}

// topKeys returns the keys of the top-level object of data, which must be
// valid JSON: it only tracks strings and nesting, far faster than decoding.
func topKeys(data []byte) []string {
	var keys []string
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] != '"' {
			return keys // '}' ends the object
		}
		end := stringEnd(data, i)
		var key string
		if err := json.Unmarshal(data[i:end], &key); err == nil {
			keys = append(keys, key)
		}
		i = skipSpace(data, end) + 1 // past ':'
		i = valueEnd(data, skipSpace(data, i))
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i++
		}
	}
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string starting at data[i] == '"'.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// valueEnd returns the index after the value starting at data[i].
func valueEnd(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = stringEnd(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(data) && !strings.ContainsRune(",}] \t\r\n", rune(data[i])) {
			i++
		}
		return i
	}
}

// decodeSystem reads system as a string (one text block) or a block array.
func decodeSystem(raw json.RawMessage) ([]llm.Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []llm.Block{llm.Text(s)}, nil
	}
	var blocks []llm.Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("must be a string or an array of text blocks: %w", err)
	}
	return blocks, nil
}

// textProblem says what the API objects to in a text block's text.
func textProblem(s string) string {
	if s == "" {
		return "text content blocks must be non-empty"
	}
	if strings.TrimFunc(s, unicode.IsSpace) == "" {
		return "text content blocks must contain non-whitespace text"
	}
	return ""
}

// roleSystem is the role of a system message within the conversation.
const roleSystem = "system"

// inspectMessages checks roles, blocks and the pairing of tool_use with
// tool_result, and collects the assistant tool_use blocks.
func inspectMessages(msgs []llm.Message, p *problems) inspection {
	in := inspection{toolUses: map[string]llm.Block{}}
	useAt := map[string]string{} // tool_use id → where it is
	last := len(msgs) - 1
	for i, m := range msgs {
		loc := "messages[" + itoa(i) + "]"
		switch {
		case m.Role == roleSystem && i > 0:
			// A system message within the conversation (Claude Code 2.1.328
			// sends them): text only.
			for j, b := range m.Content {
				if b.Type != llm.TypeText {
					p.add("%s.content[%d]: a system message holds text blocks only, got %s", loc, j, b.Type)
				}
			}
		case m.Role != llm.RoleUser && m.Role != llm.RoleAssistant:
			p.add("%s has role %q, want user or assistant (or system after the first message)", loc, m.Role)
		case i == 0 && m.Role != llm.RoleUser:
			p.add("messages[0] has role %q: the first message must be a user message", m.Role)
		case i > 0 && m.Role == llm.RoleAssistant && msgs[i-1].Role == llm.RoleAssistant:
			p.add("%s is an assistant message following another assistant message", loc)
		}
		if m.Role == llm.RoleAssistant {
			in.hasAssistant = true
		}
		if len(m.Content) == 0 && (i != last || m.Role != llm.RoleAssistant) {
			p.add("%s has empty content (only a final assistant message may)", loc)
		}
		if i == last && m.Role == llm.RoleAssistant && len(m.Content) > 0 {
			// A prefill: the API refuses one that ends in whitespace.
			if b := m.Content[len(m.Content)-1]; b.Type == llm.TypeText && strings.TrimRightFunc(b.Text, unicode.IsSpace) != b.Text {
				p.add("%s: final assistant content cannot end with trailing whitespace", loc)
			}
		}
		for j, b := range m.Content {
			bloc := loc + ".content[" + itoa(j) + "]"
			switch b.Type {
			case "":
				p.add("%s has no type", bloc)
			case llm.TypeText:
				if len(b.Raw) == 0 {
					if msg := textProblem(b.Text); msg != "" {
						p.add("%s: %s", bloc, msg)
					}
				}
			case llm.TypeToolUse:
				if m.Role != llm.RoleAssistant {
					p.add("%s: tool_use in a %s message; only assistant messages hold tool_use", bloc, m.Role)
				}
				switch {
				case b.ID == "":
					p.add("%s: tool_use %q has no id", bloc, b.Name)
				case useAt[b.ID] != "":
					p.add("%s: tool_use id %s is not unique (also at %s)", bloc, b.ID, useAt[b.ID])
				default:
					useAt[b.ID] = bloc
					if m.Role == llm.RoleAssistant {
						in.toolUses[b.ID] = b
						in.order = append(in.order, b.ID)
					}
				}
				if b.Name == "" {
					p.add("%s: tool_use %s has no name", bloc, b.ID)
				}
				if len(b.Input) > 0 && !isJSONObject(b.Input) {
					p.add("%s: tool_use %s input must be a JSON object, got %s", bloc, b.ID, b.Input)
				}
			case llm.TypeToolResult:
				if m.Role != llm.RoleUser {
					p.add("%s: tool_result in a %s message; only user messages hold tool_result", bloc, m.Role)
				}
				if b.ToolUseID == "" {
					p.add("%s: tool_result has no tool_use_id", bloc)
				}
			}
		}
	}
	inspectPairing(msgs, p)
	return in
}

// inspectPairing checks that each assistant tool_use is answered by exactly
// one tool_result in the next message, results first and in the order of
// the calls, and that no tool_result lacks its tool_use.
func inspectPairing(msgs []llm.Message, p *problems) {
	for i, m := range msgs {
		loc := "messages[" + itoa(i) + "]"
		if m.Role == llm.RoleUser {
			var uses []llm.Block
			if i > 0 && msgs[i-1].Role == llm.RoleAssistant {
				uses = msgs[i-1].Content
			}
			seenOther := false
			for j, b := range m.Content {
				if b.Type != llm.TypeToolResult {
					seenOther = true
					continue
				}
				bloc := loc + ".content[" + itoa(j) + "]"
				if seenOther {
					p.add("%s: tool_result after other content; tool_result blocks must come first in a user message", bloc)
				}
				if b.ToolUseID != "" && !slices.ContainsFunc(uses, func(u llm.Block) bool {
					return u.Type == llm.TypeToolUse && u.ID == b.ToolUseID
				}) {
					p.add("%s: tool_result for %s has no matching tool_use in the previous (assistant) message", bloc, b.ToolUseID)
				}
			}
			continue
		}
		if m.Role != llm.RoleAssistant {
			continue
		}
		var ids []string
		for _, b := range m.Content {
			if b.Type == llm.TypeToolUse && b.ID != "" {
				ids = append(ids, b.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if i == len(msgs)-1 {
			p.add("%s: the conversation ends with an assistant message whose tool_use %s is unanswered; each tool_use needs a tool_result in the next user message", loc, strings.Join(ids, ", "))
			continue
		}
		next := msgs[i+1]
		nloc := "messages[" + itoa(i+1) + "]"
		if next.Role != llm.RoleUser {
			p.add("%s: tool_use %s must be answered in the next message, but %s is not a user message", loc, strings.Join(ids, ", "), nloc)
			continue
		}
		var order []string // result ids in message order, each once
		for _, id := range ids {
			n := 0
			for _, b := range next.Content {
				if b.Type == llm.TypeToolResult && b.ToolUseID == id {
					n++
				}
			}
			switch {
			case n == 0:
				p.add("%s: tool_use %s has no tool_result in %s", loc, id, nloc)
			case n > 1:
				p.add("%s: tool_use %s is answered by %d tool_results in %s; want exactly one", loc, id, n, nloc)
			}
		}
		for _, b := range next.Content {
			if b.Type == llm.TypeToolResult && slices.Contains(ids, b.ToolUseID) && !slices.Contains(order, b.ToolUseID) {
				order = append(order, b.ToolUseID)
			}
		}
		want := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !slices.Contains(order, id) })
		if !slices.Equal(order, want) {
			p.add("%s: tool_results are in the order %s; want the order of the tool_use blocks in %s: %s", nloc, strings.Join(order, ", "), loc, strings.Join(want, ", "))
		}
	}
}

// inspectCache checks the cache_control markers: at most four, of a known
// type and TTL, with one-hour TTLs before five-minute ones.
func inspectCache(bps []breakpoint, p *problems) {
	if len(bps) > maxBreakpoints {
		locs := make([]string, len(bps))
		for i, bp := range bps {
			locs[i] = bp.loc
		}
		p.add("%d cache_control breakpoints (%s); the API allows at most %d", len(bps), strings.Join(locs, ", "), maxBreakpoints)
	}
	short := "" // first breakpoint with a five-minute TTL
	for _, bp := range bps {
		if bp.cc.Type != "ephemeral" {
			p.add("%s: cache_control type %q, want \"ephemeral\"", bp.loc, bp.cc.Type)
		}
		switch bp.cc.TTL {
		case "", "5m":
			if short == "" {
				short = bp.loc
			}
		case "1h":
			if short != "" {
				p.add("%s: cache_control ttl 1h after a 5m breakpoint at %s; longer TTLs must come first", bp.loc, short)
			}
		default:
			p.add("%s: cache_control ttl %q, want \"5m\" or \"1h\"", bp.loc, bp.cc.TTL)
		}
	}
}

// inspectTools checks tool names and input schemas. Server tools (a type
// such as "web_search_20250305") have no input_schema and are exempt.
func (s *Server) inspectTools(tools []json.RawMessage, p *problems) {
	seen := make(map[string]int, len(tools))
	for i, raw := range tools {
		loc := "tools[" + itoa(i) + "]"
		v := s.tools.verdict(raw)
		for _, msg := range v.problems {
			p.add("%s%s", loc, msg)
		}
		if v.name == "" {
			continue
		}
		if j, dup := seen[v.name]; dup {
			p.add("%s: tool name %q is not unique (also tools[%d])", loc, v.name, j)
		} else {
			seen[v.name] = i
		}
	}
}

// toolVerdict is what the checks conclude from one tool object on its own.
type toolVerdict struct {
	name     string
	problems []string // each to be prefixed with the tool's location
}

// toolCache remembers the verdict on each tool object, keyed by its bytes:
// a client sends the same tools on every request, and decoding them and
// compiling their schemas each time would dominate the server's cost.
type toolCache struct {
	mu       sync.Mutex
	verdicts map[string]toolVerdict
}

func (c *toolCache) verdict(raw json.RawMessage) toolVerdict {
	c.mu.Lock()
	v, ok := c.verdicts[string(raw)]
	c.mu.Unlock()
	if ok {
		return v
	}
	// Judged outside the lock: two requests racing on a new tool both judge
	// it, which is harmless.
	v = judgeTool(raw)
	c.mu.Lock()
	if c.verdicts == nil {
		c.verdicts = map[string]toolVerdict{}
	}
	c.verdicts[string(raw)] = v
	c.mu.Unlock()
	return v
}

func judgeTool(raw json.RawMessage) toolVerdict {
	var t struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return toolVerdict{problems: []string{" is not a tool object: " + err.Error()}}
	}
	v := toolVerdict{name: t.Name}
	switch {
	case t.Name == "":
		v.problems = append(v.problems, " has no name")
	case t.Type != "" && t.Type != "custom":
		// a server tool
	case !validToolName(t.Name):
		v.problems = append(v.problems, fmt.Sprintf(": tool name %q must match ^[a-zA-Z0-9_-]{1,128}$", t.Name))
	}
	if t.Type != "" && t.Type != "custom" {
		return v
	}
	if len(t.InputSchema) == 0 {
		v.problems = append(v.problems, fmt.Sprintf(" (%s): input_schema is missing", t.Name))
	} else if err := compileSchema(t.InputSchema); err != nil {
		v.problems = append(v.problems, fmt.Sprintf(" (%s): input_schema: %v", t.Name, err))
	}
	return v
}

func validToolName(name string) bool {
	if len(name) == 0 || len(name) > 128 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// compileSchema checks that schema is a JSON Schema for an object.
func compileSchema(schema []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return errors.New("not a JSON object")
	}
	if typ, ok := obj["type"].(string); !ok || typ != "object" {
		got, _ := json.Marshal(obj["type"])
		return fmt.Errorf(`type is %s, want "object"`, got)
	}
	const loc = "mem://llmtest/input_schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(loc, doc); err != nil {
		return fmt.Errorf("invalid JSON Schema: %s", oneLine(err))
	}
	if _, err := c.Compile(loc); err != nil {
		return fmt.Errorf("invalid JSON Schema: %s", oneLine(err))
	}
	return nil
}

// oneLine flattens the library's multi-line errors into one violation line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// sameJSON reports whether two JSON values are equal, ignoring layout and
// key order (a client may re-encode the input it received).
func sameJSON(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if len(a) == 0 {
		a = json.RawMessage("{}")
	}
	if len(b) == 0 {
		b = json.RawMessage("{}")
	}
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func itoa(i int) string { return strconv.Itoa(i) }
