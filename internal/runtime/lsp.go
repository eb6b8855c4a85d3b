package runtime

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/lsp"
	"github.com/tackcode/tack/internal/tool"
)

// diagnosticsWait bounds how long an edit waits for its server's
// diagnostics: long enough for a type check of one package, short enough
// that a slow server does not stall the turn.
const diagnosticsWait = 10 * time.Second

// lspConfigs are the session's language servers: the settings' lspServers,
// then the enabled plugins' (a name already taken keeps the first).
func (s *Session) lspConfigs() []lsp.ServerConfig {
	var cfgs []lsp.ServerConfig
	if s.settings != nil && len(s.settings.LSPServers) > 0 {
		at := s.settings.LSPServersAt
		c, err := lsp.ParseServersAt(s.settings.LSPServers, at.Path, max(at.Line, 1))
		if err != nil {
			s.notify(err.Error())
		}
		cfgs = append(cfgs, c...)
	}
	if s.ext != nil {
		seen := map[string]bool{}
		for _, c := range cfgs {
			seen[c.Name] = true
		}
		for _, c := range s.ext.LSPServers() {
			if !seen[c.Name] {
				seen[c.Name] = true
				cfgs = append(cfgs, c)
			}
		}
	}
	return cfgs
}

// LSP returns the session's language servers (nil when none is
// configured), for /lsp.
func (s *Session) LSP() *lsp.Manager { return s.lsp }

// withDiagnostics wraps the file-changing tools so that their results carry
// the new errors and warnings of the file's language server, Bash so that
// the servers see files it changed, and Read so that reading a file starts
// its server.
func withDiagnostics(tools []tool.Tool, m *lsp.Manager, notify func(string)) []tool.Tool {
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		switch t.Name() {
		case "Edit", "Write", "NotebookEdit":
			out[i] = diagnosed{Tool: t, m: m, notify: notify}
		case "Bash":
			out[i] = resynced{Tool: t, m: m}
		case "Read":
			out[i] = warmed{Tool: t, m: m}
		default:
			out[i] = t
		}
	}
	return out
}

type diagnosed struct {
	tool.Tool
	m      *lsp.Manager
	notify func(string)
}

func (t diagnosed) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	res, err := t.Tool.Run(ctx, env, input)
	if err != nil || res.IsError {
		return res, err
	}
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(input, &in) != nil {
		return res, nil
	}
	p := firstNonEmpty(in.FilePath, in.NotebookPath)
	if p == "" {
		return res, nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(env.Cwd(), p)
	}
	if !t.m.Owns(p) {
		return res, nil
	}
	diags, derr := t.m.FileChanged(ctx, filepath.Clean(p), diagnosticsWait)
	if derr != nil {
		// The edit is done; a server that fails is the user's to hear of.
		t.notify("language server: " + derr.Error())
		return res, nil
	}
	if diags != "" {
		res.Content = append(res.Content, llm.Text("<new-diagnostics>\n"+strings.TrimSpace(diags)+"\n</new-diagnostics>"))
	}
	return res, nil
}

// warmed is Read starting, in the background, the language server of the
// file it read (see lsp.Manager.FileRead).
type warmed struct {
	tool.Tool
	m *lsp.Manager
}

func (t warmed) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	res, err := t.Tool.Run(ctx, env, input)
	if err != nil || res.IsError {
		return res, err
	}
	var in struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(input, &in) == nil && in.FilePath != "" {
		p := in.FilePath
		if !filepath.IsAbs(p) {
			p = filepath.Join(env.Cwd(), p)
		}
		t.m.FileRead(ctx, filepath.Clean(p))
	}
	return res, nil
}

type resynced struct {
	tool.Tool
	m *lsp.Manager
}

func (t resynced) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	res, err := t.Tool.Run(ctx, env, input)
	t.m.ResyncOpen(ctx)
	return res, err
}

// LanguageServerCheck is what starting one configured language server
// gave: Err nil when it started and answered initialize.
type LanguageServerCheck struct {
	Name, Command, Source string
	Err                   error
}

// CheckLanguageServers starts each language server the settings and the
// enabled plugins of cfg's folder configure, and stops it again.
func CheckLanguageServers(ctx context.Context, cfg Config) ([]LanguageServerCheck, error) {
	s, err := settingsOnly(cfg)
	if err != nil {
		return nil, err
	}
	settings := s.settings
	var out []LanguageServerCheck
	if len(settings.LSPServers) > 0 {
		// The session reports a bad entry and goes on; the check fails on it.
		at := settings.LSPServersAt
		if _, err := lsp.ParseServersAt(settings.LSPServers, at.Path, max(at.Line, 1)); err != nil {
			out = append(out, LanguageServerCheck{Name: "lspServers", Source: at.Path, Err: err})
		}
	}
	opts, err := s.extOptions()
	if err != nil {
		return nil, err
	}
	s.ext = extension.Load(opts)
	cfgs := s.lspConfigs()
	results := lsp.Check(ctx, s.cwd, cfgs)
	for _, c := range cfgs {
		out = append(out, LanguageServerCheck{Name: c.Name, Command: c.Command, Source: c.Source, Err: results[c.Name]})
	}
	return out, nil
}
