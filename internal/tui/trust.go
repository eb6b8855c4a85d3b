package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/agent"
)

// The trust question is asked before the session is built, in a program
// of its own: nothing of the folder's (hooks, MCP servers, the status
// line…) can run before the user answers.

// trustAnswer is what the user answered.
type trustAnswer int

const (
	trustCancel trustAnswer = iota // Esc or Ctrl-C: leave tack
	trustYes                       // trust the folder and run its code
	trustNo                        // run the session with its code off
)

// trustDialog is the program that asks.
type trustDialog struct {
	ws     agent.Workspace
	st     styles
	width  int
	sel    int // 0: yes, 1: no
	answer trustAnswer
	done   bool
}

var trustChoices = [...]string{"Yes, trust this folder", "No, continue with its code turned off"}

func (d *trustDialog) Init() tea.Cmd { return nil }

func (d *trustDialog) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		d.width = msg.Width
	case sizeMsg:
		d.width = msg.Width
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up", "k", "shift+tab", "down", "j", "tab":
			d.sel = 1 - d.sel
		case "1", "y":
			return d.choose(trustYes)
		case "2", "n":
			return d.choose(trustNo)
		case "enter":
			return d.choose([...]trustAnswer{trustYes, trustNo}[d.sel])
		case "esc", "ctrl+c", "ctrl+d":
			return d.choose(trustCancel)
		}
	}
	return d, nil
}

// choose ends the program with answer, leaving one line in the scrollback.
func (d *trustDialog) choose(a trustAnswer) (tea.Model, tea.Cmd) {
	d.answer, d.done = a, true
	var note string
	switch a {
	case trustYes:
		note = d.st.ok.Render("✓ Trusted " + d.ws.Dir)
	case trustNo:
		note = d.st.warn.Render("✗ Not trusted: " + d.ws.Dir + " runs with its code turned off")
	default:
		return d, tea.Quit
	}
	return d, tea.Sequence(tea.Println(note), tea.Quit)
}

func (d *trustDialog) View() tea.View {
	var v tea.View
	v.WindowTitle = "tack"
	if d.done {
		return v
	}
	width := dialogWidth(d.width)
	w := max(20, width-4)
	st := d.st
	var b strings.Builder
	b.WriteString(st.bold.Render("Do you trust the files in this folder?") + "\n\n")
	b.WriteString(wrap(d.ws.Dir, w) + "\n\n")
	if len(d.ws.Brings) > 0 {
		b.WriteString(wrap("This folder brings code that tack would run for you:", w) + "\n")
		for _, c := range d.ws.Brings {
			b.WriteString("  • " + strings.ReplaceAll(wrap(c, w-4), "\n", "\n    ") + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(st.dim.Render(wrap("Trust it only if you know where its files come from: a cloned repository can run "+
		"commands on your machine through them. Trusting it also lets Claude Code run them.", w)) + "\n\n")
	writeChoices(&b, st, trustChoices[:], d.sel)
	b.WriteString("\n" + st.dim.Render("Enter to confirm · Esc to exit"))
	v.SetContent(st.dialog.Width(width).Render(b.String()))
	return v
}

// errTrustCancelled is Run's answer to Esc or Ctrl-C at the trust question.
var errTrustCancelled = errors.New("the folder was not trusted")

// askTrust settles the trust of the folder before the session starts: it
// returns opts unchanged when the folder is trusted (or the caller runs it
// untrusted), else asks, and records the answer "yes" or turns the
// session untrusted for "no".
func askTrust(ctx context.Context, opts agent.Options, popts []tea.ProgramOption) (agent.Options, error) {
	if opts.Untrusted {
		return opts, nil
	}
	ws, err := agent.CheckWorkspace(opts)
	if err != nil {
		return opts, fmt.Errorf("workspace trust: %w", err)
	}
	if ws.Trusted {
		return opts, nil
	}
	d := &trustDialog{ws: ws, st: newStyles()}
	left, err := runStartDialog(ctx, d, popts)
	if err != nil {
		return opts, err
	}
	if left {
		return opts, errTrustCancelled
	}
	switch d.answer {
	case trustYes:
		if _, err := agent.TrustWorkspace(opts); err != nil {
			return opts, err
		}
	case trustNo:
		opts.Untrusted = true
	default:
		return opts, errTrustCancelled
	}
	return opts, nil
}
