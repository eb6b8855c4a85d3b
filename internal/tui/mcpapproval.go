package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// The project's .mcp.json servers the user has not decided on are put to
// the user before the session starts, one at a time, in a program of its
// own (as the trust question is): the answer is recorded where `tack mcp
// approve` records it, and the session then starts the approved ones.

// mcpAnswer is what the user answered for one server.
type mcpAnswer int

const (
	mcpAll  mcpAnswer = iota // this one and every later one of the project
	mcpUse                   // this one
	mcpSkip                  // not this one (also Esc)
)

var mcpChoices = [...]string{
	"Use this and all future MCP servers in this project",
	"Use this MCP server",
	"Continue without using this MCP server",
}

// mcpDialog is the program that asks about one server.
type mcpDialog struct {
	srv    agent.PendingMCPServer
	st     styles
	width  int
	sel    int
	answer mcpAnswer
	done   bool
	// record records an answer and says what it did.
	record func(mcpAnswer) (string, error)
	err    error
}

func (d *mcpDialog) Init() tea.Cmd { return nil }

func (d *mcpDialog) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	n := len(mcpChoices)
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		d.width = msg.Width
	case sizeMsg:
		d.width = msg.Width
	case tea.KeyPressMsg:
		switch k := msg.String(); k {
		case "up", "k", "shift+tab":
			d.sel = (d.sel + n - 1) % n
		case "down", "j", "tab":
			d.sel = (d.sel + 1) % n
		case "1", "2", "3":
			return d.choose(mcpAnswer(k[0] - '1'))
		case "enter":
			return d.choose(mcpAnswer(d.sel))
		case "esc", "ctrl+c", "ctrl+d":
			return d.choose(mcpSkip)
		}
	}
	return d, nil
}

// choose records answer and ends the program, leaving one line in the
// scrollback that says what was done.
func (d *mcpDialog) choose(a mcpAnswer) (tea.Model, tea.Cmd) {
	d.answer, d.done = a, true
	note, err := d.record(a)
	if err != nil {
		d.err = err
		return d, tea.Quit
	}
	return d, tea.Sequence(tea.Println(note), tea.Quit)
}

func (d *mcpDialog) View() tea.View {
	var v tea.View
	v.WindowTitle = "tack"
	if d.done {
		return v
	}
	width := dialogWidth(d.width)
	w := max(20, width-4)
	st := d.st
	var b strings.Builder
	b.WriteString(st.bold.Render("New MCP server found in .mcp.json: "+d.srv.Name) + "\n\n")
	b.WriteString(wrap("It runs: "+d.srv.Launch, w) + "\n")
	b.WriteString(st.dim.Render(wrap("Defined at "+d.srv.Source, w)) + "\n\n")
	b.WriteString(st.dim.Render(wrap("An MCP server runs code or reaches services on your behalf: use it only if you know what it does.", w)) + "\n\n")
	writeChoices(&b, st, mcpChoices[:], d.sel)
	b.WriteString("\n" + st.dim.Render("Enter to confirm · Esc to continue without it"))
	v.SetContent(st.dialog.Width(width).Render(b.String()))
	return v
}

// askMCPApprovals puts each pending project server to the user and records
// the answers, before the session starts. "All future" approves the rest
// too. Leaving the program (the context ending) asks nothing more.
func askMCPApprovals(ctx context.Context, opts agent.Options, popts []tea.ProgramOption) error {
	pending, err := agent.PendingMCPServers(opts)
	if err != nil {
		return fmt.Errorf("project MCP servers: %w", err)
	}
	st := newStyles()
	for _, srv := range pending {
		d := &mcpDialog{srv: srv, st: st, record: func(a mcpAnswer) (string, error) { return recordMCPAnswer(opts, srv.Name, a, st) }}
		if left, err := runStartDialog(ctx, d, popts); left || err != nil {
			return err
		}
		if d.err != nil {
			return d.err
		}
		if !d.done || d.answer == mcpAll {
			return nil
		}
	}
	return nil
}

// recordMCPAnswer records answer for server name and says what it did.
func recordMCPAnswer(opts agent.Options, name string, answer mcpAnswer, st styles) (string, error) {
	switch answer {
	case mcpAll:
		if err := agent.ApproveAllMCPServers(opts); err != nil {
			return "", fmt.Errorf("approve the project's MCP servers: %w", err)
		}
		return st.ok.Render("✓ Approved every MCP server of this project's .mcp.json"), nil
	case mcpUse:
		if err := agent.DecideMCPServer(opts, name, true); err != nil {
			return "", fmt.Errorf("approve MCP server %s: %w", name, err)
		}
		return st.ok.Render("✓ Approved MCP server " + name), nil
	}
	if err := agent.DecideMCPServer(opts, name, false); err != nil {
		return "", fmt.Errorf("refuse MCP server %s: %w", name, err)
	}
	return st.warn.Render("✗ Not using MCP server " + name + " (tack mcp approve " + name + " allows it later)"), nil
}
