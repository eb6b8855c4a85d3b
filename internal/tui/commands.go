package tui

import (
	"cmp"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/version"
)

//go:embed prompts/init.md
var initPrompt string

// mentionTemplate wraps a file an @mention attaches: its path, then its text.
//
//go:embed prompts/mention.txt
var mentionTemplate string

// builtin is a slash command the UI runs itself.
type builtin struct{ name, args, help string }

// builtins are the UI's own commands. /compact is run by the session; the
// UI lists it for completion and help.
var builtins = []builtin{
	{"help", "", "show the commands and keys"},
	{"clear", "", "start a new conversation"},
	{"compact", "[instructions]", "summarise the conversation to free the context"},
	{"resume", "[id or name]", "resume an earlier conversation of this directory"},
	{"rename", "<name>", "name this conversation (so /resume NAME and -r NAME find it)"},
	{"add-dir", "<directory>", "add a working directory the tools may use"},
	{"model", "[name]", "show or switch the model (opus, sonnet, haiku or an id)"},
	{"cost", "", "show what the session has spent"},
	{"context", "", "show how full the context window is"},
	{"status", "", "show the session, model, mode and directory"},
	{"permissions", "", "list the permission rules in force"},
	{"hooks", "", "list the hooks configured"},
	{"mcp", "[login SERVER]", "list the MCP servers and their state; sign in to one with OAuth"},
	{"lsp", "", "list the language servers and their state"},
	{"agents", "", "list the subagents the model may start"},
	{"config", "", "list the settings files read"},
	{"memory", "", "edit the project's CLAUDE.md in $EDITOR"},
	{"init", "", "write a CLAUDE.md describing this repository"},
	{"reload-plugins", "", "load the plugins, skills, commands and agents again"},
	{"vim", "", "turn vim mode of the prompt on or off"},
	{"doctor", "", "check the installation"},
	{"exit", "", "leave tack"},
	{"quit", "", "leave tack"},
}

// runBuiltin runs the built-in command name.
func (m *Model) runBuiltin(name, args string) tea.Cmd {
	switch name {
	case "help":
		return m.cmdHelp()
	case "clear":
		return m.cmdClear()
	case "compact":
		return m.cmdCompact(args)
	case "resume":
		return m.cmdResume(args)
	case "rename":
		return m.cmdRename(args)
	case "add-dir":
		return m.cmdAddDir(args)
	case "model":
		return m.cmdModel(args)
	case "cost":
		return m.cmdCost()
	case "context":
		return m.cmdContext()
	case "status":
		return m.cmdStatus()
	case "permissions":
		return m.cmdPermissions()
	case "hooks":
		return m.cmdHooks()
	case "mcp":
		return m.cmdMCP(args)
	case "lsp":
		return m.cmdLSP()
	case "agents":
		return m.cmdAgents()
	case "config":
		return m.cmdConfig()
	case "memory":
		return m.cmdMemory()
	case "init":
		return m.cmdInit()
	case "vim":
		m.toggleVim()
		return nil
	case "reload-plugins":
		// The session is reopened: it reads its extensions anew.
		return m.reopen("Reloaded the plugins, skills, commands and agents", func(*agent.Options) {})
	case "doctor":
		return m.cmdDoctor()
	case "exit", "quit":
		m.leave()
	}
	return nil
}

func findBuiltin(name string) *builtin {
	for i := range builtins {
		if builtins[i].name == name {
			return &builtins[i]
		}
	}
	return nil
}

// slashCommand runs a built-in command, or says a command is unknown; ok is
// false for the session's own (skills, custom commands), which are sent as
// prompts.
func (m *Model) slashCommand(line string) (tea.Cmd, bool) {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if i := strings.IndexByte(name, '\n'); i >= 0 {
		name, args = name[:i], name[i+1:]+" "+args
	}
	if m.unknownCommand(name) {
		m.print(m.st.user.Render("> " + strings.TrimSpace(line)))
		m.out(m.unknownCommandText(name))
		return nil, true
	}
	if findBuiltin(name) == nil {
		// The session's own (a skill, a custom command, an MCP prompt), or
		// a prompt that starts with a slash: the session expands or sends it.
		return nil, false
	}
	m.print(m.st.user.Render("> " + strings.TrimSpace(line)))
	return m.runBuiltin(name, strings.TrimSpace(args)), true
}

func (m *Model) out(text string) {
	m.print(indentBlock(strings.TrimRight(text, "\n"), "  ⎿  ", "     "))
}

func (m *Model) cmdHelp() tea.Cmd {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range builtins {
		fmt.Fprintf(&b, "  /%-13s %s\n", strings.TrimSpace(c.name+" "+c.args), c.help)
	}
	var own []string
	for _, c := range m.commands {
		if findBuiltin(c) == nil {
			own = append(own, "/"+c)
		}
	}
	if len(own) > 0 {
		b.WriteString("Skills and commands of this project: " + strings.Join(own, " ") + "\n")
	}
	b.WriteString(`Keys:
  Enter send · Shift+Enter, Ctrl+J or \ then Enter: new line
  ↑/↓ history · Ctrl+R search history · Esc Esc on an empty prompt: earlier prompts
  Tab complete a /command or an @path (the file is attached to the prompt)
  Esc interrupt · Shift+Tab cycle mode (default → accept edits → plan)
  Ctrl+C clear / interrupt, twice to exit · Ctrl+D on an empty prompt exits · Ctrl+Z suspends
  !command runs it in the shell · #note adds a line to CLAUDE.md`)
	m.out(b.String())
	return nil
}

type clearedMsg struct{ err error }

func (m *Model) cmdClear() tea.Cmd {
	if m.busy() {
		m.be.Interrupt()
	}
	be := m.be
	return func() tea.Msg { return clearedMsg{err: be.Clear()} }
}

func (m *Model) cleared(err error) tea.Cmd {
	if err != nil {
		m.printError(err.Error())
		return nil
	}
	m.resetRun()
	m.print(m.st.dim.Render("  ⎿  Started a new conversation"))
	return m.refreshStatusLine()
}

func (m *Model) cmdCompact(args string) tea.Cmd {
	line := "/compact"
	if args != "" {
		line += " " + args
	}
	// The slash command was echoed already.
	return m.sendQuiet(line)
}

// sendQuiet sends a prompt without echoing it.
func (m *Model) sendQuiet(prompt string) tea.Cmd {
	if err := m.be.Send(prompt); err != nil {
		m.printError(err.Error())
		return nil
	}
	if m.runs == 0 {
		m.runStart = m.now()
		m.outTokens, m.msgBase = 0, 0
	}
	m.runs++
	return m.startTicking()
}

func (m *Model) cmdModel(args string) tea.Cmd {
	if args == "" {
		m.out(fmt.Sprintf("Model: %s\nSwitch with /model NAME (opus, sonnet, haiku, or a model id; \"default\" for the default).", m.modelID))
		return nil
	}
	name := args
	if name == "default" {
		name = ""
	}
	id, err := m.be.SetModel(name)
	if err != nil {
		m.printError(err.Error())
		return nil
	}
	if id != m.modelID {
		m.cache.expectDrop()
	}
	m.modelID = id
	m.out("Set the model to " + m.modelID)
	return m.refreshStatusLine()
}

func (m *Model) cmdCost() tea.Cmd {
	r := &agent.ResultMessage{TotalCostUSD: m.cost.usd, DurationAPIMS: m.cost.apiMS, DurationMS: m.cost.wallMS, ModelUsage: m.cost.byModel}
	m.out(r.CostReport())
	return nil
}

func (m *Model) cmdContext() tea.Cmd {
	u := m.be.ContextUsage()
	window := u.Window
	if window <= 0 {
		window = 200_000
	}
	total := 0
	for _, c := range u.Categories {
		total += c.Tokens
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Context: about %s of %s tokens (%.1f%%) with %s\n", tokens(int64(total)), tokens(int64(window)),
		float64(total)*100/float64(window), u.Model)
	for _, c := range u.Categories {
		share := float64(c.Tokens) / float64(window)
		bar := min(20, int(share*20+0.5))
		if c.Tokens > 0 && bar == 0 {
			bar = 1
		}
		fmt.Fprintf(&b, "  %-15s %8s  %s%s %.1f%%\n", c.Name, tokens(int64(c.Tokens)), strings.Repeat("█", bar), strings.Repeat("░", 20-bar), share*100)
	}
	if m.lastContext > 0 {
		fmt.Fprintf(&b, "The last request used %s tokens. /compact frees the conversation's part.", tokens(m.lastContext))
	} else {
		b.WriteString("Estimates (four bytes a token). /compact frees the conversation's part.")
	}
	m.out(b.String())
	return nil
}

func (m *Model) cmdStatus() tea.Cmd {
	info := m.be.Info()
	p := info.Provider
	var b strings.Builder
	fmt.Fprintf(&b, "Session: %s\nModel: %s\nMode: %s\nDirectory: %s\n", info.SessionID, info.Model, m.mode, m.cfg.cwd)
	fmt.Fprintf(&b, "Provider: %s\n", orNone(p.Name))
	if p.BaseURL != "" {
		fmt.Fprintf(&b, "Endpoint: %s\n", p.BaseURL)
	}
	if p.Region != "" {
		fmt.Fprintf(&b, "Region: %s%s\n", p.Region, from(p.RegionFrom))
	}
	if p.Project != "" {
		fmt.Fprintf(&b, "Project: %s%s\n", p.Project, from(p.ProjectFrom))
	}
	fmt.Fprintf(&b, "Credentials: %s\ntack %s", orNone(cmp.Or(p.Credential, info.APIKeySource)), version.Version)
	m.out(b.String())
	return nil
}

// from is " (from WHERE)", or "" when where is unknown.
func from(where string) string {
	if where == "" {
		return ""
	}
	return " (from " + where + ")"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func (m *Model) cmdPermissions() tea.Cmd {
	s := m.be.Settings()
	var b strings.Builder
	fmt.Fprintf(&b, "Mode: %s\n", m.mode)
	for _, g := range []struct {
		name  string
		rules []agent.SettingsRule
	}{{"Allow", s.Allow}, {"Ask", s.Ask}, {"Deny", s.Deny}} {
		fmt.Fprintf(&b, "%s:", g.name)
		if len(g.rules) == 0 {
			b.WriteString(" none\n")
			continue
		}
		b.WriteByte('\n')
		for _, r := range g.rules {
			fmt.Fprintf(&b, "  %s  %s\n", r.Rule, m.st.dim.Render("("+r.Scope+")"))
		}
	}
	m.out(b.String())
	return nil
}

func (m *Model) cmdHooks() tea.Cmd {
	list := m.be.Hooks()
	if len(list) == 0 {
		m.out("No hooks are configured.")
		return nil
	}
	var b strings.Builder
	var event agent.HookEvent
	for _, e := range list {
		if e.Event != event {
			event = e.Event
			fmt.Fprintf(&b, "%s\n", event)
		}
		matcher := e.Matcher
		if matcher == "" {
			matcher = "*"
		}
		where := e.Source
		if e.Origin != "" {
			where += " " + e.Origin
		}
		if e.Note != "" {
			where += " (" + e.Note + ")"
		}
		fmt.Fprintf(&b, "  [%s] %s: %s  %s\n", matcher, e.Type, truncate(firstLine(e.Run), 80), m.st.dim.Render(where))
	}
	m.out(strings.TrimRight(b.String(), "\n"))
	return nil
}

// mcpLoginMsg is the end of /mcp login.
type mcpLoginMsg struct {
	name string
	err  error
}

func (m *Model) cmdLSP() tea.Cmd {
	servers := m.be.LanguageServers()
	if len(servers) == 0 {
		m.out("No language servers are configured (lspServers in the settings or a plugin).")
		return nil
	}
	var b strings.Builder
	for i, s := range servers {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s · %s · %s", s.Name, s.State, strings.Join(s.Extensions, " "), s.Command)
		if s.Restarts > 0 {
			fmt.Fprintf(&b, " · restarted %d time(s)", s.Restarts)
		}
		fmt.Fprintf(&b, " (%s)", s.Source)
	}
	m.out(b.String())
	return nil
}

func (m *Model) cmdMCP(args string) tea.Cmd {
	if verb, name, _ := strings.Cut(args, " "); verb == "login" {
		name = strings.TrimSpace(name)
		if name == "" {
			m.out("Usage: /mcp login SERVER")
			return nil
		}
		m.out("Signing in to " + name + "… (the address to open is shown when the flow starts)")
		be := m.be
		return func() tea.Msg { return mcpLoginMsg{name: name, err: be.MCPLogin(name)} }
	}
	servers := m.be.MCPServers()
	if len(servers) == 0 {
		m.out("No MCP servers are configured.")
		return nil
	}
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "%s: %s", s.Name, s.Status)
		if s.Status == "connected" {
			fmt.Fprintf(&b, " · %d tool(s)", s.Tools)
		}
		if s.Transport != "" || s.Scope != "" {
			fmt.Fprintf(&b, " · %s", strings.Trim(s.Transport+" "+s.Scope, " "))
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "\n  %s", s.Error)
		}
		if s.Status == "needs-auth" {
			fmt.Fprintf(&b, "\n  sign in with /mcp login %s", s.Name)
		}
		b.WriteByte('\n')
	}
	m.out(b.String())
	return nil
}

func (m *Model) cmdAgents() tea.Cmd {
	agents := m.be.Info().Agents
	if len(agents) == 0 {
		m.out("No subagents.")
		return nil
	}
	var b strings.Builder
	for _, a := range agents {
		fmt.Fprintf(&b, "%s — %s\n", a.Name, firstLine(a.Description))
	}
	m.out(b.String())
	return nil
}

func (m *Model) cmdConfig() tea.Cmd {
	s := m.be.Settings()
	var b strings.Builder
	if len(s.Files) == 0 {
		b.WriteString("No settings files.\n")
	}
	for _, f := range s.Files {
		fmt.Fprintf(&b, "%s\n", f)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	m.out(b.String())
	return nil
}

type editorDoneMsg struct{ err error }

func (m *Model) cmdMemory() tea.Cmd {
	path := filepath.Join(m.cfg.cwd, "CLAUDE.md")
	editor := m.cfg.getenv("VISUAL")
	if editor == "" {
		editor = m.cfg.getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	m.out("Opening " + relPath(path, m.cfg.cwd) + " in " + editor)
	c := exec.Command("/bin/sh", "-c", editor+` "$1"`, "sh", path)
	return tea.ExecProcess(c, func(err error) tea.Msg { return editorDoneMsg{err: err} })
}

func (m *Model) cmdInit() tea.Cmd {
	return m.sendQuiet(initPrompt)
}

func (m *Model) cmdDoctor() tea.Cmd {
	info := m.be.Info()
	var b strings.Builder
	fmt.Fprintf(&b, "tack %s\n", version.Version)
	fmt.Fprintf(&b, "Credentials: %s\n", orNone(info.APIKeySource))
	if _, err := exec.LookPath("rg"); err != nil {
		b.WriteString("ripgrep: not found (search uses the built-in walker)\n")
	}
	if _, err := os.Stat(filepath.Join(m.cfg.cwd, "CLAUDE.md")); err != nil {
		b.WriteString("No CLAUDE.md in this directory: /init writes one\n")
	}
	for _, w := range m.be.Settings().Warnings {
		fmt.Fprintf(&b, "settings: %s\n", w)
	}
	for _, s := range m.be.MCPServers() {
		if s.Status != "connected" {
			fmt.Fprintf(&b, "MCP server %s: %s\n", s.Name, s.Status)
		}
	}
	m.out(b.String())
	return nil
}

// completion lists the slash commands that start with what is typed, or
// the paths an @mention may name.
type completion struct {
	items     []string
	sel       int
	dismissed string // the input the list was closed for
	mention   bool   // items are paths for the @word at the end of the input
}

func (c *completion) open() bool { return len(c.items) > 0 }

func (c *completion) move(d int) {
	if len(c.items) > 0 {
		c.sel = (c.sel + d + len(c.items)) % len(c.items)
	}
}

func (c *completion) dismiss(input string) {
	c.items, c.sel, c.dismissed = nil, 0, input
}

// updateCompletion recomputes the list for the input.
func (m *Model) updateCompletion() {
	v := m.input.Value()
	if v == m.compl.dismissed && v != "" {
		return
	}
	m.compl.dismissed = ""
	var items []string
	mention := false
	switch {
	case strings.HasPrefix(v, "/") && !strings.ContainsAny(v, " \n"):
		items = m.commandsWithPrefix(strings.TrimPrefix(v, "/"))
	default:
		if word := lastWord(v); strings.HasPrefix(word, "@") {
			items, mention = pathsWithPrefix(m.cfg.cwd, word[1:]), true
		}
	}
	if !slices.Equal(items, m.compl.items) {
		m.compl.sel = 0
	}
	m.compl.items, m.compl.mention = items, mention
}

func (m *Model) commandsWithPrefix(prefix string) []string {
	var items []string
	seen := map[string]bool{}
	for _, b := range builtins {
		if strings.HasPrefix(b.name, prefix) && !seen[b.name] {
			items = append(items, b.name)
			seen[b.name] = true
		}
	}
	for _, c := range m.commands {
		if strings.HasPrefix(c, prefix) && !seen[c] {
			items = append(items, c)
			seen[c] = true
		}
	}
	if len(items) == 1 && items[0] == prefix {
		return nil
	}
	return items
}

// lastWord is the text after the last blank of s.
func lastWord(s string) string {
	return s[strings.LastIndexAny(s, " \t\n")+1:]
}

// maxPathItems bounds the paths listed for an @mention.
const maxPathItems = 50

// pathsWithPrefix lists the files and folders whose path (relative to cwd)
// starts with prefix; folders end in "/". Hidden ones are listed only when
// asked for by a leading dot.
func pathsWithPrefix(cwd, prefix string) []string {
	dir, base := filepath.Split(prefix)
	ents, err := os.ReadDir(filepath.Join(cwd, dir))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		p := dir + name
		if e.IsDir() {
			p += "/"
		}
		out = append(out, p)
		if len(out) == maxPathItems {
			break
		}
	}
	if len(out) == 1 && out[0] == prefix {
		return nil
	}
	return out
}

// acceptCompletion puts the selected item in the input.
func (m *Model) acceptCompletion() {
	if !m.compl.open() {
		return
	}
	item := m.compl.items[m.compl.sel]
	v := m.input.Value()
	if m.compl.mention {
		v = strings.TrimSuffix(v, lastWord(v)) + "@" + item
		if !strings.HasSuffix(item, "/") {
			v += " "
		}
	} else {
		v = "/" + item
		if b := findBuiltin(item); b == nil || b.args != "" {
			v += " "
		}
	}
	m.input.SetValue(v)
	m.input.MoveToEnd()
	m.compl = completion{dismissed: v}
	if strings.HasSuffix(v, "/") {
		m.compl.dismissed = ""
		m.updateCompletion() // a folder: go on into it
	}
}

func (m *Model) renderCompletion() string {
	var b strings.Builder
	n := min(len(m.compl.items), 8)
	start := 0
	if m.compl.sel >= n {
		start = m.compl.sel - n + 1
	}
	for i := start; i < start+n; i++ {
		name := m.compl.items[i]
		var line string
		if m.compl.mention {
			line = "  @" + name
		} else {
			help := "(skill or command)"
			if bi := findBuiltin(name); bi != nil {
				help = bi.help
				if bi.args != "" {
					help = bi.args + "  " + help
				}
			} else if d, ok := m.commandDocs[name]; ok {
				help = strings.TrimSpace(d.hint + "  " + d.description)
			}
			line = fmt.Sprintf("  /%-16s %s", name, help)
		}
		if i == m.compl.sel {
			b.WriteString(m.st.selected.Render(truncate(line, m.width)))
		} else {
			b.WriteString(m.st.dim.Render(truncate(line, m.width)))
		}
		if i < start+n-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// commandDoc describes one of the session's own commands for completion.
type commandDoc struct{ description, hint string }

type commandDocsMsg map[string]commandDoc

// commandDocsOf takes the descriptions and argument hints of the session's
// commands from what it reports (it has read them already).
func commandDocsOf(info agent.ClientInfo) map[string]commandDoc {
	docs := map[string]commandDoc{}
	for _, c := range info.CommandDetails {
		docs[c.Name] = commandDoc{description: firstLine(c.Description), hint: c.ArgumentHint}
	}
	return docs
}

type reopenedMsg struct {
	done string // what to say once it worked
	err  error
}

// reopen resumes the session with changed options, between runs.
func (m *Model) reopen(done string, change func(*agent.Options)) tea.Cmd {
	if m.busy() {
		m.printError("wait until the model has finished (or press Esc), then try again")
		return nil
	}
	be := m.be
	return func() tea.Msg { return reopenedMsg{done: done, err: be.Reopen(change)} }
}

func (m *Model) reopened(r reopenedMsg) tea.Cmd {
	if r.err != nil {
		m.printError(r.err.Error())
	}
	info := m.be.Info()
	m.sessionID, m.modelID, m.commands = info.SessionID, info.Model, info.Commands
	m.commandDocs = commandDocsOf(info) // a reopened session reads its commands anew
	if r.err == nil {
		m.out(r.done)
	}
	return m.refreshStatusLine()
}

func (m *Model) cmdRename(name string) tea.Cmd {
	if name == "" {
		m.out("Usage: /rename NAME")
		return nil
	}
	return m.reopen("Named this conversation "+name, func(o *agent.Options) { o.Name = name })
}

func (m *Model) cmdAddDir(dir string) tea.Cmd {
	if dir == "" {
		m.out("Usage: /add-dir DIRECTORY")
		return nil
	}
	if strings.HasPrefix(dir, "~/") {
		dir = filepath.Join(m.cfg.getenv("HOME"), dir[2:])
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(m.cfg.cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		m.printError(dir + " is not a directory")
		return nil
	}
	dirs := append(slices.Clone(m.addDirs), dir)
	return m.reopen("Added "+dir+" to the working directories", func(o *agent.Options) { o.AddDirs = dirs })
}
