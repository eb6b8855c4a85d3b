package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/lazyregexp"
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

// runAgent hands an agent hook to the AgentRunner seam and reads the
// subagent's final text as a verdict.
func (r *Runner) runAgent(ctx context.Context, h Handler, in Input, payload []byte) answer {
	if r.opts.Agent == nil {
		return answer{status: StatusError, message: "agent hooks need a session to run their subagent in, and this hook runner has none"}
	}
	text, err := r.opts.Agent.RunHookAgent(ctx, h, in, expandArguments(h.Prompt, payload))
	if err != nil {
		if ctx.Err() != nil {
			return answer{status: StatusCancelled}
		}
		return answer{status: StatusError, message: fmt.Sprintf("agent hook: %v", err)}
	}
	return verdictAnswer(text, "agent hook")
}

// runMCPTool calls an mcp_tool hook's tool through the MCPToolCaller seam,
// its input filled from the payload; the tool's text is read like a
// command hook's stdout.
func (r *Runner) runMCPTool(ctx context.Context, h Handler, payload []byte) answer {
	what := "mcp_tool hook " + h.Server + "/" + h.Tool
	if r.opts.MCP == nil {
		return answer{status: StatusError, message: what + ": mcp_tool hooks need the session's MCP servers, and this hook runner has none"}
	}
	input, err := substituteInput(h.Input, payload)
	if err != nil {
		return answer{status: StatusError, message: fmt.Sprintf("%s: %v", what, err)}
	}
	text, isError, err := r.opts.MCP.CallHookTool(ctx, h.Server, h.Tool, input)
	switch {
	case err != nil && ctx.Err() != nil:
		return answer{status: StatusCancelled}
	case err != nil:
		return answer{status: StatusError, message: fmt.Sprintf("%s: %v", what, err)}
	case isError:
		return answer{status: StatusError, stdout: text, output: text, message: fmt.Sprintf("%s failed: %s", what, blockReason(text, "no details"))}
	}
	return answer{status: StatusSuccess, stdout: text, output: text, text: text}
}

// placeholder is a ${path} in an mcp_tool hook's input.
var placeholder = lazyregexp.New(`\$\{([^{}]*)\}`)

// substituteInput fills an mcp_tool hook's input from the payload: in every
// string of it (not in keys), each ${path} becomes what path names in the
// payload — "tool_input.command" the command of its tool_input object,
// "tool_input.edits.0.old_string" a field of an array's first item. A
// string value goes in as it is, any other value as its JSON text: the
// result stays a string, as in Claude Code. A path that names nothing is
// an error naming it (every such path is listed); no input means {}.
func substituteInput(input json.RawMessage, payload []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !bytes.Contains(input, []byte("${")) {
		return input, nil
	}
	var in, data any
	if err := decodeNumbers(input, &in); err != nil {
		return nil, fmt.Errorf("input is not JSON: %v", err)
	}
	if err := decodeNumbers(payload, &data); err != nil {
		return nil, fmt.Errorf("the payload is not JSON: %v", err)
	}
	var missing []string
	var fill func(v any) any
	fill = func(v any) any {
		switch v := v.(type) {
		case string:
			return placeholder().ReplaceAllStringFunc(v, func(m string) string {
				path := m[2 : len(m)-1]
				got, err := lookup(data, path)
				if err != nil {
					missing = append(missing, fmt.Sprintf("%s: %v", m, err))
					return m
				}
				if s, ok := got.(string); ok {
					return s
				}
				b, _ := jsonx.Marshal(got)
				return string(b)
			})
		case map[string]any:
			for k, item := range v {
				v[k] = fill(item)
			}
		case []any:
			for i, item := range v {
				v[i] = fill(item)
			}
		}
		return v
	}
	out := fill(in)
	if len(missing) > 0 {
		return nil, fmt.Errorf("input names what the %s payload does not hold: %s", eventOf(data), strings.Join(missing, "; "))
	}
	b, err := jsonx.Marshal(out)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// decodeNumbers decodes JSON keeping numbers as written.
func decodeNumbers(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

// lookup follows a dotted path through decoded JSON: object keys, and
// array indexes from 0.
func lookup(v any, path string) (any, error) {
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("an empty path")
	}
	at := "the payload"
	for _, part := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[part]
			if !ok {
				return nil, fmt.Errorf("%s has no %q", at, part)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("%s is a list of %d, without an item %q", at, len(c), part)
			}
			v = c[i]
		default:
			return nil, fmt.Errorf("%s is not an object or a list", at)
		}
		at = part
	}
	return v, nil
}

// eventOf is the hook_event_name of a decoded payload, for messages.
func eventOf(payload any) string {
	if m, ok := payload.(map[string]any); ok {
		if ev, ok := m["hook_event_name"].(string); ok {
			return ev
		}
	}
	return "event's"
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
