package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/internal/version"
)

// statusLineCommand is the session's statusLine command, or "". An
// untrusted folder's own settings never bring one: the session leaves them
// out.
func (m *Model) statusLineCommand() string {
	sl := m.be.Settings().StatusLine
	if sl == nil || sl.Type != "" && sl.Type != "command" {
		return ""
	}
	return sl.Command
}

type statusLineMsg struct {
	text string
	err  error
}

// statusInput is the session JSON a statusLine command reads on stdin.
type statusInput struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
		ProjectDir string `json:"project_dir"`
	} `json:"workspace"`
	Version     string `json:"version"`
	OutputStyle struct {
		Name string `json:"name"`
	} `json:"output_style"`
	Cost struct {
		TotalCostUSD       float64 `json:"total_cost_usd"`
		TotalDurationMS    int64   `json:"total_duration_ms"`
		TotalAPIDurationMS int64   `json:"total_api_duration_ms"`
	} `json:"cost"`
	PermissionMode string `json:"permission_mode"`
}

// refreshStatusLine runs the statusLine command, when there is one.
func (m *Model) refreshStatusLine() tea.Cmd {
	command := m.statusLineCommand()
	if command == "" || m.statusBusy {
		return nil
	}
	m.statusBusy = true
	var in statusInput
	in.HookEventName = "Status"
	in.SessionID = m.sessionID
	in.Cwd = m.cfg.cwd
	in.Model.ID, in.Model.DisplayName = m.modelID, m.modelID
	in.Workspace.CurrentDir, in.Workspace.ProjectDir = m.cfg.cwd, m.cfg.cwd
	in.Version = version.Version
	in.OutputStyle.Name = "default"
	in.Cost.TotalCostUSD = m.cost.usd
	in.Cost.TotalDurationMS = m.cost.wallMS
	in.Cost.TotalAPIDurationMS = m.cost.apiMS
	in.PermissionMode = string(m.mode)
	data, _ := json.Marshal(in)
	cwd := m.cfg.cwd
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, "/bin/sh", "-c", command)
		c.Dir = cwd
		c.Stdin = bytes.NewReader(data)
		out, err := c.Output()
		if err != nil {
			return statusLineMsg{err: err}
		}
		return statusLineMsg{text: strings.TrimRight(string(out), "\n")}
	}
}
