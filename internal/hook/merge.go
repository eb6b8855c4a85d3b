package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// vote is one handler's say in a permission decision.
type vote struct {
	d      Decision
	reason string
}

// merger accumulates results into an Outcome, in configuration order.
type merger struct {
	o       *Outcome
	votes   []vote
	blocks  []string // reasons of blocks on block-style events
	hasStop bool
	ran     bool // a synchronous handler answered
	// elicit are the elicitation answers (accept, decline, cancel).
	elicit []string
}

// merge folds results (in configuration order) into o.
func (r *Runner) merge(o *Outcome, results []Result) {
	m := merger{o: o}
	for _, res := range results {
		o.Results = append(o.Results, res)
		if res.Async && res.Status == StatusSuccess && res.JSON == nil && res.Text == "" && res.Message == "" {
			continue // started, not finished: nothing to merge yet
		}
		m.add(res)
	}
	m.finish()
}

func (m *merger) add(res Result) {
	name := res.HookName
	if name == "" {
		name = m.o.HookName
	}
	if !res.Async {
		m.ran = true
	}
	if m.failed(res, name) {
		return
	}
	out := res.JSON
	if out == nil {
		m.plain(res, name)
		return
	}
	m.common(out)
	if res.Async {
		// An async answer arrives after the fact: it may inform, never decide.
		if hso := out.HookSpecificOutput; hso != nil && hso.AdditionalContext != "" {
			m.o.AdditionalContext = append(m.o.AdditionalContext, hso.AdditionalContext)
		}
		return
	}
	m.decision(out, name)
	if hso := out.HookSpecificOutput; hso != nil {
		m.specific(hso, name)
	}
}

// failed takes a handler that failed or blocked without JSON, and reports
// whether it did.
func (m *merger) failed(res Result, name string) bool {
	ev, o := m.o.Event, m.o
	switch res.Status {
	case StatusError, StatusCancelled:
		if failureBlocks(ev, res.Handler) && !res.Async {
			m.block(res.Message)
		} else {
			o.Errors = append(o.Errors, errorLine(name, res.Message))
		}
		return true
	case StatusBlocking:
		if CanBlock(ev) && !res.Async {
			m.block(blockReason(res.Message, "No stderr output"))
		} else {
			o.Errors = append(o.Errors, errorLine(name, blockReason(res.Message, "No stderr output")))
		}
		return true
	}
	return false
}

// plain takes a successful answer that is not JSON.
func (m *merger) plain(res Result, name string) {
	ev, o := m.o.Event, m.o
	switch {
	case res.Text == "":
	case ev == WorktreeCreate && !res.Async:
		// A command hook that made the worktree prints its path.
		m.first(&o.WorktreePath, strings.TrimSpace(res.Text), name, "worktree path")
	case plainTextIsContext(ev):
		o.AdditionalContext = append(o.AdditionalContext, strings.TrimRight(res.Text, "\r\n"))
	}
}

// common takes the fields every event's answer may have.
func (m *merger) common(out *Output) {
	o := m.o
	if out.Continue != nil && !*out.Continue {
		if !m.hasStop {
			o.StopReason = out.StopReason
		}
		m.hasStop = true
		o.Stop = true
	}
	if out.SystemMessage != "" {
		o.SystemMessages = append(o.SystemMessages, out.SystemMessage)
	}
	if out.SuppressOutput {
		o.SuppressOutput = true
	}
}

// decision takes the top-level decision: block, or the older approve.
func (m *merger) decision(out *Output, name string) {
	ev := m.o.Event
	switch out.Decision {
	case "":
	case "block":
		reason := blockReason(out.Reason, "Blocked by hook")
		switch {
		case ev == PreToolUse || ev == PermissionRequest:
			m.votes = append(m.votes, vote{DecisionDeny, reason})
		case CanBlock(ev):
			m.block(reason)
		}
	case "approve":
		if ev == PreToolUse {
			m.votes = append(m.votes, vote{DecisionAllow, out.Reason})
		}
	default:
		m.o.Errors = append(m.o.Errors, errorLine(name, fmt.Sprintf("unknown decision %q", out.Decision)))
	}
}

// specific takes the event's own answer (hookSpecificOutput).
func (m *merger) specific(hso *SpecificOutput, name string) {
	ev, o := m.o.Event, m.o
	if hso.HookEventName != "" && hso.HookEventName != ev {
		o.Errors = append(o.Errors, errorLine(name, fmt.Sprintf("hookSpecificOutput is for %s, not %s; ignored", hso.HookEventName, ev)))
		return
	}
	if hso.AdditionalContext != "" {
		o.AdditionalContext = append(o.AdditionalContext, hso.AdditionalContext)
	}
	switch ev {
	case PreToolUse:
		m.permissionDecision(hso, name)
	case PermissionRequest:
		m.permissionRequest(hso.Decision, name)
	case PostToolUse:
		m.toolOutput(hso, name)
	case PermissionDenied:
		o.Retry = o.Retry || hso.Retry
	case SessionStart:
		m.first(&o.InitialUserMessage, hso.InitialUserMessage, name, "initialUserMessage")
		m.first(&o.SessionTitle, hso.SessionTitle, name, "sessionTitle")
	case UserPromptSubmit:
		m.first(&o.SessionTitle, hso.SessionTitle, name, "sessionTitle")
	case Elicitation, ElicitationResult:
		m.elicitation(hso, name)
	case WorktreeCreate:
		m.first(&o.WorktreePath, hso.WorktreePath, name, "worktree path")
	}
	if ev == UserPromptSubmit || ev == UserPromptExpansion {
		o.SuppressOriginalPrompt = o.SuppressOriginalPrompt || hso.SuppressOriginalPrompt
	}
	if ev == SessionStart || ev == CwdChanged || ev == FileChanged {
		for _, p := range hso.WatchPaths {
			if !slices.Contains(o.WatchPaths, p) {
				o.WatchPaths = append(o.WatchPaths, p)
			}
		}
	}
}

// permissionDecision takes a PreToolUse answer: a vote, a rewritten input.
func (m *merger) permissionDecision(hso *SpecificOutput, name string) {
	if d := hso.PermissionDecision; d != "" {
		switch dec := Decision(d); dec {
		case DecisionAllow, DecisionAsk, DecisionDefer, DecisionDeny:
			reason := hso.PermissionDecisionReason
			if dec == DecisionDeny {
				reason = blockReason(reason, "Blocked by hook")
			}
			m.votes = append(m.votes, vote{dec, reason})
		default:
			m.o.Errors = append(m.o.Errors, errorLine(name, fmt.Sprintf("unknown permissionDecision %q", d)))
		}
	}
	m.updateInput(name, hso.UpdatedInput)
}

// permissionRequest takes a PermissionRequest answer given for the user.
func (m *merger) permissionRequest(d *PermissionRequestDecision, name string) {
	o := m.o
	if d == nil {
		return
	}
	switch d.Behavior {
	case "allow":
		m.votes = append(m.votes, vote{DecisionAllow, ""})
		m.updateInput(name, d.UpdatedInput)
		if len(d.UpdatedPermissions) > 0 && o.UpdatedPermissions == nil {
			o.UpdatedPermissions = d.UpdatedPermissions
		}
	case "deny":
		m.votes = append(m.votes, vote{DecisionDeny, blockReason(d.Message, "Denied by hook")})
		if d.Interrupt {
			o.Interrupt = true
		}
	default:
		o.Errors = append(o.Errors, errorLine(name, fmt.Sprintf("unknown decision behavior %q", d.Behavior)))
	}
}

// toolOutput takes a PostToolUse replacement of the tool's output.
func (m *merger) toolOutput(hso *SpecificOutput, name string) {
	upd := hso.UpdatedToolOutput
	if len(upd) == 0 {
		upd = hso.UpdatedMCPToolOutput
	}
	switch {
	case len(upd) == 0:
	case m.o.UpdatedToolOutput == nil:
		m.o.UpdatedToolOutput = upd
	default:
		m.o.Errors = append(m.o.Errors, errorLine(name, "another hook already replaced the tool output; this replacement is ignored"))
	}
}

// elicitation takes an answer to an MCP server's request for input.
func (m *merger) elicitation(hso *SpecificOutput, name string) {
	switch hso.Action {
	case "":
	case "accept", "decline", "cancel":
		m.elicit = append(m.elicit, hso.Action)
		if hso.Action == "accept" && len(hso.Content) > 0 && m.o.ElicitationContent == nil {
			m.o.ElicitationContent = hso.Content
		}
	default:
		m.o.Errors = append(m.o.Errors, errorLine(name, fmt.Sprintf("unknown elicitation action %q", hso.Action)))
	}
}

// first sets *dst to v unless a hook earlier in configuration order already
// gave one; a different later value is reported and ignored.
func (m *merger) first(dst *string, v, name, what string) {
	switch {
	case v == "" || v == *dst:
	case *dst == "":
		*dst = v
	default:
		m.o.Errors = append(m.o.Errors, errorLine(name, "another hook already gave the "+what+"; this one is ignored"))
	}
}

// updateInput applies the first updatedInput in configuration order.
func (m *merger) updateInput(name string, in json.RawMessage) {
	if len(in) == 0 {
		return
	}
	if t := bytes.TrimSpace(in); len(t) == 0 || t[0] != '{' {
		m.o.Errors = append(m.o.Errors, errorLine(name, "updatedInput is not a JSON object; ignored"))
		return
	}
	if m.o.UpdatedInput != nil {
		m.o.Errors = append(m.o.Errors, errorLine(name, "another hook already updated the input; this updatedInput is ignored"))
		return
	}
	m.o.UpdatedInput = in
}

// block records a blocking result: a deny vote on permission events, a
// block elsewhere.
func (m *merger) block(reason string) {
	if m.o.Event == PreToolUse || m.o.Event == PermissionRequest {
		m.votes = append(m.votes, vote{DecisionDeny, reason})
		return
	}
	m.blocks = append(m.blocks, reason)
}

func (m *merger) finish() {
	o := m.o
	if o.Event == WorktreeCreate && m.ran && o.WorktreePath == "" && len(m.blocks) == 0 {
		// The hooks replace git's creation: without a path there is no worktree.
		m.blocks = append(m.blocks, "no WorktreeCreate hook gave the worktree's path")
	}
	if len(m.blocks) > 0 {
		o.Block = true
		o.Reason = strings.Join(m.blocks, "\n")
		if o.Event == Elicitation || o.Event == ElicitationResult {
			m.elicit = append(m.elicit, "decline")
		}
	}
	for _, a := range m.elicit {
		if elicitRank[a] > elicitRank[o.ElicitationAction] {
			o.ElicitationAction = a
		}
	}
	if o.ElicitationAction != "accept" {
		o.ElicitationContent = nil
	}
	if len(m.votes) == 0 {
		return
	}
	best := DecisionNone
	for _, v := range m.votes {
		if v.d.outranks(best) {
			best = v.d
		}
	}
	var reasons []string
	for _, v := range m.votes {
		if v.d == best && v.reason != "" {
			reasons = append(reasons, v.reason)
		}
	}
	o.Permission = best
	o.Reason = strings.Join(reasons, "\n")
	o.Block = best == DecisionDeny
	if best == DecisionDeny || best == DecisionDefer {
		// The call does not run now: a rewritten input is moot.
		o.UpdatedInput = nil
	}
}

// elicitRank orders elicitation answers: the most refusing one wins.
var elicitRank = map[string]int{"accept": 1, "decline": 2, "cancel": 3}

// failureBlocks reports whether a failure of h counts as a block on ev:
// always on WorktreeCreate (a hook that fails leaves no worktree), else with
// onFailure "block" — never on Stop and SubagentStop, where a block would
// keep the model going forever on a broken hook.
func failureBlocks(ev Event, h Handler) bool {
	if ev == WorktreeCreate {
		return true
	}
	return h.OnFailure == "block" && CanBlock(ev) && ev != Stop && ev != SubagentStop
}
