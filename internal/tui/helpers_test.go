package tui

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tackcode/tack/agent"
)

// fakeBackend records what the model asks of the session.
type fakeBackend struct {
	lsp        []agent.LanguageServerStatus
	sent       []string
	interrupts int
	modes      []agent.PermissionMode
	models     []string
	rules      []string
	clears     int
	resumed    []string
	reopened   []agent.Options
	notified   []string
	prompts    []agent.Prompt
	rewound    []string
	logins     []string
	info       agent.ClientInfo
	settings   agent.Settings
	hooks      []agent.HookEntry
	// sessions are the saved sessions; transcripts their conversations.
	sessions    []agent.SessionInfo
	transcripts map[string][]agent.MessageParam
}

func (f *fakeBackend) Send(p string) error { f.sent = append(f.sent, p); return nil }
func (f *fakeBackend) SendPrompt(p agent.Prompt) error {
	f.sent = append(f.sent, p.Text)
	f.prompts = append(f.prompts, p)
	return nil
}
func (f *fakeBackend) Interrupt() { f.interrupts++ }
func (f *fakeBackend) SetModel(name string) (string, error) {
	f.models = append(f.models, name)
	if name == "" {
		return "claude-default", nil
	}
	if name == "nonsense" {
		return "", errors.New("unknown model nonsense")
	}
	return "claude-" + name, nil
}
func (f *fakeBackend) SetPermissionMode(m agent.PermissionMode) error {
	f.modes = append(f.modes, m)
	return nil
}
func (f *fakeBackend) Info() agent.ClientInfo                        { return f.info }
func (f *fakeBackend) MCPServers() []agent.MCPServerStatus           { return nil }
func (f *fakeBackend) LanguageServers() []agent.LanguageServerStatus { return f.lsp }
func (f *fakeBackend) Settings() agent.Settings                      { return f.settings }
func (f *fakeBackend) Hooks() []agent.HookEntry                      { return f.hooks }
func (f *fakeBackend) Sessions() ([]agent.SessionInfo, error)        { return f.sessions, nil }
func (f *fakeBackend) SessionMessages(id string) ([]agent.MessageParam, error) {
	return f.transcripts[id], nil
}
func (f *fakeBackend) Clear() error           { f.clears++; return nil }
func (f *fakeBackend) Resume(id string) error { f.resumed = append(f.resumed, id); return nil }
func (f *fakeBackend) Reopen(change func(*agent.Options)) error {
	var o agent.Options
	change(&o)
	f.reopened = append(f.reopened, o)
	return nil
}
func (f *fakeBackend) AllowRule(rule string) error { f.rules = append(f.rules, rule); return nil }
func (f *fakeBackend) ContextUsage() agent.ContextUsage {
	return agent.ContextUsage{Model: "claude-test", Window: 100_000, Categories: []agent.ContextCategory{
		{Name: "System prompt", Tokens: 3000}, {Name: "Conversation", Tokens: 47000}}}
}
func (f *fakeBackend) MCPLogin(name string) error {
	f.logins = append(f.logins, name)
	return nil
}
func (f *fakeBackend) RewindFiles(id string) agent.RewindResult {
	f.rewound = append(f.rewound, id)
	return agent.RewindResult{CanRewind: true}
}
func (f *fakeBackend) Notify(typ, title, msg string) []string {
	f.notified = append(f.notified, typ+": "+msg)
	return []string{"notified"}
}

// harness is a model under test with what it printed.
type harness struct {
	t       *testing.T
	m       *Model
	be      *fakeBackend
	printed []string
	clock   time.Time
}

func newHarness(t *testing.T, opts ...func(*modelConfig)) *harness {
	t.Helper()
	h := &harness{t: t, be: &fakeBackend{info: agent.ClientInfo{SessionID: "s1", Model: "claude-opus-5-5", PermissionMode: agent.PermissionDefault, Commands: []string{"compact", "review"}}},
		clock: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	cfg := modelConfig{
		backend:   h.be,
		noTimers:  true,
		cwd:       t.TempDir(),
		now:       func() time.Time { return h.clock },
		printHook: func(s string) { h.printed = append(h.printed, ansi.Strip(s)) },
	}
	for _, o := range opts {
		o(&cfg)
	}
	h.m = newModel(cfg)
	h.m.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	return h
}

// send delivers a message and runs the commands it returns that are
// immediate (not ticks, not prints): their messages are delivered too.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// run runs cmd for its message, following batches, and delivers the
// messages of the model's own asynchronous work (scrollback prints are
// seen through the printHook; the model makes no timers in tests).
func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		h.t.Fatal("a command did not return")
	}
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case shellDoneMsg, clearedMsg, statusLineMsg, resumedMsg, replayMsg, commandDocsMsg, reopenedMsg, noticesMsg, rewoundMsg, mcpLoginMsg, clipboardImageMsg:
		h.send(msg)
	}
}

func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (h *harness) press(code rune, mod ...tea.KeyMod) {
	h.t.Helper()
	k := tea.KeyPressMsg{Code: code}
	for _, m := range mod {
		k.Mod |= m
	}
	h.send(k)
}

func (h *harness) enter() { h.press(tea.KeyEnter) }

func (h *harness) view() string { return ansi.Strip(h.m.View().Content) }

func (h *harness) allPrinted() string { return strings.Join(h.printed, "\n") }

// event is a streaming event of the main conversation.
func event(v string) *agent.StreamEvent {
	return &agent.StreamEvent{Type: "stream_event", Event: json.RawMessage(v)}
}

func textDelta(i int, s string) *agent.StreamEvent {
	b, _ := json.Marshal(s)
	return event(fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, b))
}

func assistant(blocks ...agent.ContentBlock) *agent.AssistantMessage {
	m := &agent.AssistantMessage{Type: "assistant", SessionID: "s1"}
	m.Message.Role = agent.RoleAssistant
	m.Message.Content = blocks
	return m
}

func toolResult(id, text string, isError bool, structured any) *agent.UserMessage {
	res := agent.ContentBlock{Type: agent.BlockToolResult, ToolUseID: id, Content: []agent.ContentBlock{agent.TextBlock(text)}, IsError: isError}
	return &agent.UserMessage{Type: "user", Message: agent.MessageParam{Role: agent.RoleUser, Content: []agent.ContentBlock{res}}, ToolUseResult: structured}
}

func result(cost float64) *agent.ResultMessage {
	return &agent.ResultMessage{Type: "result", Subtype: "success", TotalCostUSD: cost,
		ModelUsage: map[string]agent.ModelUsage{"claude-opus-5-5": {InputTokens: 100, OutputTokens: 20, CostUSD: cost, ContextWindow: 200000}}}
}
