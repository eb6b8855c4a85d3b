package runtime

import (
	"context"
	"fmt"

	"github.com/tackcode/tack/internal/hook"
)

// The lifecycle hook events that are not part of a turn are fired here, and
// only here: SessionStart and SubagentStart as a thread starts, SessionEnd
// as the session closes, Notification when someone is asked for
// permission or a host says the session waits for its user. The engine
// fires the events of a turn (UserPromptSubmit, the tool events, Stop,
// SubagentStop) and of compaction (PreCompact, PostCompact, SessionStart
// with source "compact").

// fireStart runs the SessionStart hooks of the main thread (source startup
// or resume) or the SubagentStart hooks of a subagent; the context they
// give the model opens the thread's first message.
func (t *thread) fireStart(ctx context.Context) error {
	if t.parent != nil {
		out := t.hooks.Run(ctx, &hook.SubagentStartInput{Base: t.hookBase(), AgentID: t.spec.agentID, AgentType: t.spec.agentType})
		t.addHookContext("SubagentStart", out)
		return nil
	}
	base := t.hookBase()
	base.PermissionMode = ""
	source := "startup"
	if t.s.resumed != nil {
		source = "resume"
	}
	out := t.hooks.Run(ctx, &hook.SessionStartInput{Base: base, Source: source, Model: t.model.ID})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		t.s.notify(m)
	}
	t.addHookContext("SessionStart", out)
	t.s.watching.ask(out.WatchPaths)
	return nil
}

// addHookContext puts the additional context a start hook gave into the
// thread's first message.
func (t *thread) addHookContext(event string, out hook.Outcome) {
	if len(out.AdditionalContext) == 0 {
		return
	}
	t.context = append(t.context, hook.ContextBlock(event, out.AdditionalContext))
}

// fireEnd runs the SessionEnd hooks.
func (s *Session) fireEnd(ctx context.Context) {
	base := hook.Base{SessionID: s.sessionID, Cwd: s.main.env.Cwd(), TranscriptPath: s.transcriptPath()}
	out := s.main.hooks.Run(ctx, &hook.SessionEndInput{Base: base, Reason: "other"})
	for _, m := range append(out.SystemMessages, out.Errors...) {
		s.notify(m)
	}
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

// hookBase fills the common fields of the thread's hook payloads.
func (t *thread) hookBase() hook.Base {
	s := t.s
	b := hook.Base{SessionID: s.sessionID, TranscriptPath: s.transcriptPath(), Cwd: t.env.Cwd(),
		PermissionMode: string(t.checker.Mode()), AgentType: s.mainAgent}
	if t.parent != nil {
		b.AgentID, b.AgentType = t.spec.agentID, t.spec.agentType
	}
	return b
}
