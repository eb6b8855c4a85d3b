package cli

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// printFlags are the flags of print mode.
type printFlags struct {
	print                bool
	outputFormat         string
	inputFormat          string
	verbose              bool
	includePartial       bool
	replayUser           bool
	maxTurns             int
	maxBudgetUSD         float64
	maxThinkingTokens    int
	thinking             string
	thinkingDisplay      string
	effort               string
	taskBudget           int
	permissionPrompts    string
	pluginDirsNoMCP      []string
	debugToStderr        bool
	model                string
	fallbackModel        string
	systemPrompt         string
	appendSystemPrompt   string
	tools                string
	allowedTools         []string
	disallowedTools      []string
	permissionMode       string
	skipPermissions      bool
	allowSkipPermissions bool
	sessionID            string
	noSessionPersistence bool
	settings             string
	settingSources       string
	managedSettings      string
	managedInInitialize  bool
	addDirs              []string
	projectConfigRoot    string
	permissionPromptTool string
	includeHookEvents    bool
	continueSession      bool
	resume               string
	forkSession          bool
	resumeSessionAt      string
	resumeDropsTurn      string
	sessionMirror        bool
	name                 string
	mcpConfig            []string
	strictMCPConfig      bool
	agentName            string
	agentsJSON           string
	pluginDirs           []string
	jsonSchema           string
	bare                 bool
	debug, debugFile     string
	// logger is the debug log the run opened (debuglog.go); nil for none.
	logger *slog.Logger
	// init, initOnly and maintenance run the Setup hooks (setup.go).
	init, initOnly, maintenance bool
	// ignored are flags of Claude Code's that tack accepts and does not
	// act on, each for a reason (sdkflags.go).
	ignored ignoredFlags
	betas   []string
}

func (f *printFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVarP(&f.print, "print", "p", false, "print the response and exit (non-interactive)")
	fl.StringVar(&f.outputFormat, "output-format", "text", "print-mode output: text, json or stream-json")
	fl.StringVar(&f.inputFormat, "input-format", "text", "print-mode input: text, or stream-json (JSON lines of the Agent SDK protocol; needs --output-format stream-json)")
	fl.BoolVar(&f.verbose, "verbose", false, "json: print every message as an array; text: print the cost to stderr")
	fl.BoolVar(&f.includePartial, "include-partial-messages", false, "stream-json: include raw streaming events")
	fl.BoolVar(&f.replayUser, "replay-user-messages", false, "stream-json input and output: echo each user message back when its turn starts (same uuid, isReplay)")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "stop after this many model round trips (0: no limit)")
	fl.Float64Var(&f.maxBudgetUSD, "max-budget-usd", 0, "stop once this much has been spent, in USD (0: no limit)")
	fl.IntVar(&f.maxThinkingTokens, "max-thinking-tokens", 0, "enable extended thinking with this token budget")
	fl.StringSliceVar(&f.betas, "betas", nil, "API beta features to ask for (comma separated)")
	fl.StringVar(&f.thinking, "thinking", "", "thinking mode: adaptive (or enabled, the same) or disabled (default: the alwaysThinkingEnabled setting, else off)")
	fl.StringVar(&f.thinkingDisplay, "thinking-display", "", "how thinking comes back: summarized or omitted")
	fl.StringVar(&f.effort, "effort", "", "reasoning effort: low, medium, high, xhigh or max (default: the effortLevel setting, else the API's)")
	fl.IntVar(&f.taskBudget, "task-budget", 0, "tokens the whole task may take, told to the model (output_config.task_budget)")
	fl.StringVar(&f.permissionPrompts, "permission-prompts", "host", `who answers what needs approval: "host" (the SDK host or --permission-prompt-tool) or "none" (denied)`)
	fl.StringVar(&f.model, "model", "", "model alias (opus, sonnet, haiku) or full model id")
	fl.StringVar(&f.fallbackModel, "fallback-model", "", "model to use when the main one is overloaded")
	fl.StringVar(&f.systemPrompt, "system-prompt", "", "replace tack's system prompt")
	fl.StringVar(&f.appendSystemPrompt, "append-system-prompt", "", "append text to the system prompt")
	fl.StringVar(&f.tools, "tools", "default", `built-in tools to offer: "default", "" for none, or names ("Bash,Read")`)
	fl.StringArrayVar(&f.allowedTools, "allowedTools", nil, "tools allowed without asking (comma or space separated)")
	fl.StringArrayVar(&f.allowedTools, "allowed-tools", nil, "same as --allowedTools")
	fl.StringArrayVar(&f.disallowedTools, "disallowedTools", nil, "tools removed and denied (comma or space separated)")
	fl.StringArrayVar(&f.disallowedTools, "disallowed-tools", nil, "same as --disallowedTools")
	fl.StringVar(&f.permissionMode, "permission-mode", "", "default, acceptEdits, plan, auto, bypassPermissions or dontAsk")
	fl.BoolVar(&f.skipPermissions, "dangerously-skip-permissions", false, "run every tool call without asking (bypassPermissions)")
	fl.BoolVar(&f.allowSkipPermissions, "allow-dangerously-skip-permissions", false, "allow bypassPermissions to be chosen")
	fl.StringVar(&f.sessionID, "session-id", "", "use this session id (a UUID)")
	fl.BoolVar(&f.noSessionPersistence, "no-session-persistence", false, "write no transcript for this session")
	fl.StringVar(&f.settings, "settings", "", "a settings file, or inline JSON, read above the user, project and local settings")
	fl.StringVar(&f.managedSettings, "managed-settings", "", "policy settings from the host, a JSON object: its restrictive keys apply as managed settings, the others are dropped with a notice")
	fl.BoolVar(&f.managedInInitialize, "managed-settings-in-initialize", false, "stream-json: the host's managed settings come in the initialize request, which must carry them")
	fl.StringVar(&f.settingSources, "setting-sources", "", "which settings files to read: user,project,local (default all; \"\" for none)")
	fl.StringArrayVar(&f.addDirs, "add-dir", nil, "another working directory (repeatable)")
	fl.StringVar(&f.projectConfigRoot, "project-config-root", "", "the trusted checkout (an absolute `dir`) this working directory is a worktree of: project settings, hooks, .mcp.json and .claude/ come from it")
	fl.StringVar(&f.permissionPromptTool, "permission-prompt-tool", "", "a tool that approves calls needing approval")
	fl.BoolVar(&f.includeHookEvents, "include-hook-events", false, "stream-json: include hook_started / hook_response messages")
	fl.BoolVarP(&f.continueSession, "continue", "c", false, "continue the most recent session in this directory")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume a session by `id-or-name`; without one, pick it from a list (in -p mode: list them)")
	fl.Lookup("resume").NoOptDefVal = pickSession
	fl.BoolVar(&f.forkSession, "fork-session", false, "with --resume/--continue: continue under a new session id")
	fl.StringVar(&f.resumeSessionAt, "resume-session-at", "", "with --resume: resume from this message uuid")
	fl.StringVar(&f.resumeDropsTurn, "resume-drops-turn", "", "with --resume-session-at: the `prompt-uuid` of the one turn it may discard; anything else refuses the resume")
	fl.BoolVar(&f.sessionMirror, "session-mirror", false, "stream-json output: send each transcript write as a transcript_mirror frame (the Agent SDK's sessionStore)")
	fl.StringVarP(&f.name, "name", "n", "", "name the session (so --resume NAME finds it)")
	fl.StringArrayVar(&f.mcpConfig, "mcp-config", nil, "MCP server configuration (file or JSON; recorded with the session)")
	fl.BoolVar(&f.strictMCPConfig, "strict-mcp-config", false, "use only the MCP servers of --mcp-config")
	fl.StringVar(&f.agentName, "agent", "", "the agent the session runs as (recorded with the session)")
	fl.StringVar(&f.agentsJSON, "agents", "", `more subagents, as JSON: {"name": {"description": "...", "prompt": "...", "tools": [...]}}`)
	fl.StringArrayVar(&f.pluginDirs, "plugin-dir", nil, "load a plugin from this folder (recorded with the session)")
	fl.StringArrayVar(&f.pluginDirsNoMCP, "plugin-dir-no-mcp", nil, "like --plugin-dir, without the plugin's MCP servers (the caller runs them)")
	fl.StringVar(&f.jsonSchema, "json-schema", "", "a JSON Schema (an object) the final answer must match; it comes back as structured_output in the result")
	fl.StringVarP(&f.debug, "debug", "d", "", "debug log of API requests, hooks, MCP servers and permission decisions; optional `categories` (\"api,hooks\", \"!mcp\")")
	fl.Lookup("debug").NoOptDefVal = debugAll
	fl.StringVar(&f.debugFile, "debug-file", "", "write the debug log to this file (implies --debug)")
	fl.BoolVar(&f.debugToStderr, "debug-to-stderr", false, "write the debug log to stderr, also in the UI (implies --debug)")
	fl.BoolVar(&f.bare, "bare", false, "minimal session: no CLAUDE.md, hooks, plugins, skills or MCP servers from files (flags still apply)")
	fl.BoolVar(&f.init, "init", false, "run the Setup hooks (trigger init) as the session starts")
	fl.BoolVar(&f.initOnly, "init-only", false, "run the Setup hooks (trigger init) and the SessionStart hooks, then exit")
	fl.BoolVar(&f.maintenance, "maintenance", false, "run the Setup hooks (trigger maintenance) as the session starts")
	f.ignored.register(fl)
	_ = fl.MarkHidden("allowed-tools")
	_ = fl.MarkHidden("disallowed-tools")
}

// options turns the flags into agent options.
func (f *printFlags) options(cmd *cobra.Command) (agent.Options, error) {
	opts := agent.Options{
		Model:                  f.model,
		FallbackModel:          f.fallbackModel,
		AppendSystemPrompt:     f.appendSystemPrompt,
		MaxTurns:               f.maxTurns,
		MaxBudgetUSD:           f.maxBudgetUSD,
		MaxThinkingTokens:      f.maxThinkingTokens,
		Thinking:               f.thinking,
		ThinkingDisplay:        f.thinkingDisplay,
		Effort:                 f.effort,
		TaskBudget:             f.taskBudget,
		PluginDirsWithoutMCP:   f.pluginDirsNoMCP,
		AllowedTools:           splitRules(f.allowedTools),
		DisallowedTools:        splitRules(f.disallowedTools),
		PermissionMode:         agent.PermissionMode(f.permissionMode),
		IncludePartialMessages: f.includePartial,
		ReplayUserMessages:     f.replayUser,
		SessionID:              f.sessionID,
		NoSessionPersistence:   f.noSessionPersistence,
		Entrypoint:             "cli",
		Settings:               f.settings,
		ManagedSettings:        f.managedSettings,
		ProjectConfigRoot:      f.projectConfigRoot,
		PermissionPromptTool:   f.permissionPromptTool,
		IncludeHookEvents:      f.includeHookEvents,
		Continue:               f.continueSession,
		Resume:                 strings.TrimSpace(f.resume),
		ForkSession:            f.forkSession,
		ResumeSessionAt:        f.resumeSessionAt,
		ResumeDropsTurn:        f.resumeDropsTurn,
		Name:                   f.name,
		StrictMCPConfig:        f.strictMCPConfig,
		Agent:                  f.agentName,
		AgentsJSON:             f.agentsJSON,
		Betas:                  f.betas,
		Bare:                   f.bare,
		Logger:                 f.logger,
	}
	// Lists stay nil when the flag is absent, so that a resume restores
	// the recorded ones.
	if cmd.Flags().Changed("mcp-config") {
		opts.MCPConfig = f.mcpConfig
	}
	if cmd.Flags().Changed("plugin-dir") {
		opts.PluginDirs = f.pluginDirs
	}
	if cmd.Flags().Changed("add-dir") {
		opts.AddDirs = f.addDirs
	} else {
		opts.AddDirs = nil
	}
	opts.SettingSources = settingSources(cmd, f.settingSources)
	if cmd.Flags().Changed("system-prompt") {
		sp := f.systemPrompt
		opts.SystemPrompt = &sp
	}
	if cmd.Flags().Changed("tools") {
		opts.Tools = splitRules([]string{f.tools})
		if opts.Tools == nil {
			opts.Tools = []string{}
		}
	}
	if cmd.Flags().Changed("json-schema") {
		schema := json.RawMessage(strings.TrimSpace(f.jsonSchema))
		if !json.Valid(schema) || !strings.HasPrefix(string(schema), "{") {
			return opts, cmdio.Usagef("--json-schema must be a JSON object (a JSON Schema)")
		}
		opts.JSONSchema = schema
	}
	switch {
	case f.maintenance && (f.init || f.initOnly):
		return opts, cmdio.Usagef("--maintenance cannot be combined with --init or --init-only: the Setup hooks run for one trigger")
	case f.maintenance:
		opts.Setup = agent.SetupMaintenance
	case f.init || f.initOnly:
		opts.Setup = agent.SetupInit
	}
	if f.skipPermissions {
		opts.PermissionMode = agent.PermissionBypass
	}
	if opts.PermissionMode != "" && !opts.PermissionMode.Valid() {
		return opts, cmdio.Usagef("invalid --permission-mode %q: want default, acceptEdits, plan, auto, bypassPermissions or dontAsk", f.permissionMode)
	}
	if f.maxTurns < 0 || f.maxBudgetUSD < 0 || f.maxThinkingTokens < 0 || f.taskBudget < 0 {
		return opts, cmdio.Usagef("--max-turns, --max-budget-usd, --max-thinking-tokens and --task-budget must not be negative")
	}
	return opts, f.reasoningFlags(&opts)
}

// reasoningFlags checks the choices of --thinking, --thinking-display,
// --effort and --permission-prompts; "none" takes the approver away, so
// that what needs approval is denied.
func (f *printFlags) reasoningFlags(opts *agent.Options) error {
	for _, c := range []struct {
		flag, value string
		want        []string
	}{
		{"thinking", f.thinking, []string{"enabled", "adaptive", "disabled"}},
		{"thinking-display", f.thinkingDisplay, []string{"summarized", "omitted"}},
		{"effort", f.effort, agent.EffortLevels()},
		{"permission-prompts", f.permissionPrompts, []string{"host", "none"}},
	} {
		if c.value != "" && !slices.Contains(c.want, c.value) {
			return cmdio.Usagef("invalid --%s %q: want %s", c.flag, c.value, strings.Join(c.want, ", "))
		}
	}
	if f.permissionPrompts == "none" {
		opts.PermissionPromptTool = ""
	}
	return nil
}

// splitRules splits tool lists given as "A,B", "A B" or repeated flags,
// keeping a parenthesised specifier such as "Bash(git log *)" whole.
func splitRules(values []string) []string {
	var out []string
	for _, v := range values {
		depth, start := 0, 0
		flush := func(end int) {
			if s := strings.TrimSpace(v[start:end]); s != "" {
				out = append(out, s)
			}
		}
		for i, r := range v {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth > 0:
				depth--
			case (r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r') && depth == 0:
				flush(i)
				start = i + 1
			}
		}
		flush(len(v))
	}
	return out
}

// settingSources is Options.SettingSources for a --setting-sources flag of
// cmd set to v: nil when the flag is not given (every source), an empty
// list when it is given empty (none).
func settingSources(cmd *cobra.Command, v string) []string {
	if !cmd.Flags().Changed("setting-sources") {
		return nil
	}
	if strings.TrimSpace(v) == "" {
		return []string{}
	}
	return []string{v}
}
