// Sampling and roots are deprecated from protocol version 2026-07-28 on
// (SEP-2577); servers of today still use them, and tack pins an older
// version.
//
//lint:file-ignore SA1019 see above.

package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
)

// sample answers a server's sampling/createMessage through Options.Sample.
func (s *server) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	p := req.Params
	if p == nil {
		return nil, fmt.Errorf("sampling request without parameters")
	}
	sr := SamplingRequest{Server: s.cfg.Name, System: p.SystemPrompt, MaxTokens: int(p.MaxTokens),
		Temperature: p.Temperature, StopSequences: p.StopSequences}
	if mp := p.ModelPreferences; mp != nil {
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" {
				sr.ModelHints = append(sr.ModelHints, h.Name)
			}
		}
	}
	for _, msg := range p.Messages {
		if msg == nil {
			continue
		}
		role := llm.RoleUser
		if msg.Role == "assistant" {
			role = llm.RoleAssistant
		}
		b, ok := contentBlock(msg.Content)
		if !ok {
			return nil, fmt.Errorf("sampling message content of type %T is not supported", msg.Content)
		}
		sr.Messages = append(sr.Messages, llm.Message{Role: role, Content: []llm.Block{b}})
	}
	res, err := s.m.opts.Sample(ctx, sr)
	if err != nil {
		return nil, fmt.Errorf("sampling for MCP server %q: %w", s.cfg.Name, err)
	}
	out := &mcp.CreateMessageResult{Model: res.Model, Role: "assistant", StopReason: res.StopReason}
	switch res.Content.Type {
	case llm.TypeImage:
		if res.Content.Source == nil {
			return nil, fmt.Errorf("sampling answer: image without source")
		}
		data, err := base64.StdEncoding.DecodeString(res.Content.Source.Data)
		if err != nil {
			return nil, fmt.Errorf("sampling answer: image data: %w", err)
		}
		out.Content = &mcp.ImageContent{MIMEType: res.Content.Source.MediaType, Data: data}
	default:
		out.Content = &mcp.TextContent{Text: res.Content.Text}
	}
	return out, nil
}

// elicit answers a server's elicitation/create: Options.BeforeElicit may
// answer first (the Elicitation hooks); else Options.Elicit asks the user,
// or, with no one to ask, the request is declined with a notice. Whoever
// answered, Options.AfterElicit (the ElicitationResult hooks) has the last
// word before the answer goes to the server.
func (s *server) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p := req.Params
	if p == nil {
		return &mcp.ElicitResult{Action: ElicitDecline}, nil
	}
	opts := s.m.opts
	er := ElicitationRequest{Server: s.cfg.Name, Message: p.Message, Mode: p.Mode, URL: p.URL, ElicitationID: p.ElicitationID}
	if er.Mode == "" {
		er.Mode = "form"
	}
	if p.RequestedSchema != nil {
		if b, err := json.Marshal(p.RequestedSchema); err == nil {
			_ = json.Unmarshal(b, &er.Schema)
		}
	}
	var res ElicitationResult
	answered, noUser := false, false
	if opts.BeforeElicit != nil {
		res, answered = opts.BeforeElicit(ctx, er)
	}
	switch {
	case answered:
	case opts.Elicit == nil:
		res, noUser = ElicitationResult{Action: ElicitDecline}, true
	default:
		var err error
		if res, err = opts.Elicit(ctx, er); err != nil {
			return nil, fmt.Errorf("elicitation for MCP server %q: %w", s.cfg.Name, err)
		}
	}
	if opts.AfterElicit != nil {
		res = opts.AfterElicit(ctx, er, res)
	}
	switch res.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return nil, fmt.Errorf("elicitation for MCP server %q: unknown action %q", s.cfg.Name, res.Action)
	}
	if noUser && res.Action == ElicitDecline {
		s.m.notice(s.cfg.Name, NoticeWarning, "MCP server %q asked for input (%q); declined: there is no user to ask in this mode", s.cfg.Name, cut(p.Message, 200))
	}
	out := &mcp.ElicitResult{Action: res.Action}
	if res.Action == ElicitAccept {
		out.Content = res.Content
	}
	return out, nil
}

// setRoots tells the client's servers that the roots changed from old to
// dirs.
func (s *server) setRoots(old, dirs []string) {
	var gone []string
	keep := map[string]bool{}
	for _, d := range dirs {
		keep[rootURI(d)] = true
	}
	for _, d := range old {
		if u := rootURI(d); !keep[u] {
			gone = append(gone, u)
		}
	}
	if len(gone) > 0 {
		s.client.RemoveRoots(gone...)
	}
	roots := make([]*mcp.Root, 0, len(dirs))
	for _, d := range dirs {
		roots = append(roots, &mcp.Root{URI: rootURI(d), Name: d})
	}
	if len(roots) > 0 {
		s.client.AddRoots(roots...)
	}
}
