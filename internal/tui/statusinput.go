package tui

import (
	"math"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/version"
)

// statusInput is the session JSON a statusLine command reads on stdin: the
// fields of Claude Code's, with the same meaning, so that the tools written
// for it (ccstatusline, ccusage) read tack's.
type statusInput struct {
	HookEventName  string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	// PromptID is the latest prompt's id, as its hook payloads carry it;
	// left out before the first prompt, as Claude Code does.
	PromptID string `json:"prompt_id,omitempty"`
	// Effort is left out when the model takes none.
	Effort *statusEffort `json:"effort,omitempty"`
	Model  struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string   `json:"current_dir"`
		ProjectDir string   `json:"project_dir"`
		AddedDirs  []string `json:"added_dirs"`
	} `json:"workspace"`
	Version     string `json:"version"`
	OutputStyle struct {
		Name string `json:"name"`
	} `json:"output_style"`
	Cost struct {
		TotalCostUSD       float64 `json:"total_cost_usd"`
		TotalDurationMS    int64   `json:"total_duration_ms"`
		TotalAPIDurationMS int64   `json:"total_api_duration_ms"`
		TotalLinesAdded    int     `json:"total_lines_added"`
		TotalLinesRemoved  int     `json:"total_lines_removed"`
	} `json:"cost"`
	ContextWindow     statusContext `json:"context_window"`
	ExceedsTokens200k bool          `json:"exceeds_200k_tokens"`
	// PromptCache is left out before the first request.
	PromptCache *statusPromptCache `json:"prompt_cache,omitempty"`
	// FastMode is Claude Code's faster output mode, which tack does not
	// have: always false, what Claude Code sends with it off.
	FastMode bool `json:"fast_mode"`
	Thinking struct {
		Enabled bool `json:"enabled"`
	} `json:"thinking"`
	Vim            *statusVim `json:"vim,omitempty"`
	PermissionMode string     `json:"permission_mode"`
}

// statusEffort is the effort the requests work at.
type statusEffort struct {
	Level string `json:"level"`
}

// statusContext is the context window: the session's token totals, the
// last request's usage, and how full the window is.
type statusContext struct {
	TotalInputTokens    int64        `json:"total_input_tokens"`
	TotalOutputTokens   int64        `json:"total_output_tokens"`
	ContextWindowSize   int          `json:"context_window_size"`
	CurrentUsage        *agent.Usage `json:"current_usage"`
	UsedPercentage      *int         `json:"used_percentage"`
	RemainingPercentage *int         `json:"remaining_percentage"`
}

type statusVim struct {
	Mode string `json:"mode"`
}

// statusInput gathers the session JSON from the UI's state.
func (m *Model) statusInput() statusInput {
	var in statusInput
	info := m.be.Info()
	in.HookEventName = "Status"
	in.SessionID = m.sessionID
	in.TranscriptPath = info.TranscriptPath
	in.Cwd = m.cfg.cwd
	in.PromptID = info.PromptID
	if info.Effort != "" {
		in.Effort = &statusEffort{Level: info.Effort}
	}
	name, window := modelDisplayName(m.modelID)
	in.Model.ID, in.Model.DisplayName = m.modelID, name
	in.Workspace.CurrentDir, in.Workspace.ProjectDir = m.cfg.cwd, m.cfg.cwd
	// The session's directories start with the working one, which is not
	// an added one.
	in.Workspace.AddedDirs = []string{}
	for _, d := range m.addDirs {
		if d != m.cfg.cwd {
			in.Workspace.AddedDirs = append(in.Workspace.AddedDirs, d)
		}
	}
	in.Version = version.Version
	in.OutputStyle.Name = info.OutputStyle
	if in.OutputStyle.Name == "" {
		in.OutputStyle.Name = "default"
	}
	in.Cost.TotalCostUSD = m.cost.usd
	in.Cost.TotalDurationMS = m.now().Sub(m.started).Milliseconds()
	in.Cost.TotalAPIDurationMS = m.cost.apiMS
	in.Cost.TotalLinesAdded, in.Cost.TotalLinesRemoved = m.lines.added, m.lines.removed
	in.ContextWindow = m.contextWindow(window)
	in.ExceedsTokens200k = m.lastContext > 200_000
	in.PromptCache = m.cache.status(m.now())
	in.Thinking.Enabled = info.Thinking
	switch m.vim.mode {
	case vimInsert:
		in.Vim = &statusVim{Mode: "INSERT"}
	case vimNormal:
		in.Vim = &statusVim{Mode: "NORMAL"}
	}
	in.PermissionMode = string(m.mode)
	return in
}

// contextWindow is the context_window object: totals over the session's
// results and the run in progress, and the fill of the last request (null
// before the first, as in Claude Code).
func (m *Model) contextWindow(window int) statusContext {
	out := statusContext{ContextWindowSize: window}
	for _, u := range m.cost.byModel {
		out.TotalInputTokens += u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
		out.TotalOutputTokens += u.OutputTokens
	}
	if m.lastUsage == nil {
		return out
	}
	u := *m.lastUsage
	u.CacheCreation, u.ServerToolUse = nil, nil
	out.CurrentUsage = &u
	used := 0
	if window > 0 {
		used = int(math.Round(float64(m.lastContext) * 100 / float64(window)))
	}
	used = min(max(used, 0), 100)
	remaining := 100 - used
	out.UsedPercentage, out.RemainingPercentage = &used, &remaining
	return out
}
