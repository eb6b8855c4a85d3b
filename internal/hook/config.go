package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Handler types.
const (
	TypeCommand  = "command"
	TypeHTTP     = "http"
	TypePrompt   = "prompt"
	TypeAgent    = "agent"
	TypeMCPTool  = "mcp_tool"
	TypeCallback = "callback" // registered in Go, not in settings
)

// Config is the "hooks" object of the merged settings: for each event, its
// matcher groups in configuration order (scopes add up, they do not
// override; the caller concatenates them in the order they should resolve).
type Config map[Event][]Matcher

// Matcher is one matcher group: the handlers that run when Matcher fits the
// event (see Pattern for the syntax).
type Matcher struct {
	Matcher string
	Hooks   []Handler
}

// Handler is one hook. Which fields matter depends on Type.
type Handler struct {
	Type string // command, http, prompt, agent, mcp_tool or callback

	// Command is the shell command line of a command hook.
	Command string
	// Timeout is in seconds; zero means the default (60 s, 30 s for prompt
	// hooks).
	Timeout float64
	// StatusMessage is what a UI shows while the hook runs.
	StatusMessage string
	// Once runs the handler at most once per session, resumes included
	// (see OnceLog).
	Once bool
	// Async starts a command handler without waiting for it: it never
	// blocks or decides, and its result is reported later (Observer,
	// Runner.TakeAsync). Other types ignore it, as in Claude Code.
	Async bool
	// If is a permission rule ("Bash(rm *)", "Edit(*.ts)"). On tool events
	// the handler runs only when the call fits it; on other events a handler
	// with an If never runs.
	If string
	// OnFailure "block" makes a failure of the handler (an error, a timeout,
	// unusable output) block the action the event guards, instead of being
	// reported and ignored. Ignored on Stop and SubagentStop, where a block
	// would keep the model going.
	OnFailure string

	// URL, Headers and AllowedEnvVars describe an http hook. Header values
	// may use $VAR or ${VAR} for the variables AllowedEnvVars lists (and the
	// settings' httpHookAllowedEnvVars allows); others expand to "".
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string

	// Prompt is the prompt of a prompt or agent hook; "$ARGUMENTS" in it is
	// replaced by the payload JSON (appended when absent). Model overrides
	// the default small model.
	Prompt string
	Model  string

	// Server, Tool and Input name the MCP tool of an mcp_tool hook.
	Server string
	Tool   string
	Input  json.RawMessage

	// Env is extra environment for a command hook (e.g. CLAUDE_PLUGIN_ROOT
	// for a plugin's hooks), applied last.
	Env map[string]string

	// Source says where the handler was configured: the scope or file
	// ("project", "plugin:lint"), not a line. It appears in error messages,
	// and identical hooks run once only within one Source (as in Claude
	// Code, where the same command in user and project settings runs twice).
	Source string
	// Origin is the file and line that define the handler
	// ("/r/.claude/settings.json:12"), for listings and messages; "" for
	// callbacks.
	Origin string

	// Callback is the function of a callback handler; CallbackID names it
	// (the Agent SDK's "hook_0" ids) and makes identical registrations run
	// once.
	Callback   Callback
	CallbackID string
}

// Callback is a hook implemented in Go: the Go SDK's hook functions, or the
// bridge that forwards an Agent SDK hook_callback control request. It gets
// the same payload as a command hook (in, and its JSON) and answers with the
// same Output; nil means success without output. An error is a non-blocking
// failure (or a block with OnFailure "block"). ctx ends at the timeout.
type Callback func(ctx context.Context, in Input, payload json.RawMessage) (*Output, error)

// Settings are the settings keys, other than "hooks", that govern hooks.
type Settings struct {
	// DisableAllHooks turns every hook off, callbacks included.
	DisableAllHooks bool
	// Env is the settings "env", added to the environment of command hooks
	// (after the base environment) and used for http header expansion.
	Env map[string]string
	// AllowedHTTPHookURLs are the URL patterns ("*" matches any run of
	// characters) http hooks may call. nil: no restriction; empty: none.
	AllowedHTTPHookURLs []string
	// HTTPHookAllowedEnvVars restricts the variables any http hook may
	// expand in its headers to this list (intersected with each hook's
	// allowedEnvVars). nil: no restriction beyond the hook's own list.
	HTTPHookAllowedEnvVars []string
}

// IfMatcher decides whether a tool call fits a permission rule such as
// "Bash(rm *)". It is the permission package's rule matcher, injected so that
// hooks and permissions agree on the grammar.
type IfMatcher func(rule, toolName string, toolInput json.RawMessage) (bool, error)

// entry is one handler of the configuration, compiled.
type entry struct {
	event   Event
	pattern Pattern
	handler Handler
	key     string // what makes two handlers "the same hook"
	pos     string // "PreToolUse[0].hooks[1]", for once and messages
}

// compile checks a configuration and flattens it into entries per event, in
// configuration order. Every problem is reported, not only the first.
func compile(cfg Config) (map[Event][]entry, error) {
	out := make(map[Event][]entry, len(cfg))
	var errs []error
	for _, ev := range slices.Sorted(maps.Keys(cfg)) {
		for i, g := range cfg[ev] {
			p, err := patternFor(ev, g.Matcher)
			if err != nil {
				errs = append(errs, fmt.Errorf("hooks.%s[%d]: %w", ev, i, err))
				continue
			}
			for j, h := range g.Hooks {
				pos := fmt.Sprintf("%s[%d].hooks[%d]", ev, i, j)
				if err := validateHandler(h); err != nil {
					errs = append(errs, fmt.Errorf("hooks.%s%s: %w", pos, sourceNote(h), err))
					continue
				}
				out[ev] = append(out[ev], entry{event: ev, pattern: p, handler: h, key: dedupeKey(h), pos: pos})
			}
		}
	}
	return out, errors.Join(errs...)
}

// admit is cfg without the handlers o.Admit refuses, whose sources it
// reports to o.Skipped (each once, in configuration order).
func (o Options) admit(cfg Config) Config {
	if o.Admit == nil {
		return cfg
	}
	out := Config{}
	var skipped []string
	for _, ev := range slices.Sorted(maps.Keys(cfg)) {
		for _, g := range cfg[ev] {
			kept := Matcher{Matcher: g.Matcher}
			for _, h := range g.Hooks {
				if o.Admit(h) {
					kept.Hooks = append(kept.Hooks, h)
				} else if !slices.Contains(skipped, h.Source) {
					skipped = append(skipped, h.Source)
				}
			}
			if len(kept.Hooks) > 0 || len(g.Hooks) == 0 {
				out[ev] = append(out[ev], kept)
			}
		}
	}
	if len(skipped) == 0 {
		return cfg // positions (for once and messages) as configured
	}
	if o.Skipped != nil {
		o.Skipped(skipped)
	}
	return out
}

func sourceNote(h Handler) string {
	if h.Source == "" {
		return ""
	}
	return " (" + h.Source + ")"
}

func validateHandler(h Handler) error {
	if h.Timeout < 0 {
		return fmt.Errorf("negative timeout %v", h.Timeout)
	}
	if h.OnFailure != "" && h.OnFailure != "continue" && h.OnFailure != "block" {
		return fmt.Errorf("onFailure %q is neither continue nor block", h.OnFailure)
	}
	switch h.Type {
	case TypeCommand:
		if h.Command == "" {
			return errors.New("command hook without a command")
		}
	case TypeHTTP:
		if h.URL == "" {
			return errors.New("http hook without a url")
		}
	case TypePrompt:
		if h.Prompt == "" {
			return errors.New("prompt hook without a prompt")
		}
	case TypeAgent:
		if h.Prompt == "" {
			return errors.New("agent hook without a prompt")
		}
	case TypeMCPTool:
		if h.Server == "" || h.Tool == "" {
			return errors.New("mcp_tool hook needs a server and a tool")
		}
	case TypeCallback:
		if h.Callback == nil {
			return errors.New("callback hook without a function")
		}
	case "":
		return errors.New("hook without a type")
	default:
		return fmt.Errorf("unknown hook type %q", h.Type)
	}
	return nil
}

// dedupeKey identifies a hook for "identical hooks run once", as Claude Code
// does: same type, same source, same command (url, prompt, tool) and same
// "if" — and, for commands, the same extra environment, so two plugins'
// identical "${CLAUDE_PLUGIN_ROOT}/hook.sh" stay two hooks. Callbacks are
// the same only when they carry the same id.
func dedupeKey(h Handler) string {
	var what string
	switch h.Type {
	case TypeCommand:
		what = h.Command
		for _, k := range slices.Sorted(maps.Keys(h.Env)) {
			what += "\x00" + k + "=" + h.Env[k]
		}
	case TypeHTTP:
		what = h.URL
	case TypePrompt, TypeAgent:
		what = h.Prompt + "\x00" + h.Model
	case TypeMCPTool:
		what = h.Server + "\x00" + h.Tool + "\x00" + string(h.Input)
	case TypeCallback:
		if h.CallbackID == "" {
			return "" // unique: never merged
		}
		what = h.CallbackID
	}
	return h.Type + "\x00" + h.Source + "\x00" + what + "\x00" + h.If
}
