package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// promptSystem tells the model how a prompt hook must answer.
const promptSystem = `You are a hook in an agentic coding tool. You are given a condition to check and the JSON input of a hook event.
Evaluate the condition against the input and answer with one JSON object and nothing else:
{"ok": true} when the action may go on, or {"ok": false, "reason": "<why, for the user and the model>"} when it must be stopped.`

// promptMaxTokens bounds a prompt hook's answer, which is one small object.
const promptMaxTokens = 1024

// expandArguments puts the payload in place of $ARGUMENTS, or after the
// prompt when it has no $ARGUMENTS.
func expandArguments(prompt string, payload []byte) string {
	if strings.Contains(prompt, "$ARGUMENTS") {
		return strings.ReplaceAll(prompt, "$ARGUMENTS", string(payload))
	}
	return prompt + "\n\n" + string(payload)
}

// runPrompt asks a model whether the event may go on.
func (r *Runner) runPrompt(ctx context.Context, h Handler, payload []byte) answer {
	if r.opts.Provider == nil {
		return answer{status: StatusError, message: "prompt hooks need a model provider, and none is configured"}
	}
	model := h.Model
	if model == "" {
		model = r.opts.SmallModel
	}
	if model == "" {
		return answer{status: StatusError, message: "prompt hook has no model, and no default small model is configured"}
	}
	req := &llm.Request{
		Model:     model,
		System:    []llm.Block{llm.Text(promptSystem)},
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(expandArguments(h.Prompt, payload))}}},
		MaxTokens: promptMaxTokens,
	}
	resp, err := r.opts.Provider.Stream(ctx, req, llm.Observer{})
	if err != nil {
		if ctx.Err() != nil {
			return answer{status: StatusCancelled}
		}
		return answer{status: StatusError, message: fmt.Sprintf("prompt hook: model %s: %v", model, err)}
	}
	var text strings.Builder
	for _, b := range resp.Content {
		if b.Type == llm.TypeText {
			text.WriteString(b.Text)
		}
	}
	return verdictAnswer(text.String(), "prompt hook")
}

// runAgent hands an agent hook to the AgentRunner seam.
func (r *Runner) runAgent(ctx context.Context, h Handler, in Input, payload []byte) answer {
	if r.opts.Agent == nil {
		return answer{status: StatusError, message: "agent hooks are not supported yet"}
	}
	v, err := r.opts.Agent.RunHookAgent(ctx, h, in, expandArguments(h.Prompt, payload))
	if err != nil {
		if ctx.Err() != nil {
			return answer{status: StatusCancelled}
		}
		return answer{status: StatusError, message: fmt.Sprintf("agent hook: %v", err)}
	}
	b, _ := jsonx.Marshal(v)
	return verdictAnswer(string(b), "agent hook")
}

// runMCPTool hands an mcp_tool hook to the MCPToolCaller seam; the tool's
// text is read like a command hook's stdout.
func (r *Runner) runMCPTool(ctx context.Context, h Handler, in Input, payload []byte) answer {
	if r.opts.MCP == nil {
		return answer{status: StatusError, message: "mcp_tool hooks are not supported yet"}
	}
	text, isError, err := r.opts.MCP.CallHookTool(ctx, h, in, payload)
	switch {
	case err != nil && ctx.Err() != nil:
		return answer{status: StatusCancelled}
	case err != nil:
		return answer{status: StatusError, message: fmt.Sprintf("mcp_tool hook %s/%s: %v", h.Server, h.Tool, err)}
	case isError:
		return answer{status: StatusError, stdout: text, output: text, message: fmt.Sprintf("mcp_tool hook %s/%s failed: %s", h.Server, h.Tool, blockReason(text, "no details"))}
	}
	return answer{status: StatusSuccess, stdout: text, output: text, text: text}
}

// verdictAnswer reads {"ok": bool, "reason": string} from a model's text:
// ok:false blocks with the reason.
func verdictAnswer(text, what string) answer {
	a := answer{stdout: text, output: text}
	v, err := parseVerdict(text)
	if err != nil {
		a.status, a.message = StatusError, fmt.Sprintf("%s: %v", what, err)
		return a
	}
	if v.OK {
		a.status = StatusSuccess
		return a
	}
	a.status, a.message = StatusBlocking, blockReason(v.Reason, "Blocked by "+what)
	return a
}

// parseVerdict finds the JSON object in a model's answer, tolerating the
// prose or code fence a model may wrap it in.
func parseVerdict(text string) (Verdict, error) {
	var raw struct {
		OK     *bool  `json:"ok"`
		Reason string `json:"reason"`
	}
	s := strings.TrimSpace(text)
	err := json.Unmarshal([]byte(s), &raw)
	if err != nil {
		i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
		if i < 0 || j < i {
			return Verdict{}, fmt.Errorf("the model did not answer with JSON: %q", firstLine(s))
		}
		if err := json.Unmarshal([]byte(s[i:j+1]), &raw); err != nil {
			return Verdict{}, fmt.Errorf("the model's answer is not valid JSON: %v", err)
		}
	}
	if raw.OK == nil {
		return Verdict{}, errors.New(`the model's answer has no boolean "ok"`)
	}
	return Verdict{OK: *raw.OK, Reason: raw.Reason}, nil
}

// runCallback calls a Go hook. The hook's time limit holds even for a
// callback that ignores ctx: it is then left to finish on its own.
func runCallback(ctx context.Context, h Handler, in Input, payload []byte) answer {
	done := make(chan answer, 1)
	go func() { done <- callCallback(ctx, h, in, payload) }()
	select {
	case a := <-done:
		return a
	case <-ctx.Done():
		return answer{status: StatusCancelled}
	}
}

// callCallback calls h.Callback. A panic is the callback's bug, not the
// session's: it becomes a failure of that hook.
func callCallback(ctx context.Context, h Handler, in Input, payload []byte) (a answer) {
	defer func() {
		if p := recover(); p != nil {
			a = answer{status: StatusError, message: fmt.Sprintf("callback %s panicked: %v\n%s", h.CallbackID, p, debug.Stack())}
		}
	}()
	out, err := h.Callback(ctx, in, payload)
	if err != nil {
		if ctx.Err() != nil {
			return answer{status: StatusCancelled}
		}
		return answer{status: StatusError, message: fmt.Sprintf("callback %s: %v", h.CallbackID, err)}
	}
	if out == nil {
		return answer{status: StatusSuccess}
	}
	b, _ := jsonx.Marshal(out)
	a = answer{status: StatusSuccess, stdout: string(b), output: string(b), out: out}
	if out.Async {
		// {"async": true}: the SDK answers later, on its own; nothing to merge.
		a.out = nil
	}
	return a
}
