package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/tool"
)

// Gate decides whether a tool call may run. It is called on the run's
// goroutine, one call at a time and in the model's order, just before the
// call (or its read-only batch) runs, so it may prompt a user.
type Gate interface {
	// Check applies the rules and the mode: allow, deny, or ask.
	Check(ctx context.Context, c ToolCall) Verdict
	// Ask puts a call that needs approval to whoever can answer (a
	// callback, an approver tool, a person); it must return Allow or Deny.
	// reason says why approval is needed.
	Ask(ctx context.Context, c ToolCall, reason string) Verdict
}

// Behavior is a gate's answer.
type Behavior int

const (
	Allow Behavior = iota
	Deny
	Ask
)

// ToolCall is a call the model asked for, as the gate sees it.
type ToolCall struct {
	ID       string
	Name     string
	Input    json.RawMessage
	ReadOnly bool
	Tool     tool.Tool
	// HookDecision is what PreToolUse hooks decided: "allow" (no need to
	// ask, though deny and ask rules still apply), "ask" (ask even if a
	// rule allows), or "".
	HookDecision string
}

// Verdict is a gate's answer.
type Verdict struct {
	Behavior Behavior
	// Message tells the model why the call was denied, or (with Ask) why
	// approval is needed.
	Message string
	// Input, when set, replaces the call's input.
	Input json.RawMessage
	// Unattended marks a denial made because nobody could be asked (print
	// mode): surfaces are told with a permission_denied message.
	Unattended bool
}

// call is one tool_use of a response, on its way to a tool_result.
type call struct {
	id, name string
	input    json.RawMessage
	badInput string

	tool     tool.Tool
	readOnly bool

	denied       bool     // a hook, rule or person said no
	hookDecision string   // PreToolUse hooks' permission decision
	hookContext  []string // hook-supplied context for the model

	result   llm.Block
	struct_  any
	done     bool // the call has its result
	ran      bool // the tool ran (struct_ is its response)
	waiting  bool // a deferral left the call for the host to decide
	endsTurn bool // the tool's result completes the turn
	duration time.Duration
}

// endsTurn says whether a call of the batch completed the turn.
func endsTurn(calls []*call) bool {
	for _, c := range calls {
		if c.endsTurn && !c.result.IsError {
			return true
		}
	}
	return false
}

// runTools runs the calls of one response and appends their results. It
// returns a result message when the run must stop.
func (r *run) runTools(calls []*call) *protocol.Result {
	for _, c := range calls {
		r.prepare(c)
	}
	loopErr := r.dispatch(calls)
	interrupted := r.ctx.Err() != nil
	deferred := r.deferred != nil && !interrupted
	for _, c := range calls {
		switch {
		case c.done:
			if len(c.hookContext) > 0 {
				c.result.Content = append(c.result.Content, hook.ContextBlock("Tool", c.hookContext))
			}
			continue
		case deferred:
			// Left for the host: the transcript keeps the tool_use without
			// a result; the conversation in memory holds a placeholder
			// until the next run decides the call.
			c.result = llm.ToolResult(c.id, waitingResult, true)
			c.waiting = true
			continue
		case interrupted:
			c.result = llm.ToolResult(c.id, "Not run: interrupted by the user.", true)
		default:
			c.result = llm.ToolResult(c.id, "Not run: the run stopped before this call.", true)
		}
		c.done = true
	}
	r.appendResults(calls)
	switch {
	case interrupted:
		return r.interrupted("aborted_tools")
	case loopErr != nil:
		return r.errorResult(protocol.ResultDuringExecution, "loop_detected", loopErr.Error())
	case deferred:
		return r.deferredResult(calls)
	case r.stopReason != "":
		return r.errorResult(protocol.ResultDuringExecution, "hook_stopped", stopText(r.stopReason))
	}
	return r.postToolBatch(calls)
}

// waitingResult stands, in the conversation in memory only, for the result
// of a call waiting for the host's decision.
const waitingResult = "Not run yet: a PreToolUse hook deferred this call to the host, who has not decided it."

// dispatch takes the calls through PreToolUse, the gate, the run and
// PostToolUse: a mutating call alone, a run of read-only calls in
// parallel, in the model's order. It stops after the batch in which the
// run was interrupted, a hook stopped the session or deferred a call (the
// calls after the deferred one are not taken), or the model looked stuck,
// which it returns.
func (r *run) dispatch(calls []*call) error {
	var loopErr error
	for i := 0; i < len(calls); {
		if r.ctx.Err() != nil {
			break
		}
		// A batch is one mutating call, or a run of read-only calls.
		j := i + 1
		if calls[i].readOnly {
			for j < len(calls) && calls[j].readOnly {
				j++
			}
		}
		batch := calls[i:j]
		i = j
		var runnable []*call
		for _, c := range batch {
			if c.done {
				continue
			}
			if !r.preToolUse(c) {
				if r.deferred != nil {
					break
				}
				continue
			}
			if r.gate(c) {
				runnable = append(runnable, c)
			}
		}
		r.execute(runnable)
		for _, c := range runnable {
			r.postToolUse(c)
		}
		for _, c := range batch {
			if c.done && c.tool != nil && loopErr == nil {
				loopErr = r.s.loops.observe(c.name, c.input, llm.TextOf(c.result.Content), c.result.IsError)
			}
		}
		if loopErr != nil || r.stopReason != "" || r.deferred != nil {
			break
		}
	}
	return loopErr
}

// deferredResult ends a run whose call a PreToolUse hook deferred: the
// calls not run wait for the next run (of this process, or of the session
// resumed), and the result names the deferred one. It is not an error and
// records no denial.
func (r *run) deferredResult(calls []*call) *protocol.Result {
	var waiting []llm.Block
	for _, c := range calls {
		if c.waiting {
			waiting = append(waiting, llm.Block{Type: llm.TypeToolUse, ID: c.id, Name: c.name, Input: c.input})
		}
	}
	r.s.mu.Lock()
	r.s.waiting = waiting
	r.s.mu.Unlock()
	c := r.deferred
	res := r.result(protocol.ResultSuccess, protocol.StopToolDeferred)
	stop, text := protocol.StopToolDeferred, r.lastText
	res.StopReason, res.Result = &stop, &text
	res.DeferredToolUse = &protocol.DeferredToolUse{ID: c.id, Name: c.name, Input: c.input}
	return res
}

// decideWaiting takes the calls a deferral left waiting (Deferred) through
// the dispatch, the hooks and the gate deciding them now, and puts their
// results in place of the placeholders. It returns a result message when
// the run must stop (a call deferred again, an interrupt…).
func (r *run) decideWaiting() *protocol.Result {
	s := r.s
	s.mu.Lock()
	waiting := s.waiting
	s.waiting = nil
	s.mu.Unlock()
	if len(waiting) == 0 {
		return nil
	}
	calls := make([]*call, len(waiting))
	for i, b := range waiting {
		calls[i] = &call{id: b.ID, name: b.Name, input: b.Input}
	}
	return r.runTools(calls)
}

// Deferred is the call a PreToolUse hook deferred, waiting for the host's
// decision, or nil: what a session saves so that resuming it decides the
// call (ResumeDeferred).
func (s *Session) Deferred() *protocol.DeferredToolUse {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiting) == 0 {
		return nil
	}
	b := s.waiting[0]
	return &protocol.DeferredToolUse{ID: b.ID, Name: b.Name, Input: b.Input}
}

// ResumeDeferred makes the call id of the conversation's last response,
// and the calls after it, wait for a decision again: a resumed session's
// deferred call (Deferred, as the session saved it). The next run takes
// them through the hooks and the gate before anything else, and their
// results replace the ones the restored conversation holds for them. It
// reports false when the last response has no such call.
func (s *Session) ResumeDeferred(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		if m.Role != llm.RoleAssistant {
			continue
		}
		k := slices.IndexFunc(m.Content, func(b llm.Block) bool { return b.Type == llm.TypeToolUse && b.ID == id })
		if k < 0 {
			return false
		}
		s.waiting = nil
		for _, b := range m.Content[k:] {
			if b.Type == llm.TypeToolUse {
				s.waiting = append(s.waiting, b)
			}
		}
		return true
	}
	return false
}

// prepare resolves a call's tool and checks its input; a call that cannot
// run gets its error result here.
func (r *run) prepare(c *call) {
	s := r.s
	if c.badInput != "" {
		c.fail(inputError(c.badInput))
		return
	}
	t, ok := s.cfg.Tools.Get(c.name)
	if !ok {
		c.fail(inputError(fmt.Sprintf("Error: No such tool available: %s", c.name)))
		return
	}
	if err := s.cfg.Tools.Validate(t, c.input); err != nil {
		c.fail(inputError(fmt.Sprintf("InputValidationError: %s failed: %v", c.name, err)))
		return
	}
	c.tool = t
	c.readOnly = t.ReadOnly(c.input)
}

// gate asks the gate about c, and whoever can approve when it must ask; a
// denied call gets its result here.
func (r *run) gate(c *call) bool {
	g := r.s.cfg.Gate
	if g == nil {
		return true
	}
	tc := ToolCall{ID: c.id, Name: c.name, Input: c.input, ReadOnly: c.readOnly, Tool: c.tool, HookDecision: c.hookDecision}
	v := g.Check(r.ctx, tc)
	if v.Behavior == Ask {
		if hv, ok := r.permissionRequest(c); ok {
			v = hv
		} else {
			v = g.Ask(r.ctx, tc, v.Message)
		}
	}
	if v.Behavior != Allow {
		r.deny(c, v.Message, v.Unattended)
		return false
	}
	if len(v.Input) > 0 && string(v.Input) != string(c.input) {
		if err := r.s.cfg.Tools.Validate(c.tool, v.Input); err != nil {
			c.fail(wrapInputError("the approved input is invalid: " + err.Error()))
			return false
		}
		c.input = v.Input
	}
	return true
}

// deny gives c a denial result, lists it in the run's permission denials
// and fires PermissionDenied, whoever denied it: a rule, the mode, a hook,
// the user or the host's callback, or nobody being there to ask.
func (r *run) deny(c *call, msg string, unattended bool) {
	if msg == "" {
		msg = fmt.Sprintf("Permission to use %s was denied.", c.name)
	}
	c.fail(msg)
	c.denied = true
	r.denials = append(r.denials, protocol.PermissionDenial{ToolName: c.name, ToolUseID: c.id, ToolInput: c.input})
	if unattended {
		r.emit(&protocol.System{Subtype: protocol.SubtypePermissionDenied, SessionID: r.s.cfg.SessionID,
			UUID: uuid.NewString(), ToolName: c.name, ToolUseID: c.id, Reason: msg})
	}
	r.permissionDenied(c, msg)
}

// execute runs calls, in parallel when there are several (they are then
// all read-only).
func (r *run) execute(calls []*call) {
	if len(calls) == 1 {
		r.invoke(calls[0])
		return
	}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.invoke(c)
		}()
	}
	wg.Wait()
}

// invoke runs one call and turns what it returns into a tool_result.
func (r *run) invoke(c *call) {
	ctx := tool.WithToolUseID(r.ctx, c.id)
	start := time.Now()
	res, err := safeRun(ctx, c.tool, r.s.cfg.Env, c.input)
	c.duration = time.Since(start)
	c.done, c.ran = true, true
	if err != nil {
		if tool.IsInputError(err) {
			c.result = llm.ToolResult(c.id, wrapInputError(err.Error()), true)
		} else {
			c.result = llm.ToolResult(c.id, err.Error(), true)
		}
		c.struct_ = "Error: " + err.Error()
		return
	}
	c.result = llm.Block{Type: llm.TypeToolResult, ToolUseID: c.id, Content: cleanContent(res.Content), IsError: res.IsError}
	c.struct_ = res.Structured
	c.endsTurn = res.EndsTurn && !res.IsError
}

// safeRun runs a tool, turning a panic into an error so one broken tool
// cannot end the session.
func safeRun(ctx context.Context, t tool.Tool, env *tool.Env, input json.RawMessage) (res tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error in %s: %v\n%s", t.Name(), p, debug.Stack())
		}
	}()
	return t.Run(ctx, env, input)
}

func (c *call) fail(msg string) {
	c.result = llm.ToolResult(c.id, msg, true)
	c.struct_ = "Error: " + msg
	c.done = true
}

func inputError(msg string) string { return wrapInputError(msg) }

func wrapInputError(msg string) string { return "<tool_use_error>" + msg + "</tool_use_error>" }

// cleanContent drops empty text blocks, which the API refuses.
func cleanContent(blocks []llm.Block) []llm.Block {
	out := blocks[:0:0]
	for _, b := range blocks {
		if b.Type == llm.TypeText && b.Text == "" {
			continue
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		out = []llm.Block{llm.Text("(no output)")}
	}
	return out
}

// appendResults adds one user message holding every result in call order,
// and emits and records one message per result, as Claude Code does. The
// results of calls that were waiting take the place of their placeholders
// instead; the placeholders of calls left waiting are neither emitted nor
// recorded.
func (r *run) appendResults(calls []*call) {
	s := r.s
	content := make([]llm.Block, len(calls))
	var decided []*call
	for i, c := range calls {
		content[i] = c.result
		if !c.waiting {
			decided = append(decided, c)
		}
	}
	s.mu.Lock()
	if !s.replaceResults(content) {
		s.messages = append(s.messages, llm.Message{Role: llm.RoleUser, Content: content})
	}
	if i := slices.IndexFunc(calls, func(c *call) bool { return c.waiting }); i >= 0 {
		// The session stops at the first call left for the host to decide.
		s.lastTool = [2]string{calls[i].name, "ask"}
	} else if n := len(decided); n > 0 {
		decision := "allow"
		if decided[n-1].denied {
			decision = "deny"
		}
		s.lastTool = [2]string{decided[n-1].name, decision}
	}
	last := s.lastTool
	s.mu.Unlock()
	if f := s.cfg.OnToolDecision; f != nil && len(calls) > 0 {
		f(last[0], last[1])
	}
	for _, c := range decided {
		msg := &protocol.User{Type: "user", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{c.result}},
			ParentToolUseID: r.parentID, SessionID: s.cfg.SessionID, UUID: uuid.NewString(), ToolUseResult: c.struct_}
		r.record(msg)
		r.emit(msg)
	}
	// No sync here: each record is in the file once written, so a killed
	// process loses none of them; the end of the prompt syncs once for a
	// power cut.
}

// replaceResults puts results in the place of the results the last user
// message holds for the same calls (the placeholders of calls that were
// waiting). It reports false when that message holds none of them. The
// caller holds s.mu.
func (s *Session) replaceResults(results []llm.Block) bool {
	last := len(s.messages) - 1
	if last < 0 || s.messages[last].Role != llm.RoleUser {
		return false
	}
	content := slices.Clone(s.messages[last].Content)
	replaced := false
	for _, res := range results {
		for i := range content {
			if content[i].Type == llm.TypeToolResult && content[i].ToolUseID == res.ToolUseID {
				content[i], replaced = res, true
				break
			}
		}
	}
	if replaced {
		s.messages[last].Content = content
	}
	return replaced
}
