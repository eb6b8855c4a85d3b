package runtime

import (
	"context"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/memory"
)

// The lifecycle hook events that are not part of a turn are fired here, and
// only here: Setup, SessionStart, InstructionsLoaded and SubagentStart as a
// thread starts (InstructionsLoaded again whenever memory loads later),
// SessionEnd as the session closes, Notification when someone is asked for
// permission, when a host says the session waits for its user and when the
// user has signed in to an MCP server. A typed
// command's UserPromptExpansion is fired where it expands (expansion.go).
// The engine fires the events of a turn (UserPromptSubmit, the tool
// events, Stop, SubagentStop) and of compaction (PreCompact, PostCompact,
// SessionStart with source "compact").

// fireStart runs the hooks of a thread's start. On the main thread: the
// Setup hooks the options ask for, the InstructionsLoaded hooks of the
// memory loaded for it, then the SessionStart hooks — none of them for
// a conversation its host reopens, which goes on. In a subagent: the
// SubagentStart hooks. What they give the model opens the thread's first
// message.
func (t *thread) fireStart(ctx context.Context) error {
	if t.parent != nil {
		out := t.fire(ctx, &hook.SubagentStartInput{Base: t.hookBase(), AgentID: t.spec.agentID, AgentType: t.spec.agentType})
		t.addHookContext("SubagentStart", out)
		return nil
	}
	s := t.s
	if s.cfg.Restart == RestartReopen {
		return nil
	}
	if trigger := s.cfg.Setup; trigger != "" {
		out := t.fire(ctx, &hook.SetupInput{Base: t.lifecycleBase(), Trigger: trigger})
		t.addHookContext("Setup", out)
	}
	// Claude Code tells of the memory loaded before SessionStart.
	if s.memory != nil {
		t.instructionsLoaded(ctx, s.memory.Files)
	}
	t.sessionStart(ctx)
	return nil
}

// sessionStart runs the SessionStart hooks of the main thread and takes
// what they answer: context for the model, a title for the session (as
// /rename gives one; not when the conversation was cleared), a first user
// message for print mode.
func (t *thread) sessionStart(ctx context.Context) {
	s := t.s
	source := startSource(s.cfg, s.resumed != nil)
	out := t.fire(ctx, &hook.SessionStartInput{Base: t.lifecycleBase(), Source: source, Model: t.model.ID, SessionTitle: s.title()})
	t.addHookContext("SessionStart", out)
	s.watching.ask(out.WatchPaths)
	if out.SessionTitle != "" && source != "clear" {
		s.metaMu.Lock()
		s.cfg.Name = out.SessionTitle
		s.metaMu.Unlock()
	}
	s.initialPrompt = out.InitialUserMessage
}

// startSource is how the session started, as SessionStart hooks are told:
// startup, resume, fork (a resumed session continued under a new id, as
// Claude Code 2.1.214 and later say) or clear.
func startSource(cfg Config, resumed bool) string {
	switch {
	case cfg.Restart == RestartClear:
		return "clear"
	case resumed && cfg.ForkSession:
		return "fork"
	case resumed:
		return "resume"
	}
	return "startup"
}

// title is the session's title: its name, or the one its transcript was
// given; "" for none.
func (s *Session) title() string {
	s.metaMu.Lock()
	name := s.cfg.Name
	s.metaMu.Unlock()
	if name == "" && s.resumed != nil {
		name = s.resumed.transcript.Meta.Name
	}
	return name
}

// instructionsLoaded runs the InstructionsLoaded hooks of memory files the
// thread has just put into its context, one payload per file. They cannot
// change what was loaded; what they say is shown. The auto memory is not
// an instructions file.
func (t *thread) instructionsLoaded(ctx context.Context, files []memory.File) {
	if !t.hooks.Has(hook.InstructionsLoaded) {
		return
	}
	for _, f := range files {
		if f.Kind == memory.AutoMem {
			continue
		}
		in := &hook.InstructionsLoadedInput{Base: t.lifecycleBase(), FilePath: f.Path, MemoryType: string(f.Kind),
			LoadReason: string(f.Reason), TriggerFilePath: f.Trigger, ParentFilePath: f.ImportedBy}
		if f.Reason == memory.GlobMatch {
			in.Globs = f.Globs
		}
		t.fire(ctx, in)
	}
}

// addHookContext gives the model the additional context a start hook
// gave: it opens the thread's first message or, in a resumed conversation,
// whose first message went long ago, joins the next prompt's (the same
// reminder, announced: see startEngine).
func (t *thread) addHookContext(event string, out hook.Outcome) {
	if len(out.AdditionalContext) == 0 {
		return
	}
	if t.parent == nil && t.s.resumed != nil {
		t.resumeNotes = append(t.resumeNotes, event+" hook additional context: "+strings.Join(out.AdditionalContext, "\n"))
		return
	}
	t.context = append(t.context, hook.ContextBlock(event, out.AdditionalContext))
}

// fireEnd runs the SessionEnd hooks, telling them why the session ends (""
// is EndOther; EndReopen runs none).
func (s *Session) fireEnd(ctx context.Context, reason string) {
	if reason == EndReopen {
		return
	}
	if reason == "" {
		reason = EndOther
	}
	s.main.fire(ctx, &hook.SessionEndInput{Base: s.main.lifecycleBase(), Reason: reason})
}

// Notify runs the Notification hooks, as a host does when the session waits
// for its user ("idle_prompt" after a while at the prompt…), and returns
// what they asked to show.
func (s *Session) Notify(ctx context.Context, notificationType, title, message string) []string {
	hooks := s.main.hooks
	if !hooks.Has(hook.Notification) {
		return nil
	}
	out := hooks.Run(ctx, &hook.NotificationInput{Base: s.main.hookBase(), NotificationType: notificationType, Title: title, Message: message})
	return append(out.SystemMessages, out.Errors...)
}

// notifyWaiting fires the Notification hooks as someone is asked for
// permission (a desktop notifier can tell the user tack is waiting), and
// shows what they say.
func (s *Session) notifyWaiting(ctx context.Context, toolName string) {
	for _, m := range s.Notify(ctx, "permission_prompt", "Permission needed", fmt.Sprintf("tack needs your permission to use %s", toolName)) {
		s.notify(m)
	}
}

// notifyAuthSuccess fires the Notification hooks once the user has signed
// in to the MCP server name (auth_success, which Claude Code sends, without
// a title, after its own login), and shows what they say.
func (s *Session) notifyAuthSuccess(ctx context.Context, server string) {
	for _, m := range s.Notify(ctx, "auth_success", "", fmt.Sprintf("Signed in to MCP server %s", server)) {
		s.notify(m)
	}
}

// fire runs the thread's hooks of one event and shows the user what they
// said (system messages, failures); the caller acts on the outcome.
func (t *thread) fire(ctx context.Context, in hook.Input) hook.Outcome {
	if !t.hooks.Has(in.EventName()) {
		return hook.Outcome{Event: in.EventName()}
	}
	out := t.hooks.Run(ctx, in)
	for _, m := range append(out.SystemMessages, out.Errors...) {
		t.s.notify(m)
	}
	return out
}

// hookBase fills the common fields of the thread's hook payloads.
func (t *thread) hookBase() hook.Base {
	s := t.s
	b := hook.Base{SessionID: s.sessionID, TranscriptPath: s.transcriptPath(), Cwd: t.env.Cwd(),
		PromptID: s.currentPromptID(), PermissionMode: string(t.checker.Mode()), AgentType: s.mainAgent}
	if t.parent != nil {
		b.AgentID, b.AgentType = t.spec.agentID, t.spec.agentType
	}
	return b
}

// lifecycleBase is hookBase for the events Claude Code sends without a
// permission mode: Setup, SessionStart, InstructionsLoaded, CwdChanged,
// SessionEnd.
func (t *thread) lifecycleBase() hook.Base {
	b := t.hookBase()
	b.PermissionMode = ""
	return b
}
