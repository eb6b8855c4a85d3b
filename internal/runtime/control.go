package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/anthropic"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/protocol"
)

// What a host may ask of a running session, or change in it, between
// prompts or while one runs.

// Info describes a running session to a host.
type Info struct {
	Init *protocol.Init
	// Commands describes each slash command of Init.SlashCommands (same
	// order).
	Commands []CommandInfo
	// Agents are the subagents the model may start, by name.
	Agents []AgentInfo
	// TranscriptPath is the session's transcript file ("" when the session
	// keeps none).
	TranscriptPath string
	// PromptID is the prompt_id of the latest prompt ("" before the
	// first), the one its hook payloads carry.
	PromptID string
	// Effort is the effort the main thread's requests work at: the one
	// asked for, or the API's default ("high") when none is; "" when the
	// model takes none. Thinking says whether they ask for thinking.
	Effort   string
	Thinking bool
	// Provider is where the main thread's requests go.
	Provider ProviderInfo
}

// CommandInfo describes a slash command.
type CommandInfo struct {
	Name, Description, ArgumentHint string
}

// AgentInfo is one subagent of a session; Model is its own ("" or
// "inherit": the session's).
type AgentInfo struct {
	Name, Description, Model string
}

// Info describes the session: what its init message says, with the
// details of its commands and agents.
func (s *Session) Info() Info {
	out := Info{Init: s.initMessage().Init, Agents: []AgentInfo{}, TranscriptPath: s.transcriptPath(), PromptID: s.currentPromptID()}
	out.Effort, out.Thinking = s.main.reasoning()
	out.Provider = s.providerOf(out.Init.Model)
	for _, name := range out.Init.SlashCommands {
		ci := CommandInfo{Name: name}
		if s.skills != nil {
			if sk, ok := s.skills.Skill(name); ok {
				ci.Description, ci.ArgumentHint = sk.ListingDescription(0), sk.ArgumentHint
			}
		}
		out.Commands = append(out.Commands, ci)
	}
	for _, a := range s.subagents.infos() {
		out.Agents = append(out.Agents, AgentInfo{Name: a.Name, Description: a.Description, Model: s.agents[a.Name].Model})
	}
	return out
}

// reasoning is the effort the thread's requests work at ("" when its
// model takes none) and whether they ask for thinking.
func (t *thread) reasoning() (effort string, thinking bool) {
	if th := t.engine.Thinking(); th != nil && th.Type != "disabled" {
		thinking = true
	}
	if t.engine.Model().Effort {
		effort = firstNonEmpty(t.effort, "high")
	}
	return effort, thinking
}

// SetModel switches the model of the following requests ("" for the
// default one) and returns the model id now in use. A name that is no
// model, or a model availableModels does not list, is refused and the
// model stays as it was.
func (s *Session) SetModel(name string) (string, error) {
	m := s.catalog.Resolve(name, s.getenv)
	if name != "" {
		var err error
		if m, err = s.checkModel(name, "/model"); err != nil {
			return "", err
		}
	}
	s.main.engine.SetModel(m)
	return m.ID, nil
}

// SetMaxThinkingTokens turns extended thinking on with this budget for the
// following requests, or off with 0.
func (s *Session) SetMaxThinkingTokens(n int) {
	if n <= 0 {
		s.main.engine.SetThinking(nil)
		return
	}
	s.main.engine.SetThinking(&llm.Thinking{Type: "enabled", BudgetTokens: n})
}

// SetPermissionMode changes the mode of the calls checked from now on (""
// for default).
func (s *Session) SetPermissionMode(mode string) error {
	if mode == "" {
		mode = string(permission.ModeDefault)
	}
	m, err := checkMode(permission.Mode(mode), s.settings)
	if err != nil {
		return err
	}
	return s.main.checker.SetMode(m)
}

// Inject adds a user message to the running prompt; false when none runs.
func (s *Session) Inject(content []llm.Block) bool { return s.main.engine.Inject(content) }

// TakeUndelivered returns what was injected too late to join its run.
func (s *Session) TakeUndelivered() []llm.Block { return s.main.engine.TakeUndelivered() }

// RewindFiles puts the files the file tools changed back as they were
// before the prompt whose user message is messageID; dryRun only reports.
func (s *Session) RewindFiles(messageID string, dryRun bool) RewindResult {
	if s.checkpoints == nil {
		return RewindResult{Error: "file checkpointing is not enabled (Options.FileCheckpointing, or enableFileCheckpointing in the Agent SDK)"}
	}
	return s.checkpoints.rewind(messageID, dryRun)
}

// SetName names the session, so that a resume finds it by that name.
func (s *Session) SetName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("set name: the name is empty")
	}
	s.metaMu.Lock()
	s.cfg.Name = name
	s.metaMu.Unlock()
	if s.recorder != nil {
		if err := s.recorder.SetTitle(name); err != nil {
			return fmt.Errorf("set name: %w", err)
		}
	}
	return s.saveRecord(nil)
}

// AddDir adds a working directory for the rest of the session; it is
// recorded, so a resume keeps it.
func (s *Session) AddDir(dir string) error {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.cwd, dir)
	}
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("add directory: %w", err)
	} else if !fi.IsDir() {
		return fmt.Errorf("add directory: %s is not a directory", dir)
	}
	if err := s.main.checker.AddDir(dir); err != nil {
		return fmt.Errorf("add directory: %w", err)
	}
	s.metaMu.Lock()
	s.cfg.AddDirs = append(slices.Clone(s.cfg.AddDirs), dir)
	s.metaMu.Unlock()
	return s.saveRecord(nil)
}

// ContextCategory is one part of what fills the context window; Tokens is
// an estimate (four bytes a token) of the part as the next request would
// send it.
type ContextCategory struct {
	Name   string
	Tokens int
}

// ContextUsage estimates what the next request would send, by part: the
// system prompt, the built-in and MCP tools, the memory files, and the
// conversation. It returns the model and its window too.
func (s *Session) ContextUsage() (model llm.Model, parts []ContextCategory) {
	main := s.main
	est := func(n int) int { return (n + 3) / 4 }
	var system int
	for _, b := range main.system {
		system += len(b.Text)
	}
	var builtin, mcpTools int
	for _, spec := range main.registry.Specs() {
		b, _ := json.Marshal(spec)
		if strings.HasPrefix(spec.Name, "mcp__") {
			mcpTools += len(b)
		} else {
			builtin += len(b)
		}
	}
	var memory int
	if s.memory != nil {
		for _, b := range s.memory.Blocks() {
			memory += len(b.Text)
		}
	}
	msgs, _ := json.Marshal(main.engine.Messages())
	conversation := max(0, len(msgs)-memory)
	return main.engine.Model(), []ContextCategory{
		{"System prompt", est(system)}, {"Built-in tools", est(builtin)}, {"MCP tools", est(mcpTools)},
		{"Memory files", est(memory)}, {"Conversation", est(conversation)},
	}
}

// Close ends the session: background subagents stop, the MCP servers stop,
// the SessionEnd hooks run, told reason (EndClear, EndResume… "" for
// EndOther), under ctx, which Close does not let end them early; the main
// thread's hooks, shell and transcript close, and its scratch files go.
func (s *Session) Close(ctx context.Context, reason string) {
	s.cancel()
	s.watching.close()
	if s.mcp != nil {
		_ = s.mcp.manager.Close()
	}
	s.fireEnd(context.WithoutCancel(ctx), reason)
	s.stopToolRecords()
	s.main.close()
	s.lsp.Close()
	if s.sandbox != nil {
		_ = s.sandbox.Close()
	}
	_ = os.RemoveAll(s.main.env.ScratchDir)
}

// abandon releases what a session that failed to build had started.
func (s *Session) abandon() {
	s.cancel()
	s.lsp.Close()
	if s.mcp != nil {
		_ = s.mcp.manager.Close()
	}
	if s.sandbox != nil {
		_ = s.sandbox.Close()
	}
}

// providerOf describes where requests for model go: a provider of the
// settings when the model names one, else the cloud platform or the
// Anthropic API the session connected to.
func (s *Session) providerOf(model string) ProviderInfo {
	var p ProviderInfo
	if name, _, ok := strings.Cut(model, "/"); ok && s.extraInfo[name].ID != "" {
		p = s.extraInfo[name]
	} else if s.providerInfo.ID != "" {
		p = s.providerInfo
	} else {
		p = ProviderInfo{ID: "firstParty", Name: "Anthropic API",
			BaseURL:    firstNonEmpty(anthropic.ConfigFromEnv(s.getenv).BaseURL, "https://api.anthropic.com"),
			Credential: orNone(s.apiKeySource)}
	}
	p.ModelID = nil
	return p
}

func orNone(s string) string { return firstNonEmpty(s, "none") }
