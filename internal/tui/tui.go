// Package tui is tack's interactive terminal UI: a Bubble Tea program that
// is a thin client of the same engine as print mode (an agent.Client).
//
// Rendering is inline, never on the alternate screen: every finished piece
// of the conversation (a paragraph of the answer, a tool call with its
// result) is printed once above the program, into the terminal's own
// scrollback, and forgotten; only the live region below it (the text still
// streaming, the running tools, the spinner, the prompt, the status) is
// redrawn. Memory therefore does not grow with the length of the session
// and a redraw never touches what the user may be selecting or searching.
package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// Engine is what the UI needs of a session; *agent.Client is one.
type Engine interface {
	Send(prompt string) error
	SendPrompt(p agent.Prompt) error
	Messages() iter.Seq2[agent.Message, error]
	Interrupt() (stillQueued []string)
	SetModel(model string) (string, error)
	SetPermissionMode(mode agent.PermissionMode) error
	Info() agent.ClientInfo
	MCPServers() []agent.MCPServerStatus
	LanguageServers() []agent.LanguageServerStatus
	Flush(ctx context.Context) error
	Settings() agent.Settings
	Hooks() []agent.HookEntry
	Notify(ctx context.Context, notificationType, title, message string) []string
	RewindFiles(messageID string, dryRun bool) agent.RewindResult
	UpdatePermissions(ups ...agent.PermissionUpdate) error
	MCPLogin(ctx context.Context, name string) error
	ContextUsage() agent.ContextUsage
	// CloseFor ends the session, telling its SessionEnd hooks why.
	CloseFor(reason agent.EndReason) error
}

// StartFunc starts a session with the given options.
type StartFunc func(ctx context.Context, opts agent.Options) (Engine, error)

// StartClient starts an agent.Client: the default StartFunc.
func StartClient(ctx context.Context, opts agent.Options) (Engine, error) {
	c, err := agent.NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Config configures a run of the UI.
type Config struct {
	// Options are the session's options. Run sets CanUseTool,
	// IncludePartialMessages, HookStatusMessages and Notify.
	Options agent.Options
	// Prompt, when not empty, is sent as soon as the UI is up.
	Prompt string
	// PickSession opens the session picker of /resume as the UI starts
	// (tack -r without a value); PickSearch, when set, lists only the
	// sessions whose name or prompts contain it (tack -r WORD, when WORD
	// names no session).
	PickSession bool
	PickSearch  string
	// In and Out are the terminal; nil means the process's.
	In  io.Reader
	Out io.Writer
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Start starts the session; nil means StartClient.
	Start StartFunc
	// ProgramOptions are passed to tea.NewProgram after Run's own (tests
	// and benchmarks set a window size or a color profile).
	ProgramOptions []tea.ProgramOption
}

// Run runs the UI until the user leaves it.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Start == nil {
		cfg.Start = StartClient
	}
	cwd := cfg.Options.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	cwd = abs
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	popts := []tea.ProgramOption{}
	if cfg.In != nil {
		popts = append(popts, tea.WithInput(cfg.In))
	}
	if cfg.Out != nil {
		popts = append(popts, tea.WithOutput(cfg.Out))
	}
	popts = append(popts, cfg.ProgramOptions...)

	h := &host{ctx: ctx, cwd: cwd, start: cfg.Start}
	opts := cfg.Options
	opts.Cwd = cwd
	// Before anything of the folder's runs: is it trusted?
	opts, err = askTrust(ctx, opts, popts)
	if errors.Is(err, errTrustCancelled) {
		return nil
	}
	if err != nil {
		return err
	}
	// Then the project's MCP servers nobody approved yet.
	if err := askMCPApprovals(ctx, opts, popts); err != nil {
		return err
	}
	opts.IncludePartialMessages = true
	opts.HookStatusMessages = true // a hook's statusMessage by the spinner
	opts.FileCheckpointing = true  // for the rewind (Esc Esc)
	opts.CanUseTool = h.canUseTool
	opts.Notify = func(msg string) { h.send(noticeMsg{text: msg}) }
	h.opts = opts
	if err := h.startEngine(opts); err != nil {
		return fmt.Errorf("start the session: %w", err)
	}
	// The user leaving at the prompt (/exit, Ctrl-D, Ctrl-C twice) is
	// the reason the session ends; the context ending is another.
	end := agent.EndOther
	defer func() { h.close(end) }()

	sessions, err := agent.SessionsDir(opts)
	if err != nil {
		return fmt.Errorf("the folder of this directory's sessions: %w", err)
	}
	m := newModel(modelConfig{
		backend:     h,
		cwd:         cwd,
		getenv:      cfg.Getenv,
		historyPath: filepath.Join(sessions, "prompt-history.jsonl"),
		prompt:      cfg.Prompt,
		pickSession: cfg.PickSession,
		pickSearch:  cfg.PickSearch,
		resumed:     opts.Continue || opts.Resume != "",
		commandDocs: func() map[string]commandDoc { return commandDocsOf(h.Info()) },
	})
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithFilter(sizeFilter())}, popts...)...)
	h.setProgram(p)
	final, err := p.Run()
	if fm, ok := final.(*Model); ok && fm.leftAtPrompt {
		end = agent.EndPromptInputExit
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return nil
}

// host owns the running session for the model: it starts it (again, for
// /clear), pumps its messages into the program, and answers permission
// requests by asking the model.
type host struct {
	ctx   context.Context
	cwd   string
	start StartFunc
	opts  agent.Options

	mu      sync.Mutex
	program *tea.Program
	eng     Engine
	gen     int // bumped by every start: messages of an older session are dropped
	pending []tea.Msg
}

func (h *host) setProgram(p *tea.Program) {
	h.mu.Lock()
	h.program = p
	queued := h.pending
	h.pending = nil
	h.mu.Unlock()
	for _, msg := range queued {
		go p.Send(msg)
	}
}

// send delivers msg to the program (queued until it exists).
func (h *host) send(msg tea.Msg) {
	h.mu.Lock()
	p := h.program
	if p == nil {
		h.pending = append(h.pending, msg)
	}
	h.mu.Unlock()
	if p != nil {
		p.Send(msg)
	}
}

func (h *host) startEngine(opts agent.Options) error {
	eng, err := h.start(h.ctx, opts)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.eng = eng
	h.gen++
	gen := h.gen
	h.mu.Unlock()
	go h.pump(gen, eng)
	return nil
}

// pump forwards the session's messages to the program.
func (h *host) pump(gen int, eng Engine) {
	for msg, err := range eng.Messages() {
		h.mu.Lock()
		current := h.gen == gen
		h.mu.Unlock()
		if !current {
			return
		}
		h.send(engineMsg{msg: msg, err: err})
	}
}

func (h *host) engine() Engine {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.eng
}

func (h *host) close(reason agent.EndReason) {
	if e := h.engine(); e != nil {
		_ = e.CloseFor(reason)
	}
}

func (h *host) Send(prompt string) error        { return h.engine().Send(prompt) }
func (h *host) SendPrompt(p agent.Prompt) error { return h.engine().SendPrompt(p) }
func (h *host) Interrupt()                      { h.engine().Interrupt() }
func (h *host) SetModel(model string) (string, error) {
	return h.engine().SetModel(model)
}
func (h *host) SetPermissionMode(mode agent.PermissionMode) error {
	return h.engine().SetPermissionMode(mode)
}
func (h *host) Info() agent.ClientInfo                   { return h.engine().Info() }
func (h *host) RewindFiles(id string) agent.RewindResult { return h.engine().RewindFiles(id, false) }
func (h *host) MCPLogin(name string) error               { return h.engine().MCPLogin(h.ctx, name) }
func (h *host) ContextUsage() agent.ContextUsage         { return h.engine().ContextUsage() }
func (h *host) Notify(typ, title, message string) []string {
	return h.engine().Notify(h.ctx, typ, title, message)
}
func (h *host) MCPServers() []agent.MCPServerStatus { return h.engine().MCPServers() }
func (h *host) LanguageServers() []agent.LanguageServerStatus {
	return h.engine().LanguageServers()
}

// Clear ends the session and starts a new, empty one with the same options
// (the mode and model in use carried over); the hooks see a conversation
// cleared (SessionEnd and SessionStart, both "clear").
func (h *host) Clear() error { return h.restart(agent.EndClear, agent.RestartClear, "", nil) }

// Resume ends the session and resumes the one with this id or name
// (SessionEnd "resume", then SessionStart "resume").
func (h *host) Resume(idOrName string) error { return h.restart(agent.EndResume, "", idOrName, nil) }

// Reopen ends the session and resumes it at once with changed options (a
// name, more directories, plugins read again). For the hooks nothing ends
// or starts: the conversation goes on. A session with nothing recorded yet
// starts anew with them, under the same id.
func (h *host) Reopen(change func(*agent.Options)) error {
	return h.restart(agent.EndReopen, agent.RestartReopen, h.engine().Info().SessionID, change)
}

// restart replaces the session, ending it for reason: by a new one (resume
// ""), or the saved one resume names, started as how says; change, when
// set, adjusts the options, and the working directories it sets hold for
// later sessions too. The Setup hooks ran for the first session only.
func (h *host) restart(reason agent.EndReason, how agent.Restart, resume string, change func(*agent.Options)) error {
	old := h.engine()
	info := old.Info()
	opts := h.opts
	opts.Continue, opts.Resume, opts.ForkSession, opts.ResumeSessionAt, opts.SessionID = false, resume, false, "", ""
	opts.Setup, opts.Restart = "", how
	opts.PermissionMode = info.PermissionMode
	if resume == "" || change != nil {
		opts.Model = info.Model
	}
	if change != nil {
		change(&opts)
		h.mu.Lock()
		h.opts.AddDirs = opts.AddDirs
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.gen++ // drop what the old session still says
	h.mu.Unlock()
	_ = old.CloseFor(reason)
	if err := h.startEngine(opts); err != nil {
		if resume == "" {
			return fmt.Errorf("start a new session: %w", err)
		}
		// Back to a new session rather than none: the same one, when it
		// had nothing recorded to resume.
		opts.Resume = ""
		if change != nil {
			opts.SessionID = info.SessionID
		} else {
			opts.Restart = ""
		}
		if err2 := h.startEngine(opts); err2 != nil {
			return fmt.Errorf("resume %s: %w (and a new session: %v)", resume, err, err2)
		}
		if change != nil {
			return nil // nothing was recorded yet: the new session is the same
		}
		return fmt.Errorf("resume %s: %w", resume, err)
	}
	return nil
}

// AllowRule makes calls matching rule run without asking for the rest of
// the session, and saves it to the local settings, which later sessions
// read: the session takes the rule first, so one it refuses is not saved.
func (h *host) AllowRule(rule string) error {
	rv, err := agent.ParsePermissionRule(rule)
	if err != nil {
		return err
	}
	return h.engine().UpdatePermissions(agent.PermissionUpdate{Type: "addRules", Behavior: "allow",
		Destination: "localSettings", Rules: []agent.PermissionRuleValue{rv}})
}

func (h *host) Settings() agent.Settings { return h.engine().Settings() }

func (h *host) Hooks() []agent.HookEntry { return h.engine().Hooks() }

func (h *host) Sessions() ([]agent.SessionInfo, error) { return agent.ListSessions(h.options()) }

func (h *host) SessionMessages(id string) ([]agent.MessageParam, error) {
	return agent.SessionMessages(h.options(), id)
}

// options are the options sessions start with.
func (h *host) options() agent.Options {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.opts
}

// canUseTool is the session's CanUseTool: it runs on the engine's
// goroutine and blocks until the user answers in the dialog.
func (h *host) canUseTool(ctx context.Context, tool string, input json.RawMessage, info agent.ToolPermissionContext) (agent.PermissionResult, error) {
	// Show what the run produced so far (the tool call itself) first.
	if e := h.engine(); e != nil {
		_ = e.Flush(ctx)
	}
	req := &permRequest{tool: tool, input: input, info: info, reply: make(chan permAnswer, 1)}
	h.send(permRequestMsg{req: req})
	select {
	case a := <-req.reply:
		if a.interrupt {
			// Before the answer returns, so that no further request starts:
			// the run ends as an interrupt at this call (Claude Code's "No").
			h.Interrupt()
		}
		return agent.PermissionResult{Allow: a.allow, Message: a.message, UpdatedInput: a.input}, nil
	case <-ctx.Done():
		h.send(permCancelMsg{req: req})
		return agent.PermissionResult{}, ctx.Err()
	}
}

// engineMsg carries one message of the session into the program.
type engineMsg struct {
	msg agent.Message
	err error
}

// noticeMsg is something the session tells the user (Options.Notify).
type noticeMsg struct{ text string }

// permRequestMsg asks the user about a tool call.
type permRequestMsg struct{ req *permRequest }

// permCancelMsg withdraws a request (its run was interrupted).
type permCancelMsg struct{ req *permRequest }

type permRequest struct {
	tool  string
	input json.RawMessage
	info  agent.ToolPermissionContext
	reply chan permAnswer
}

type permAnswer struct {
	allow   bool
	message string
	// interrupt ends the run with the denial: the user said no and gave
	// no message for the model to act on.
	interrupt bool
	// input, when set, replaces the call's input (AskUserQuestion's answers).
	input json.RawMessage
}

// sizeFilter keeps from the renderer the window size messages that do not
// change the size it knows. Bubble Tea sizes its renderer at start-up and
// then also sends that size as a message; on every size message the
// renderer erases and redraws the live region from where it believes the
// cursor is, which in inline mode can leave a copy of the region in the
// scrollback. Such messages reach the model as sizeMsg instead.
func sizeFilter() func(tea.Model, tea.Msg) tea.Msg {
	var last tea.WindowSizeMsg
	return func(_ tea.Model, msg tea.Msg) tea.Msg {
		size, ok := msg.(tea.WindowSizeMsg)
		if !ok {
			return msg
		}
		first := last == (tea.WindowSizeMsg{})
		same := size == last
		last = size
		if first || same {
			return sizeMsg(size)
		}
		return msg
	}
}

// sizeMsg is a window size the renderer knows already.
type sizeMsg tea.WindowSizeMsg
