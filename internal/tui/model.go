package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/version"
)

// backend is what the model asks of the session; *host is the real one.
type backend interface {
	Send(prompt string) error
	// SendPrompt sends a prompt with images.
	SendPrompt(p agent.Prompt) error
	Interrupt()
	SetModel(model string) (string, error)
	SetPermissionMode(mode agent.PermissionMode) error
	Info() agent.ClientInfo
	MCPServers() []agent.MCPServerStatus
	LanguageServers() []agent.LanguageServerStatus
	// Settings are the settings the session runs under.
	Settings() agent.Settings
	// Hooks are the session's hooks, with where each is defined.
	Hooks() []agent.HookEntry
	// Sessions lists the saved sessions of the working directory, newest
	// first; SessionMessages is the conversation of one of them.
	Sessions() ([]agent.SessionInfo, error)
	SessionMessages(id string) ([]agent.MessageParam, error)
	// Clear replaces the session by a new, empty one.
	Clear() error
	// Resume replaces the session by the saved one with this id or name.
	Resume(idOrName string) error
	// Reopen resumes the session at once with changed options.
	Reopen(change func(*agent.Options)) error
	// AllowRule allows calls matching rule for the rest of the session
	// and saves it to the local settings, which later sessions read.
	AllowRule(rule string) error
	// ContextUsage says what fills the context window.
	ContextUsage() agent.ContextUsage
	// MCPLogin signs in to a remote MCP server with OAuth.
	MCPLogin(name string) error
	// RewindFiles puts the files back as they were before the prompt id.
	RewindFiles(id string) agent.RewindResult
	// Notify runs the Notification hooks and returns what they ask to show.
	Notify(notificationType, title, message string) []string
}

type modelConfig struct {
	backend     backend
	cwd         string
	getenv      func(string) string
	historyPath string // "" keeps no history on disk
	prompt      string // sent once the program starts
	pickSession bool   // open the session picker once the program starts
	pickSearch  string // with pickSession: list only the sessions matching it
	resumed     bool   // the session continues a saved one: show its end
	now         func() time.Time
	// printHook, when set, sees every text printed to the scrollback (tests).
	printHook func(string)
	// noTimers turns off the spinner's clock and the Ctrl-C timeout (tests).
	noTimers bool
	// clipboardImage reads an image from the clipboard (nil: the system's
	// clipboard tools).
	clipboardImage func() ([]byte, error)
	// commandDocs, when set, loads the descriptions of the session's
	// commands (in the background, at start).
	commandDocs func() map[string]commandDoc
}

// Model is the state of the UI.
type Model struct {
	cfg     modelConfig
	be      backend
	now     func() time.Time
	st      styles
	md      *markdown
	width   int
	height  int
	input   textarea.Model
	history *history
	search  *historySearch

	// session
	sessionID string
	modelID   string
	mode      agent.PermissionMode
	// autoCycle puts auto mode in the Shift+Tab cycle: the session was
	// started in it, which is how a user opts in to it.
	autoCycle bool
	commands  []string // the session's own slash commands (skills, commands…)
	addDirs   []string // the other working directories
	// commandDocs describe them, by name, once loaded.
	commandDocs map[string]commandDoc

	// the run
	runs      int // prompts sent and not yet finished
	runStart  time.Time
	outTokens int64
	msgBase   int64 // outTokens when the current model message started
	frame     int
	ticking   bool
	stream    textStream
	// streamFloor is the height the streaming text has reached during the
	// run: the live region keeps it (see render).
	streamFloor int
	// blockTypes are the content blocks of the model message streaming, by
	// index; streamedTexts counts text blocks printed from the stream whose
	// assistant message has not come yet.
	blockTypes    map[int]string
	streamedTexts int
	thinking      bool
	tools         []*toolCall          // running tool calls, oldest first
	hookStatus    []hookStatus         // running hooks with a statusMessage, oldest first
	idleSeq       int                  // numbers the waits for the user (idle.go)
	images        []agent.ContentBlock // pasted images, by placeholder number
	turns         []turnMark           // the prompts of this session (checkpoints.go)
	lastUUID      string               // the conversation's last message
	vim           vimState             // vim mode of the prompt (vim.go)
	cost          costTally
	// lastContext is the size of the last request (input and cache
	// tokens): what fills the context window.
	lastContext int64
	bashNotes   []string // `!` commands and their output, for the next prompt

	// question shows AskUserQuestion's questions (questions.go).
	question *questionDialog

	dialog *permDialog
	picker *sessionPicker
	// prompts is the picker of earlier prompts (Esc Esc); lastEsc the time
	// of an Esc on an empty prompt, for the second one.
	prompts *promptPicker
	lastEsc time.Time
	compl   completion
	// pastes are large pasted texts, shown in the input as a placeholder
	// and put back in the prompt when it is sent.
	pastes []string

	ctrlCArmed bool
	quitting   bool
	// leftAtPrompt: the user asked to leave (/exit, Ctrl-D, Ctrl-C twice).
	leftAtPrompt bool
	notice       string      // a one-line hint in the status area
	status       statusState // the statusLine command's (statusline.go)
	// started is when the session started; lines the lines its edits
	// added and removed; lastUsage the last request's usage (status line).
	started   time.Time
	lines     lineTally
	lastUsage *agent.Usage
	// cache is the prompt cache as the main thread's requests saw it
	// (status line, promptcache.go).
	cache promptCache

	// printing: the scrollback is written in order, one print at a time.
	outq       []string
	printing   bool
	printedAny bool
	// sized is set once the live region has been drawn: printing may start.
	sized        bool
	waitingFrame bool
}

func newModel(cfg modelConfig) *Model {
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.getenv == nil {
		cfg.getenv = func(string) string { return "" }
	}
	m := &Model{cfg: cfg, be: cfg.backend, now: cfg.now, st: newStyles(), width: 80, height: 24}
	m.started = m.now()
	m.md = newMarkdown()
	m.input = newInput()
	m.history = loadHistory(cfg.historyPath)
	m.history.inMemory = truthy(cfg.getenv(skipHistoryEnv))
	info := m.be.Info()
	m.sessionID, m.modelID, m.mode = info.SessionID, info.Model, info.PermissionMode
	if m.mode == "" {
		m.mode = agent.PermissionDefault
	}
	m.autoCycle = m.mode == agent.PermissionAuto
	m.commands = info.Commands
	m.resize(m.width, m.height)
	// A first line in the scrollback: it also keeps the live region off the
	// terminal's top row, where its redraws (an erase from the top left
	// corner) make tmux push the screen into its history.
	m.print(m.st.accent.Render("✻") + " " + m.st.bold.Render("tack") + m.st.dim.Render(" "+version.Version+" · "+cfg.cwd+" · /help for commands"))
	if cfg.resumed {
		// Before anything else is printed: the end of the conversation.
		m.replayed(loadReplay(m.be, m.sessionID))
	}
	return m
}

func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.SetPromptFunc(2, func(pi textarea.PromptInfo) string {
		if pi.LineNumber == 0 {
			return "> "
		}
		return "  "
	})
	ta.Placeholder = `Type a prompt, / for commands, ! for a shell command, # to note in memory`
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 10
	ta.CharLimit = 0
	ta.EndOfBufferCharacter = ' '
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "ctrl+j", "alt+enter"))
	ta.KeyMap = km
	s := ta.Styles()
	s.Focused.CursorLine = s.Focused.Text
	// A drawn cursor, steady: a blinking one would redraw the prompt twice
	// a second. (The terminal's own cursor, placed in the prompt, now and
	// then makes Bubble Tea print above the live region at the wrong row.)
	s.Cursor.Blink = false
	ta.SetStyles(s)
	ta.SetVirtualCursor(true)
	ta.Focus()
	return ta
}

// Init sends the first prompt, if any, and starts the status line.
func (m *Model) Init() tea.Cmd {
	var cmds []tea.Cmd
	if m.cfg.pickSession {
		m.openPicker(m.cfg.pickSearch)
	}
	if p := strings.TrimSpace(m.cfg.prompt); p != "" {
		cmds = append(cmds, m.submit(p))
	}
	cmds = append(cmds, m.refreshStatusLine(), m.flushPrints())
	if load := m.cfg.commandDocs; load != nil {
		cmds = append(cmds, func() tea.Msg { return commandDocsMsg(load()) })
	}
	return tea.Batch(cmds...)
}

func (m *Model) resize(w, h int) {
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	m.width, m.height = w, h
	m.input.SetWidth(max(10, w-2))
	m.input.MaxHeight = max(3, h/3)
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg, sizeMsg:
		var size tea.WindowSizeMsg
		switch msg := msg.(type) {
		case tea.WindowSizeMsg:
			size = msg
		case sizeMsg:
			size = tea.WindowSizeMsg(msg)
		}
		m.resize(size.Width, size.Height)
		if !m.sized && !m.waitingFrame {
			// Printing above the live region before it has been drawn
			// once misplaces the lines (Bubble Tea computes from a frame
			// of height 0): the first print waits for the first frames.
			m.waitingFrame = true
			if m.cfg.noTimers {
				m.sized = true
			} else {
				cmds = append(cmds, tea.Tick(50*time.Millisecond, func(time.Time) tea.Msg { return firstFrameMsg{} }))
			}
		}
	case firstFrameMsg:
		m.sized = true
	case tea.KeyPressMsg:
		m.disarmIdle()
		cmds = append(cmds, m.key(msg))
	case mcpLoginMsg:
		if msg.err != nil {
			m.printError(msg.err.Error())
		} else {
			m.out("Signed in to " + msg.name + "; it is connected again.")
		}
	case clipboardImageMsg:
		cmds = append(cmds, m.clipboardImage(msg))
	case rewoundMsg:
		cmds = append(cmds, m.rewound(msg))
	case idleMsg:
		cmds = append(cmds, m.idle(msg))
	case noticesMsg:
		for _, n := range msg {
			m.printNotice(n)
		}
	case tea.InterruptMsg:
		m.quitting = true
	case tea.PasteMsg:
		if m.dialog != nil {
			cmds = append(cmds, m.dialog.paste(msg.Content))
			break
		}
		if m.question != nil {
			cmds = append(cmds, m.question.paste(msg.Content))
			break
		}
		cmds = append(cmds, m.paste(msg.Content))
	case engineMsg:
		m.seen(msg.msg)
		cmds = append(cmds, m.engineMessage(msg))
		if _, done := msg.msg.(*agent.ResultMessage); done && !m.busy() {
			cmds = append(cmds, m.armIdle())
		}
	case noticeMsg:
		m.printNotice(msg.text)
	case permRequestMsg:
		if msg.req.tool == agent.AskUserQuestionTool {
			m.openQuestions(msg.req)
			break
		}
		m.openDialog(msg.req)
	case permCancelMsg:
		if m.dialog != nil && m.dialog.req == msg.req {
			m.dialog = nil
		}
		if m.question != nil && m.question.req == msg.req {
			m.question = nil
		}
	case tickMsg:
		cmds = append(cmds, m.tick())
	case printedMsg:
		m.printing = false
	case ctrlCExpiredMsg:
		m.ctrlCArmed = false
		if m.notice == ctrlCHint {
			m.notice = ""
		}
	case shellDoneMsg:
		m.shellDone(msg)
	case statusLineMsg:
		cmds = append(cmds, m.statusDone(msg))
	case statusDueMsg:
		cmds = append(cmds, m.runStatusLine())
	case clearedMsg:
		cmds = append(cmds, m.cleared(msg.err))
	case resumedMsg:
		cmds = append(cmds, m.resumed(msg))
	case replayMsg:
		m.replayed(msg)
	case commandDocsMsg:
		m.commandDocs = msg
	case reopenedMsg:
		cmds = append(cmds, m.reopened(msg))
	case editorDoneMsg:
		if msg.err != nil {
			m.printError("editor: " + msg.err.Error())
		}
	}
	cmds = append(cmds, m.flushPrints())
	if m.quitting {
		if m.printing {
			// A print is on its way: its printedMsg comes back here, what
			// is still queued is printed then, and the program ends after
			// the last one (quitting now would lose the queue).
			return m, tea.Batch(cmds...)
		}
		// Whatever is left is printed before the program ends.
		return m, tea.Sequence(tea.Batch(cmds...), tea.Quit)
	}
	return m, tea.Batch(cmds...)
}

// print queues text for the scrollback, a blank line apart from what was
// printed before.
func (m *Model) print(text string) {
	if m.cfg.printHook != nil {
		m.cfg.printHook(text)
	}
	if m.printedAny {
		m.outq = append(m.outq, "")
	}
	m.printedAny = true
	m.outq = append(m.outq, text)
}

type printedMsg struct{}

type firstFrameMsg struct{}

// flushPrints prints what is queued, one print at a time so that the
// scrollback keeps the order things happened in.
func (m *Model) flushPrints() tea.Cmd {
	if m.printing || !m.sized || len(m.outq) == 0 {
		return nil
	}
	text := strings.Join(m.outq, "\n")
	m.outq = m.outq[:0]
	m.printing = true
	return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
}

type tickMsg struct{}

func tickCmd() tea.Cmd {
	return tea.Tick(120*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// startTicking starts the spinner's clock unless it runs already.
func (m *Model) startTicking() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	if m.cfg.noTimers {
		return nil
	}
	return tickCmd()
}

func (m *Model) tick() tea.Cmd {
	m.frame++
	if m.runs == 0 && len(m.tools) == 0 {
		m.ticking = false
		return nil
	}
	return tickCmd()
}

func (m *Model) busy() bool { return m.runs > 0 }

// leave ends the program as the user asked at the prompt.
func (m *Model) leave() {
	m.quitting, m.leftAtPrompt = true, true
}

const ctrlCHint = "Press Ctrl-C again to exit"

type ctrlCExpiredMsg struct{}

// View draws the live region.
func (m *Model) View() tea.View {
	var v tea.View
	if m.quitting {
		v.SetContent("")
		return v
	}
	v.SetContent(m.render())
	v.WindowTitle = "tack"
	return v
}
