package runtime

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/mcp"
)

// elicitHooks plug the thread's Elicitation and ElicitationResult hooks into
// its MCP servers' elicitation/create (mcp.Options.BeforeElicit and
// AfterElicit). Matchers test the server's name.
//
// Elicitation runs first: an answer (hookSpecificOutput.action accept,
// decline or cancel, with content for accept) goes to the server without
// asking the user, and a block declines. Otherwise the user (the SDK's
// OnElicitation) answers, or, with no one to ask, the request is declined.
// Then, whoever answered, ElicitationResult runs with the answer and may
// replace it (a block declines) before it goes to the server.
type elicitHooks struct{ t *thread }

// install sets o's elicitation callbacks: the user's, and the thread's
// hooks around it.
func (h elicitHooks) install(o *mcp.Options) {
	o.Elicit = h.t.s.cfg.OnElicitation
	o.BeforeElicit = h.before
	o.AfterElicit = h.after
}

func (h elicitHooks) before(ctx context.Context, req mcp.ElicitationRequest) (mcp.ElicitationResult, bool) {
	t := h.t
	if !t.hooks.Has(hook.Elicitation) {
		return mcp.ElicitationResult{}, false
	}
	in := &hook.ElicitationInput{Base: t.hookBase(), MCPServerName: req.Server, Message: req.Message,
		Mode: req.Mode, URL: req.URL, ElicitationID: req.ElicitationID}
	if req.Schema != nil {
		in.RequestedSchema, _ = json.Marshal(req.Schema)
	}
	return h.answer(t.hooks.Run(ctx, in), req.Server)
}

func (h elicitHooks) after(ctx context.Context, req mcp.ElicitationRequest, res mcp.ElicitationResult) mcp.ElicitationResult {
	t := h.t
	if !t.hooks.Has(hook.ElicitationResult) {
		return res
	}
	in := &hook.ElicitationResultInput{Base: t.hookBase(), MCPServerName: req.Server, ElicitationID: req.ElicitationID,
		Mode: req.Mode, Action: res.Action}
	if res.Action == mcp.ElicitAccept && res.Content != nil {
		in.Content, _ = json.Marshal(res.Content)
	}
	out, ok := h.answer(t.hooks.Run(ctx, in), req.Server)
	if !ok {
		return res
	}
	if out.Action == mcp.ElicitAccept && out.Content == nil && res.Action == mcp.ElicitAccept {
		out.Content = res.Content // accepted as answered
	}
	return out
}

// answer is the hooks' answer in out, if they gave one. Their messages are
// shown; a block is a decline; accepted content that is not a JSON object
// is reported and declined, as a form's answer must be an object.
func (h elicitHooks) answer(out hook.Outcome, server string) (mcp.ElicitationResult, bool) {
	s := h.t.s
	for _, m := range append(out.SystemMessages, out.Errors...) {
		s.notify(m)
	}
	if out.Block {
		s.notify(fmt.Sprintf("%s hook declined the request of MCP server %q: %s", out.Event, server, out.Reason))
	}
	res := mcp.ElicitationResult{Action: out.ElicitationAction}
	switch res.Action {
	case "":
		return res, false
	case mcp.ElicitAccept:
		if len(out.ElicitationContent) > 0 {
			if err := json.Unmarshal(out.ElicitationContent, &res.Content); err != nil || res.Content == nil {
				s.notify(fmt.Sprintf("%s hook accepted the request of MCP server %q with content that is not a JSON object (%s); declined instead",
					out.Event, server, out.ElicitationContent))
				return mcp.ElicitationResult{Action: mcp.ElicitDecline}, true
			}
		}
	}
	return res, true
}
