package acp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// toolCall is what the session keeps of a call it reported.
type toolCall struct {
	seq      int // order of report
	name     string
	input    json.RawMessage
	diff     []sdk.ToolCallContent // the change an Edit or Write makes
	terminal string                // the client's terminal a Bash call ran in
}

// callInput holds the fields of the built-in tools' inputs that titles,
// locations and diffs are made from.
type callInput struct {
	Command     string `json:"command"`
	Description string `json:"description"`
	FilePath    string `json:"file_path"`
	Notebook    string `json:"notebook_path"`
	Path        string `json:"path"`
	Pattern     string `json:"pattern"`
	URL         string `json:"url"`
	Query       string `json:"query"`
	Offset      int    `json:"offset"`
	Content     string `json:"content"`
	OldString   string `json:"old_string"`
	NewString   string `json:"new_string"`
	ReplaceAll  bool   `json:"replace_all"`
	Edits       []struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	} `json:"edits"`
	Subject string `json:"subject"`
	Skill   string `json:"skill"`
	TaskID  string `json:"taskId"`
}

// kinds are the ACP kinds of tack's built-in tools; the rest are "other"
// (MCP tools, Skill…), Bash's depend on the command (kindOf).
var kinds = map[string]sdk.ToolKind{
	"Read": sdk.ToolKindRead, "NotebookRead": sdk.ToolKindRead,
	"Write": sdk.ToolKindEdit, "Edit": sdk.ToolKindEdit, "MultiEdit": sdk.ToolKindEdit, "NotebookEdit": sdk.ToolKindEdit,
	"Glob": sdk.ToolKindSearch, "Grep": sdk.ToolKindSearch, "ToolSearch": sdk.ToolKindSearch,
	"Bash": sdk.ToolKindExecute, "TaskOutput": sdk.ToolKindExecute, "TaskStop": sdk.ToolKindExecute,
	"WebFetch": sdk.ToolKindFetch, "WebSearch": sdk.ToolKindFetch,
	"TaskCreate": sdk.ToolKindThink, "TaskUpdate": sdk.ToolKindThink, "TaskList": sdk.ToolKindThink, "TaskGet": sdk.ToolKindThink,
	"TodoWrite": sdk.ToolKindThink, "Agent": sdk.ToolKindThink, "Task": sdk.ToolKindThink,
	"ExitPlanMode": sdk.ToolKindSwitchMode,
}

// kindOf is the kind of a call: a Bash command that only removes or moves
// files is a delete or a move.
func kindOf(name string, in callInput) sdk.ToolKind {
	if name == "Bash" {
		switch f := strings.Fields(in.Command); {
		case len(f) > 0 && f[0] == "rm" && !strings.ContainsAny(in.Command, ";&|<>`$"):
			return sdk.ToolKindDelete
		case len(f) > 0 && f[0] == "mv" && !strings.ContainsAny(in.Command, ";&|<>`$"):
			return sdk.ToolKindMove
		}
	}
	if k, ok := kinds[name]; ok {
		return k
	}
	return sdk.ToolKindOther
}

// titleOf is the one line a client shows for a call.
func titleOf(name string, in callInput, cwd string) string {
	rel := func(p string) string {
		if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	arg := ""
	switch name {
	case "Bash":
		arg = in.Command
	case "Read", "Write", "Edit", "MultiEdit":
		arg = rel(in.FilePath)
	case "NotebookEdit":
		arg = rel(in.Notebook)
	case "Glob", "Grep":
		arg = in.Pattern
		if in.Path != "" {
			arg += " in " + rel(in.Path)
		}
	case "WebFetch":
		arg = in.URL
	case "WebSearch":
		arg = in.Query
	case "TaskCreate":
		arg = in.Subject
	case "Agent", "Task":
		arg = in.Description
	case "Skill":
		arg = in.Skill
	}
	if arg == "" {
		return name
	}
	return name + " " + arg
}

// locationsOf are the files a call reads or changes.
func locationsOf(in callInput, cwd string) []sdk.ToolCallLocation {
	abs := func(p string) string {
		if !filepath.IsAbs(p) {
			return filepath.Join(cwd, p)
		}
		return p
	}
	switch {
	case in.FilePath != "":
		loc := sdk.ToolCallLocation{Path: abs(in.FilePath)}
		if in.Offset > 0 {
			loc.Line = sdk.Ptr(in.Offset)
		}
		return []sdk.ToolCallLocation{loc}
	case in.Notebook != "":
		return []sdk.ToolCallLocation{{Path: abs(in.Notebook)}}
	case in.Path != "":
		return []sdk.ToolCallLocation{{Path: abs(in.Path)}}
	}
	return nil
}

// toolStart reports a call the model made. The diff of an edit follows
// once the call is about to run (preview).
func (s *session) toolStart(b agent.ContentBlock) {
	var in callInput
	_ = json.Unmarshal(b.Input, &in)
	call := &toolCall{name: b.Name, input: b.Input}
	s.mu.Lock()
	s.seq++
	call.seq = s.seq
	s.calls[b.ID] = call
	s.mu.Unlock()
	s.send(sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
		ToolCallId: sdk.ToolCallId(b.ID), Title: titleOf(b.Name, in, s.cwd), Kind: kindOf(b.Name, in),
		Status: sdk.ToolCallStatusPending, Locations: locationsOf(in, s.cwd), RawInput: b.Input,
	}})
}

// toolDone reports a call's result.
func (s *session) toolDone(b agent.ContentBlock, structured any) {
	s.mu.Lock()
	call := s.calls[b.ToolUseID]
	delete(s.calls, b.ToolUseID)
	s.mu.Unlock()
	status := sdk.ToolCallStatusCompleted
	if b.IsError {
		status = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	switch text := agent.TextOf(b.Content); {
	case call != nil && call.terminal != "":
		content = []sdk.ToolCallContent{sdk.ToolTerminalRef(call.terminal)}
	case call != nil && len(call.diff) > 0 && !b.IsError:
		content = call.diff
	case text != "":
		content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(fence(text)))}
	}
	s.send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(b.ToolUseID),
		Status: &status, Content: content, RawOutput: structured}})
	if call != nil && !b.IsError {
		s.trackPlan(call, structured)
	}
}

// fence shows a tool's output as it is, not as Markdown.
func fence(text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks
}

// editTools are the calls whose change preview shows as a diff.
const editTools = "Write|Edit|MultiEdit"

// preview is a PreToolUse hook of the session's own: right before an edit
// runs (before its permission check, after the model's call was reported)
// it sends the change as a diff, from the file as it is then.
func (s *session) preview(ctx context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
	pre, ok := in.(*agent.PreToolUseHookInput)
	if !ok {
		return nil, nil
	}
	// The call goes out first.
	if err := s.client.Flush(ctx); err != nil {
		return nil, err
	}
	var input callInput
	_ = json.Unmarshal(pre.ToolInput, &input)
	diff := s.diffOf(pre.ToolName, input)
	s.mu.Lock()
	call := s.calls[pre.ToolUseID]
	if call != nil {
		call.diff = diff
	}
	s.mu.Unlock()
	if call != nil && diff != nil {
		s.send(sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(pre.ToolUseID), Content: diff}})
	}
	return nil, nil
}

// diffOf is the change an Edit, MultiEdit or Write call makes, against the
// file as the session would read it (the editor's buffer, when the client
// holds the files).
func (s *session) diffOf(name string, in callInput) []sdk.ToolCallContent {
	if in.FilePath == "" {
		return nil
	}
	path := in.FilePath
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.cwd, path)
	}
	old, exists := s.currentText(path)
	var next string
	switch name {
	case "Write":
		next = in.Content
	case "Edit":
		next = replace(old, in.OldString, in.NewString, in.ReplaceAll)
	case "MultiEdit":
		next = old
		for _, e := range in.Edits {
			next = replace(next, e.OldString, e.NewString, e.ReplaceAll)
		}
	default:
		return nil
	}
	d := sdk.ToolDiffContent(path, next)
	if exists {
		d = sdk.ToolDiffContent(path, next, old)
	}
	return []sdk.ToolCallContent{d}
}

func replace(text, old, repl string, all bool) string {
	switch {
	case old == "":
		return repl
	case all:
		return strings.ReplaceAll(text, old, repl)
	}
	return strings.Replace(text, old, repl, 1)
}
