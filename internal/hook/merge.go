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
	ev, o := m.o.Event, m.o
	name := res.HookName
	if name == "" {
		name = o.HookName
	}
	if !res.Async {
		m.ran = true
	}
	switch res.Status {
	case StatusError, StatusCancelled:
		if failureBlocks(ev, res.Handler) && !res.Async {
			m.block(res.Message)
			return
		}
		o.Errors = append(o.Errors, errorLine(name, res.Message))
		return
	case StatusBlocking:
		if CanBlock(ev) && !res.Async {
			m.block(blockReason(res.Message, "No stderr output"))
			return
		}
		o.Errors = append(o.Errors, errorLine(name, blockReason(res.Message, "No stderr output")))
		return
	}

	out := res.JSON
	if out == nil {
		switch {
		case res.Text == "":
		case ev == WorktreeCreate && !res.Async:
			// A command hook that made the worktree prints its path.
			m.first(&o.WorktreePath, strings.TrimSpace(res.Text), name, "worktree path")
		case plainTextIsContext(ev):
			o.AdditionalContext = append(o.AdditionalContext, strings.TrimRight(res.Text, "\r\n"))
		}
		return
	}
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
	if res.Async {
		// An async answer arrives after the fact: it may inform, never decide.
		if hso := out.HookSpecificOutput; hso != nil && hso.AdditionalContext != "" {
			o.AdditionalContext = append(o.AdditionalContext, hso.AdditionalContext)
		}
		return
	}

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
		o.Errors = append(o.Errors, errorLine(name, fmt.Sprintf("unknown decision %q", out.Decision)))
	}

	hso := out.HookSpecificOutput
	if hso == nil {
		return
	}
	if hso.HookEventName != "" && hso.HookEventName != ev {
		o.Errors = append(o.Errors, errorLine(name, fmt.Sprintf("hookSpecificOutput is for %s, not %s; ignored", hso.HookEventName, ev)))
		return
	}
	if hso.AdditionalContext != "" {
		o.AdditionalContext = append(o.AdditionalContext, hso.AdditionalContext)
	}
	switch ev {
	case PreToolUse:
		if d := hso.PermissionDecision; d != "" {
			switch dec := Decision(d); dec {
			case DecisionAllow, DecisionAsk, DecisionDefer, DecisionDeny:
				reason := hso.PermissionDecisionReason
				if dec == DecisionDeny {
					reason = blockReason(reason, "Blocked by hook")
				}
				m.votes = append(m.votes, vote{dec, reason})
			default:
				o.Errors = append(o.Errors, errorLine(name, fmt.Sprintf("unknown permissionDecision %q", d)))
			}
		}
		m.updateInput(name, hso.UpdatedInput)
	case PermissionRequest:
		d := hso.Decision
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
	case PostToolUse:
		upd := hso.UpdatedToolOutput
		if len(upd) == 0 {
			upd = hso.UpdatedMCPToolOutput
		}
		if len(upd) > 0 {
			if o.UpdatedToolOutput == nil {
				o.UpdatedToolOutput = upd
			} else {
				o.Errors = append(o.Errors, errorLine(name, "another hook already replaced the tool output; this replacement is ignored"))
			}
		}
	case PermissionDenied:
		o.Retry = o.Retry || hso.Retry
	case SessionStart:
		m.first(&o.InitialUserMessage, hso.InitialUserMessage, name, "initialUserMessage")
		m.first(&o.SessionTitle, hso.SessionTitle, name, "sessionTitle")
	case UserPromptSubmit:
		m.first(&o.SessionTitle, hso.SessionTitle, name, "sessionTitle")
	case Elicitation, ElicitationResult:
		switch hso.Action {
		case "":
		case "accept", "decline", "cancel":
			m.elicit = append(m.elicit, hso.Action)
			if hso.Action == "accept" && len(hso.Content) > 0 && o.ElicitationContent == nil {
				o.ElicitationContent = hso.Content
			}
		default:
			o.Errors = append(o.Errors, errorLine(name, fmt.Sprintf("unknown elicitation action %q", hso.Action)))
		}
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
