package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/shell"
)

// HookLog collects the hook_started / hook_response records of a session's
// hook runner, which reports them from its own goroutines, until the run's
// goroutine can emit them in order. Give its Observe method to the runner.
type HookLog struct {
	mu   sync.Mutex
	recs []hook.Record
}

// Observe records one handler start or end.
func (l *HookLog) Observe(rec hook.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, rec)
}

func (l *HookLog) take() []hook.Record {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	recs := l.recs
	l.recs = nil
	return recs
}

// fireHook runs the hooks of one event and reports what they said to the
// user; the caller acts on the outcome.
func (r *run) fireHook(in hook.Input) hook.Outcome { return r.fireHookCtx(r.ctx, in) }

// fireHookCtx is fireHook under ctx: what must be told after the run was
// interrupted (a call's failure) runs under a context the interrupt does
// not cancel.
func (r *run) fireHookCtx(ctx context.Context, in hook.Input) hook.Outcome {
	s := r.s
	if s.cfg.Hooks == nil || !s.cfg.Hooks.Has(in.EventName()) {
		return hook.Outcome{Event: in.EventName()}
	}
	out := s.cfg.Hooks.Run(ctx, in)
	r.flushHookRecords()
	for _, m := range out.SystemMessages {
		r.notify(m)
	}
	for _, e := range out.Errors {
		r.notify(e)
	}
	return out
}

// flushHookRecords emits the hook_started / hook_response messages that
// --include-hook-events asks for, and drops them otherwise.
func (r *run) flushHookRecords() {
	recs := r.s.cfg.HookLog.take()
	if !r.s.cfg.IncludeHookEvents {
		return
	}
	for _, rec := range recs {
		subtype := string(rec.Phase)
		fields := map[string]any{"hook_id": rec.HookID, "hook_name": rec.HookName, "hook_event": rec.HookEvent}
		if subtype == protocol.SubtypeHookResponse {
			fields["output"] = rec.Output
			fields["stdout"] = rec.Stdout
			fields["stderr"] = rec.Stderr
			fields["outcome"] = rec.Outcome
			if rec.ExitCode != nil {
				fields["exit_code"] = *rec.ExitCode
			}
		}
		r.emit(&protocol.System{Subtype: subtype, SessionID: r.s.cfg.SessionID, UUID: uuid.NewString(), Fields: fields})
	}
}

// EmitHookRecords emits, as a run emits its own, the hook_started /
// hook_response messages of the hooks that ran outside a run — Setup and
// SessionStart as the session started, a typed command's
// UserPromptExpansion — when IncludeHookEvents asks for them.
func (s *Session) EmitHookRecords(emit Emit) {
	(&run{s: s, emit: emit}).flushHookRecords()
}

// notify shows a message to the user (hook errors, hook system messages).
func (r *run) notify(msg string) {
	if n := r.s.cfg.Notify; n != nil && strings.TrimSpace(msg) != "" {
		n(msg)
	}
}

// hookBase is the common part of every hook payload of this run.
func (r *run) hookBase() hook.Base {
	var b hook.Base
	if f := r.s.cfg.HookBase; f != nil {
		b = f()
	}
	if b.SessionID == "" {
		b.SessionID = r.s.cfg.SessionID
	}
	b.PromptID = r.promptID
	return b
}

// preToolUse runs the PreToolUse hooks of a call. It reports whether the
// call may go on to the permission check.
func (r *run) preToolUse(c *call) bool {
	out := r.fireHook(&hook.PreToolUseInput{Base: r.hookBase(), ToolName: c.name, ToolInput: c.input, ToolUseID: c.id})
	c.hookContext = append(c.hookContext, out.AdditionalContext...)
	if out.Stop {
		r.stopRequested(out.StopReason)
	}
	switch out.Permission {
	case hook.DecisionDeny:
		msg := out.HookName + " hook error: " + out.Reason
		r.deny(c, msg, false)
		return false
	case hook.DecisionDefer:
		if r.parentID != nil {
			// Nobody resumes a subagent: its call cannot wait for the host.
			c.fail(out.HookName + " hook deferred this call, but a subagent's calls cannot wait for a later decision: it did not run.")
			return false
		}
		r.deferred = c
		return false
	case hook.DecisionAllow, hook.DecisionAsk:
		c.hookDecision = string(out.Permission)
	}
	if len(out.UpdatedInput) > 0 && string(out.UpdatedInput) != string(c.input) {
		if err := r.s.cfg.Tools.Validate(c.tool, out.UpdatedInput); err != nil {
			c.fail(wrapInputError("the input a PreToolUse hook set is invalid: " + err.Error()))
			return false
		}
		c.input = out.UpdatedInput
		c.readOnly = c.tool.ReadOnly(c.input)
	}
	return true
}

// permissionRequest runs the PermissionRequest hooks of a call that needs
// approval; decided is false when no hook decided.
func (r *run) permissionRequest(c *call) (v Verdict, decided bool) {
	out := r.fireHook(&hook.PermissionRequestInput{Base: r.hookBase(), ToolName: c.name, ToolInput: c.input, ToolUseID: c.id})
	switch out.Permission {
	case hook.DecisionAllow:
		return Verdict{Behavior: Allow, Input: out.UpdatedInput}, true
	case hook.DecisionDeny:
		msg := out.Reason
		if msg == "" {
			msg = "Permission denied by a PermissionRequest hook."
		}
		if out.Interrupt {
			r.stopRequested(msg)
		}
		return Verdict{Behavior: Deny, Message: msg}, true
	}
	return Verdict{}, false
}

// postToolUse runs PostToolUse (or PostToolUseFailure) hooks and folds their
// feedback into the call's result. A call the user interrupted is still
// reported, with is_interrupt, under a context the interrupt does not end.
func (r *run) postToolUse(c *call) {
	base := r.hookBase()
	var in hook.Input
	ctx := r.ctx
	if c.result.IsError {
		interrupted := r.ctx.Err() != nil
		if interrupted {
			ctx = context.WithoutCancel(r.ctx)
		}
		in = &hook.PostToolUseFailureInput{Base: base, ToolName: c.name, ToolInput: c.input, ToolUseID: c.id,
			Error: llm.TextOf(c.result.Content), IsInterrupt: interrupted, DurationMS: c.duration.Milliseconds()}
	} else {
		in = &hook.PostToolUseInput{Base: base, ToolName: c.name, ToolInput: c.input, ToolUseID: c.id,
			ToolResponse: structuredJSON(c.struct_), DurationMS: c.duration.Milliseconds()}
	}
	out := r.fireHookCtx(ctx, in)
	if len(out.UpdatedToolOutput) > 0 {
		c.result.Content = []llm.Block{llm.Text(rawText(out.UpdatedToolOutput))}
	}
	if out.Block {
		c.result.Content = append(c.result.Content, llm.Text(out.HookName+" hook feedback: "+out.Reason))
	}
	c.hookContext = append(c.hookContext, out.AdditionalContext...)
	if out.Stop {
		r.stopRequested(out.StopReason)
	}
}

// permissionDenied runs the PermissionDenied hooks of a call that was just
// denied, whoever denied it; a hook's retry:true tells the model, in the
// call's result, that it may try again.
func (r *run) permissionDenied(c *call, reason string) {
	out := r.fireHook(&hook.PermissionDeniedInput{Base: r.hookBase(), ToolName: c.name, ToolInput: c.input,
		ToolUseID: c.id, Reason: reason})
	if out.Retry {
		c.result.Content = append(c.result.Content, llm.Text(retryNote))
	}
	if out.Stop {
		r.stopRequested(out.StopReason)
	}
}

// retryNote is what the model reads after a denial a PermissionDenied hook
// allows it to retry.
const retryNote = "A PermissionDenied hook says you may try this call again (the cause of the denial may have been dealt with)."

// postToolBatch runs the PostToolBatch hooks once the calls of a response
// all have their results, before the next request: their context, and the
// reason of a block, go to the model with the results. It returns a result
// message when a hook stops the session.
func (r *run) postToolBatch(calls []*call) *protocol.Result {
	if r.s.cfg.Hooks == nil || !r.s.cfg.Hooks.Has(hook.PostToolBatch) {
		return nil
	}
	batch := make([]hook.BatchToolCall, len(calls))
	for i, c := range calls {
		batch[i] = hook.BatchToolCall{ToolName: c.name, ToolInput: c.input, ToolUseID: c.id}
		if c.ran {
			// The result as the model reads it, as Claude Code sends it
			// (PostToolUse gets the tool's structured response).
			batch[i].ToolResponse, _ = jsonx.Marshal(llm.TextOf(c.result.Content))
		}
	}
	out := r.fireHook(&hook.PostToolBatchInput{Base: r.hookBase(), ToolCalls: batch})
	// The last message holds the batch's results.
	if out.Block {
		r.addToLastUser(llm.Text(out.HookName + " hook feedback: " + out.Reason))
	}
	if len(out.AdditionalContext) > 0 {
		r.addToLastUser(hook.ContextBlock(string(hook.PostToolBatch), out.AdditionalContext))
	}
	if out.Stop {
		return r.errorResult(protocol.ResultDuringExecution, "hook_stopped", stopText(out.StopReason))
	}
	return nil
}

// stopFailure runs the StopFailure hooks of a turn that ended on an API
// error, in place of Stop. What they answer changes nothing.
func (r *run) stopFailure(err error) {
	r.fireHook(&hook.StopFailureInput{Base: r.hookBase(), Error: failureKind(err), ErrorDetails: err.Error(),
		LastAssistantMessage: r.lastText})
}

// failureKind is the error type of a StopFailure payload (Claude Code's
// SDKAssistantMessageError) for an error of a request to the model.
func failureKind(err error) string {
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) {
		return "unknown"
	}
	if kind, ok := failureKinds[apiErr.Type]; ok {
		return kind
	}
	switch s := apiErr.Status; {
	case s == 400 || s == 413:
		return "invalid_request"
	case s == 401 || s == 403:
		return "authentication_failed"
	case s == 402:
		return "billing_error"
	case s == 404:
		return "model_not_found"
	case s == 429:
		return "rate_limit"
	case s == 529:
		return "overloaded"
	case s >= 500:
		return "server_error"
	}
	return "unknown"
}

// failureKinds maps the API's error types to StopFailure's.
var failureKinds = map[string]string{
	"invalid_request_error": "invalid_request",
	"request_too_large":     "invalid_request",
	"authentication_error":  "authentication_failed",
	"permission_error":      "authentication_failed",
	"billing_error":         "billing_error",
	"not_found_error":       "model_not_found",
	"rate_limit_error":      "rate_limit",
	"overloaded_error":      "overloaded",
	"api_error":             "server_error",
	"timeout_error":         "server_error",
}

// stopRequested records that a hook asked to end the session.
func (r *run) stopRequested(reason string) {
	if r.stopReason == "" {
		if reason == "" {
			reason = "A hook stopped the session."
		}
		r.stopReason = reason
	}
}

func structuredJSON(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	if s, ok := v.(string); ok {
		b, _ := json.Marshal(s)
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// rawText is the text of a JSON string, or the JSON itself.
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// userPromptSubmit runs the UserPromptSubmit hooks; a non-nil result ends
// the run (the prompt was refused or the session stopped).
func (r *run) userPromptSubmit(prompt []llm.Block) (extra []llm.Block, stop *protocol.Result) {
	text := r.typed
	if text == "" {
		text = llm.TextOf(prompt)
	}
	out := r.fireHook(&hook.UserPromptSubmitInput{Base: r.hookBase(), Prompt: text})
	switch {
	case out.Block:
		return nil, r.errorResult(protocol.ResultDuringExecution, "prompt_blocked", out.HookName+" hook blocked the prompt: "+out.Reason)
	case out.Stop:
		return nil, r.errorResult(protocol.ResultDuringExecution, "hook_stopped", stopText(out.StopReason))
	}
	if len(out.AdditionalContext) > 0 {
		extra = append(extra, hook.ContextBlock("UserPromptSubmit", out.AdditionalContext))
	}
	return extra, nil
}

// stopHook runs the Stop hooks when the model ends its turn. It returns the
// feedback to send back when a hook says the model must go on.
func (r *run) stopHook(lastText string) (feedback string, stop *protocol.Result) {
	base := r.hookBase()
	tasks := r.runningTasks()
	var in hook.Input = &hook.StopInput{Base: base, StopHookActive: r.stopHookActive, LastAssistantMessage: lastText, BackgroundTasks: tasks}
	if base.AgentID != "" {
		// A subagent ending its turn fires SubagentStop, not Stop.
		in = &hook.SubagentStopInput{Base: base, StopHookActive: r.stopHookActive, AgentID: base.AgentID,
			AgentType: base.AgentType, AgentTranscriptPath: r.s.cfg.TranscriptPath, LastAssistantMessage: lastText,
			BackgroundTasks: tasks}
	}
	out := r.fireHook(in)
	if out.Stop {
		return "", r.errorResult(protocol.ResultDuringExecution, "hook_stopped", stopText(out.StopReason))
	}
	if out.Block {
		return out.HookName + " hook feedback: " + out.Reason, nil
	}
	return "", nil
}

func stopText(reason string) string {
	if reason == "" {
		return "A hook stopped the session."
	}
	return "A hook stopped the session: " + reason
}

// runningTasks are the background commands of the thread's shell still
// running, as Stop hooks are told of them.
func (r *run) runningTasks() []hook.BackgroundTask {
	env, hooks := r.s.cfg.Env, r.s.cfg.Hooks
	if env == nil || env.Shell == nil || hooks == nil || !hooks.Has(hook.Stop) && !hooks.Has(hook.SubagentStop) {
		return nil // nobody to tell
	}
	var out []hook.BackgroundTask
	for _, j := range env.Shell.Jobs() {
		if st := j.Status(); st.State == shell.JobRunning {
			out = append(out, hook.BackgroundTask{ID: j.ID, Type: "shell", Status: string(st.State),
				Description: cmp.Or(j.Description, j.Command), Command: j.Command})
		}
	}
	return out
}
