package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The questions asked before the session starts (trust, project MCP
// servers) are programs of their own with the same frame: numbered
// choices, the selected one marked, in the dialog box.

// runStartDialog runs d until it quits. left reports that the user left
// the program (its context ended) before answering.
func runStartDialog(ctx context.Context, d tea.Model, popts []tea.ProgramOption) (left bool, err error) {
	p := tea.NewProgram(d, append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithFilter(sizeFilter())}, popts...)...)
	if _, err := p.Run(); err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return true, nil
		}
		return false, fmt.Errorf("terminal UI: %w", err)
	}
	return false, nil
}

// dialogWidth is the dialog box's width for a terminal width (80 before
// the terminal has said its size).
func dialogWidth(width int) int {
	if width <= 0 {
		return 80
	}
	return width
}

// writeChoices writes the numbered choices, the selected one marked.
func writeChoices(b *strings.Builder, st styles, choices []string, sel int) {
	for i, c := range choices {
		line := fmt.Sprintf("%d. %s", i+1, c)
		if i == sel {
			b.WriteString(st.selected.Render("❯ "+line) + "\n")
		} else {
			b.WriteString("  " + line + "\n")
		}
	}
}
