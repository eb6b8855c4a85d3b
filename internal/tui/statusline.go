package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/version"
)

// uiSettings are the settings the UI reads itself (statusLine, and the
// rules and hooks listed by /permissions and /hooks), re-read on demand.
type uiSettings struct {
	load func() (*config.Merged, error)
	// scopes are the --setting-sources (nil: all).
	scopes []config.Scope

	mu     sync.Mutex
	merged *config.Merged
	err    string
}

// loadUISettings reads the settings as the session does: untrusted, the
// folder's own files keep only their deny and ask rules (so its status line
// never runs).
func loadUISettings(cwd, configDir, flagSettings string, sources []string, untrusted bool) *uiSettings {
	var scopes []config.Scope
	if sources != nil {
		scopes = []config.Scope{}
		for _, s := range sources {
			parsed, err := config.ParseSources(s)
			if err == nil {
				scopes = append(scopes, parsed...)
			}
		}
	}
	u := &uiSettings{scopes: scopes, load: func() (*config.Merged, error) {
		return config.Load(config.LoadOptions{ConfigDir: configDir, ProjectDir: cwd, Cwd: cwd, FlagSettings: flagSettings, Sources: scopes, Untrusted: untrusted})
	}}
	u.reload()
	return u
}

// reload reads the settings again; nil when they cannot be read.
func (u *uiSettings) reload() *config.Merged {
	if u.load == nil {
		return u.current()
	}
	m, err := u.load()
	u.mu.Lock()
	defer u.mu.Unlock()
	if err != nil {
		u.err = err.Error()
		return nil
	}
	u.merged, u.err = m, ""
	return m
}

func (u *uiSettings) current() *config.Merged {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.merged
}

// statusLineCommand is the statusLine setting's command, or "".
func (u *uiSettings) statusLineCommand() string {
	m := u.current()
	if m == nil || m.StatusLine == nil || m.StatusLine.Type != "" && m.StatusLine.Type != "command" {
		return ""
	}
	return m.StatusLine.Command
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
	command := m.cfg.settings.statusLineCommand()
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
