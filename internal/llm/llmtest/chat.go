package llmtest

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// The server also fakes an OpenAI-compatible Chat Completions endpoint at
// POST /v1/chat/completions (base URL: URL()+"/v1"), driven by the same
// script: turns, faults, When and Build work as for /v1/messages, and the
// turns are streamed as chat.completion.chunk events. A request is checked
// for what Chat Completions requires and tack promises:
//   - POST, content-type application/json, Authorization: Bearer <key>
//     (exactly Options.ChatKey when set);
//   - only known body keys, a model, stream: true with
//     stream_options.include_usage, non-empty messages of the roles
//     system (first only), user, assistant and tool;
//   - tools of type function, each with a name and a JSON Schema object;
//     assistant tool_calls of type function with an id and arguments that
//     are a JSON object; each tool message answers a call of the assistant
//     message before it, and every call is answered before the next turn;
//   - content parts of type text or image_url (a data: URL or http(s)).
// The request is then translated to the Messages form (tool messages become
// tool_result blocks, consecutive user and tool messages one user message)
// and checked with every invariant of /v1/messages: the echo of the last
// turn's tool calls, pairing, schemas. Requests() holds that form.

const chatPath = "/v1/chat/completions"

var chatKeys = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true, "max_tokens": true,
	"max_completion_tokens": true, "temperature": true, "top_p": true, "stop": true, "user": true,
	"stream": true, "stream_options": true, "reasoning_effort": true, "parallel_tool_calls": true,
}

var chatMessageKeys = map[string]bool{"role": true, "content": true, "tool_calls": true, "tool_call_id": true, "name": true}

type chatBody struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	MaxTokens     *int              `json:"max_tokens"`
	MaxCompletion *int              `json:"max_completion_tokens"`
	Stream        *bool             `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMsg struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	ToolCallID string `json:"tool_call_id"`
}

// serveChat checks a Chat Completions request and answers it from the script.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now(), chat: true}
	body, tooLarge, err := readBody(r)
	if err != nil {
		return
	}
	req.Body = body
	var p problems
	status := http.StatusBadRequest
	if r.Method != http.MethodPost {
		p.add("method %s, want POST", r.Method)
		status = http.StatusMethodNotAllowed
	}
	s.inspectChatHeaders(r.Header, &p)
	var in inspection
	if tooLarge {
		p.add("body is larger than the limit of %d bytes", maxBody)
		status = http.StatusRequestEntityTooLarge
	} else if messages, ok := chatToMessages(body, &p); ok {
		in = s.inspectBody(messages, req, true, &p)
	}
	s.serve(w, r, req, in, p, status)
}

func (s *Server) inspectChatHeaders(h http.Header, p *problems) {
	bearer, isBearer := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	switch {
	case s.chatKey != "" && bearer != s.chatKey:
		p.add("authorization is %q, want \"Bearer %s\"", h.Get("Authorization"), s.chatKey)
	case !isBearer || strings.TrimSpace(bearer) == "":
		p.add("no credentials: want header authorization: Bearer <key>")
	}
	if ct := h.Get("Content-Type"); ct == "" {
		p.add("header content-type is missing (want application/json)")
	} else if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		p.add("header content-type is %q, want application/json", ct)
	}
}

// chatToMessages checks a Chat Completions body and returns its Messages
// API form, for the checks the two share.
func chatToMessages(body []byte, p *problems) ([]byte, bool) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		p.add("body is not a JSON object: %v", err)
		return nil, false
	}
	for k := range keys {
		if !chatKeys[k] {
			p.add("unknown body key %q for Chat Completions", k)
		}
	}
	var cb chatBody
	if err := json.Unmarshal(body, &cb); err != nil {
		p.add("body: %v", err)
		return nil, false
	}
	if cb.Stream == nil || !*cb.Stream {
		p.add("stream is not true: requests must be streamed")
	}
	if cb.StreamOptions == nil || !cb.StreamOptions.IncludeUsage {
		p.add("stream_options.include_usage is not true: without it the stream reports no usage")
	}
	maxTokens := 0
	switch {
	case cb.MaxTokens != nil:
		maxTokens = *cb.MaxTokens
	case cb.MaxCompletion != nil:
		maxTokens = *cb.MaxCompletion
	}
	out := struct {
		Model     string            `json:"model"`
		MaxTokens int               `json:"max_tokens"`
		System    []llm.Block       `json:"system,omitempty"`
		Messages  []llm.Message     `json:"messages"`
		Tools     []json.RawMessage `json:"tools,omitempty"`
		Stream    bool              `json:"stream"`
	}{Model: cb.Model, MaxTokens: maxTokens, Stream: true}
	for i, raw := range cb.Tools {
		var t struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.Type != "function" {
			p.add("tools[%d] is not a function tool: %s", i, raw)
			continue
		}
		if len(t.Function.Parameters) == 0 {
			p.add("tools[%d] (%s) has no parameters schema", i, t.Function.Name)
		}
		tool, _ := jsonx.Marshal(map[string]any{"name": t.Function.Name, "description": t.Function.Description,
			"input_schema": t.Function.Parameters})
		out.Tools = append(out.Tools, tool)
	}
	pending := map[string]bool{} // tool calls of the last assistant message not yet answered
	for i, raw := range cb.Messages {
		var mk map[string]json.RawMessage
		if json.Unmarshal(raw, &mk) != nil {
			p.add("messages[%d] is not an object", i)
			continue
		}
		for k := range mk {
			if !chatMessageKeys[k] {
				p.add("messages[%d] has unknown key %q", i, k)
			}
		}
		var m chatMsg
		if err := json.Unmarshal(raw, &m); err != nil {
			p.add("messages[%d]: %v", i, err)
			continue
		}
		if m.Role != "tool" && len(pending) > 0 {
			p.add("messages[%d] (%s) comes before every tool call was answered (%d left)", i, m.Role, len(pending))
			pending = map[string]bool{}
		}
		switch m.Role {
		case "system":
			text, ok := contentString(m.Content)
			if i != 0 || !ok {
				p.add("messages[%d]: a system message must come first and hold text", i)
				continue
			}
			out.System = []llm.Block{llm.Text(text)}
		case "user":
			blocks := userBlocks(m.Content, i, p)
			out.Messages = appendUser(out.Messages, blocks...)
		case "tool":
			if !pending[m.ToolCallID] {
				p.add("messages[%d]: tool message answers %q, which is no unanswered call of the assistant message before it", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			text, ok := contentString(m.Content)
			if !ok {
				p.add("messages[%d]: tool message content must be a string", i)
			}
			out.Messages = appendUser(out.Messages, llm.ToolResult(m.ToolCallID, text, false))
		case "assistant":
			var blocks []llm.Block
			if text, ok := contentString(m.Content); ok && text != "" {
				blocks = append(blocks, llm.Text(text))
			}
			for j, tc := range m.ToolCalls {
				if tc.Type != "function" || tc.ID == "" || tc.Function.Name == "" {
					p.add("messages[%d].tool_calls[%d] needs type function, an id and a name", i, j)
				}
				if !isJSONObject([]byte(tc.Function.Arguments)) {
					p.add("messages[%d].tool_calls[%d] arguments %q are not a JSON object", i, j, tc.Function.Arguments)
				}
				pending[tc.ID] = true
				blocks = append(blocks, llm.Block{Type: llm.TypeToolUse, ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)})
			}
			out.Messages = append(out.Messages, llm.Message{Role: llm.RoleAssistant, Content: blocks})
		default:
			p.add("messages[%d] has role %q", i, m.Role)
		}
	}
	enc, err := jsonx.Marshal(out)
	if err != nil {
		p.add("translate to the Messages form: %v", err)
		return nil, false
	}
	return enc, true
}

// appendUser adds blocks to the last message when it is a user message
// (consecutive user and tool messages make one Messages API turn).
func appendUser(msgs []llm.Message, blocks ...llm.Block) []llm.Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleUser {
		msgs[n-1].Content = append(msgs[n-1].Content, blocks...)
		return msgs
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: blocks})
}

func contentString(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	return "", len(raw) == 0 || string(raw) == "null"
}

// userBlocks reads user content: a string or text and image_url parts.
func userBlocks(raw json.RawMessage, i int, p *problems) []llm.Block {
	if s, ok := contentString(raw); ok {
		return []llm.Block{llm.Text(s)}
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		p.add("messages[%d] content is neither a string nor a list of parts", i)
		return nil
	}
	var out []llm.Block
	for j, part := range parts {
		switch {
		case part.Type == "text":
			out = append(out, llm.Text(part.Text))
		case part.Type == "image_url" && part.ImageURL != nil:
			u := part.ImageURL.URL
			if rest, ok := strings.CutPrefix(u, "data:"); ok {
				media, data, ok := strings.Cut(rest, ";base64,")
				if !ok || media == "" || data == "" {
					p.add("messages[%d].content[%d]: image data URL is not data:<type>;base64,<data>", i, j)
				}
				out = append(out, llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: media, Data: data}})
			} else if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
				out = append(out, llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "url", URL: u}})
			} else {
				p.add("messages[%d].content[%d]: image_url %q is neither a data: nor an http(s) URL", i, j, u)
			}
		default:
			p.add("messages[%d].content[%d] is a %q part; want text or image_url", i, j, part.Type)
		}
	}
	return out
}

// streamChat writes a turn as Chat Completions chunks, or the part of it a
// fault lets through.
func (s *Server) streamChat(w http.ResponseWriter, req *Request, turn Turn, fault *Fault) {
	model := turn.Model
	if model == "" {
		model = req.Model
	}
	frames, err := chatFrames(s.newID("chatcmpl"), model, req.Response, stopReason(turn), defaultUsage(turn, req))
	if err != nil {
		s.onViolation(fmt.Errorf("llmtest: turn %d cannot be served as Chat Completions: %w", req.TurnIndex, err))
		s.fail(w, req, http.StatusInternalServerError, "llmtest: "+err.Error(), "", true)
		s.finish(req)
		return
	}
	n := len(frames)
	if fault != nil {
		n = fault.CutAfter
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Request-Id", s.newID("req"))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i := range n {
		if _, err := w.Write(frames[i]); err != nil {
			s.abandon(req)
			return
		}
		if err := rc.Flush(); err != nil {
			s.abandon(req)
			return
		}
	}
	switch {
	case fault == nil:
		s.finish(req)
	case fault.ErrorEvent != "":
		msg := fault.Message
		if msg == "" {
			msg = defaultMessage(fault.ErrorEvent, 0)
		}
		frame, _ := jsonx.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": fault.ErrorEvent, "code": nil}})
		if _, err := w.Write(append(append([]byte("data: "), frame...), "\n\n"...)); err == nil {
			_ = rc.Flush()
		}
		s.finish(req)
	default:
		s.finish(req)
		conn, _, err := rc.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		conn.Close()
	}
}

// chatFrames renders content as the data: frames of a Chat Completions
// stream: a role chunk, text and reasoning in two pieces each, each tool
// call as a chunk with its id and name then its arguments in two pieces,
// the finish reason, the usage, and [DONE].
func chatFrames(id, model string, content []llm.Block, stop string, u llm.Usage) ([][]byte, error) {
	created := time.Now().Unix()
	var frames [][]byte
	add := func(delta map[string]any, finish any) {
		c, _ := jsonx.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		frames = append(frames, append(append([]byte("data: "), c...), "\n\n"...))
	}
	add(map[string]any{"role": "assistant", "content": ""}, nil)
	calls := 0
	for _, b := range content {
		switch b.Type {
		case llm.TypeText:
			for _, piece := range halves(b.Text) {
				add(map[string]any{"content": piece}, nil)
			}
		case llm.TypeThinking:
			for _, piece := range halves(b.Thinking) {
				add(map[string]any{"reasoning_content": piece}, nil)
			}
		case llm.TypeToolUse:
			if len(b.Raw) > 0 {
				return nil, fmt.Errorf("a raw tool_use block")
			}
			add(map[string]any{"tool_calls": []any{map[string]any{"index": calls, "id": b.ID, "type": "function",
				"function": map[string]any{"name": b.Name, "arguments": ""}}}}, nil)
			for _, piece := range halves(string(b.Input)) {
				add(map[string]any{"tool_calls": []any{map[string]any{"index": calls, "function": map[string]any{"arguments": piece}}}}, nil)
			}
			calls++
		default:
			return nil, fmt.Errorf("a %s block has no Chat Completions form", b.Type)
		}
	}
	finish := "stop"
	switch stop {
	case "tool_use":
		finish = "tool_calls"
	case "max_tokens":
		finish = "length"
	case "refusal":
		finish = "content_filter"
	}
	add(map[string]any{}, finish)
	usage, _ := jsonx.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
		"choices": []any{}, "usage": map[string]any{
			"prompt_tokens":         u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
			"completion_tokens":     u.OutputTokens,
			"total_tokens":          u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens + u.OutputTokens,
			"prompt_tokens_details": map[string]int64{"cached_tokens": u.CacheReadInputTokens},
		}})
	frames = append(frames, append(append([]byte("data: "), usage...), "\n\n"...))
	frames = append(frames, []byte("data: [DONE]\n\n"))
	return frames, nil
}

// halves splits s in two at a rune boundary (one piece when short), so
// every fragment is reassembled by the client.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	mid := len(s) / 2
	for mid < len(s) && !utf8Start(s[mid]) {
		mid++
	}
	if mid == len(s) {
		return []string{s}
	}
	return []string{s[:mid], s[mid:]}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// writeChatError writes an OpenAI-style error response.
func (s *Server) writeChatError(w http.ResponseWriter, status int, msg, retryAfter string, noRetry bool) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Request-Id", s.newID("req"))
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	if noRetry {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	body, _ := jsonx.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": errorType(status), "code": nil}})
	_, _ = w.Write(body)
}

// fail writes an error answer to req in its wire format.
func (s *Server) fail(w http.ResponseWriter, req *Request, status int, msg, retryAfter string, noRetry bool) {
	if req.chat {
		s.writeChatError(w, status, msg, retryAfter, noRetry)
		return
	}
	s.writeError(w, status, msg, retryAfter, noRetry)
}
