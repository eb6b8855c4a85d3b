package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/spell"
)

// Settings are the keys of a Claude Code settings file that tack knows, every
// one optional. Merged holds them merged from all files (see Load for the
// rules).
//
// A string that is "" may be unset or set to ""; Merged.Origin tells which.
// Booleans and numbers are pointers, nil when no file sets them, because some
// default to true or to a non-zero number.
type Settings struct {
	Permissions Permissions
	// Hooks maps an event name (see HookEvents) to its matcher groups.
	Hooks map[string][]HookMatcher
	// Env is set in the environment of every process tack starts.
	Env map[string]string

	Model       string
	Agent       string
	OutputStyle string
	// EffortLevel is the reasoning effort asked of models that take one:
	// low, medium, high, xhigh or max.
	EffortLevel string
	StatusLine  *StatusLine

	EnableAllProjectMcpServers *bool
	EnabledMcpjsonServers      []Item
	DisabledMcpjsonServers     []Item
	ClaudeMdExcludes           []Item
	// AvailableModels, when set, are the only models (aliases or ids) a
	// session may run; the default model is always allowed. Merged across
	// scopes, as Claude Code merges it.
	AvailableModels []Item

	DisableAllHooks       *bool
	AllowManagedHooksOnly *bool // honoured only in managed settings
	// RequireWorkspaceTrust makes print mode (and the SDK) refuse a folder
	// the user has not trusted instead of implying trust. Honoured in
	// managed, user and --settings settings, where true holds whatever
	// another of them says; a project cannot decide its own trust.
	RequireWorkspaceTrust  bool
	AllowedHTTPHookURLs    []Item
	HTTPHookAllowedEnvVars []Item

	CleanupPeriodDays *int
	// EnabledPlugins maps "name@marketplace" to whether the plugin is on.
	EnabledPlugins      map[string]bool
	APIKeyHelper        string
	IncludeCoAuthoredBy *bool
	// IncludeGitInstructions false leaves the git status snapshot out of
	// the system prompt (CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS overrides it).
	IncludeGitInstructions *bool
	AlwaysThinkingEnabled  *bool
	// Sandbox is the "sandbox" value as written, for the sandbox package.
	Sandbox json.RawMessage
	// LSPServers is the "lspServers" value as written (Claude Code's
	// language-server entries), for the lsp package; LSPServersAt is where.
	LSPServers   json.RawMessage
	LSPServersAt Source
	// Providers are the model endpoints besides the Anthropic API, by name
	// (see providers.go); SmallModel is the model of side requests (titles,
	// classifiers), which may be one of theirs.
	Providers  map[string]Provider
	SmallModel string

	// Unknown holds the top-level keys tack does not know, verbatim. They are
	// kept (a tool may read them) and otherwise ignored.
	Unknown map[string]json.RawMessage
}

// Permissions is the "permissions" object.
type Permissions struct {
	// Allow, Ask and Deny are permission rules such as "Bash(npm test *)".
	Allow, Ask, Deny []Item
	// DefaultMode is default, acceptEdits, plan, auto, bypassPermissions, dontAsk,
	// or "" when unset.
	DefaultMode string
	// AdditionalDirectories are further working directories, as written
	// (a relative one is relative to its Source).
	AdditionalDirectories []Item
	// DisableBypassPermissionsMode is true when "disableBypassPermissionsMode"
	// is "disable": bypassPermissions mode must then be refused.
	DisableBypassPermissionsMode bool
}

// Item is one string of a list setting (a permission rule, a directory, a
// server name…) and where it was written.
type Item struct {
	Text   string
	Source Source
}

// Texts returns the texts of items, in order.
func Texts(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Text
	}
	return out
}

// StatusLine is the "statusLine" object.
type StatusLine struct {
	Type    string // "command"
	Command string
	Padding int
}

// HookMatcher is one {"matcher": …, "hooks": […]} group of an event.
type HookMatcher struct {
	// Matcher selects what the group applies to: "" or "*" for everything, a
	// tool name, a "|" list of names, or a regular expression (validated).
	Matcher string
	Hooks   []Hook
	// Source is the file and position of the group.
	Source Source
}

// Hook is one handler of a matcher group.
type Hook struct {
	Type string // command, http, prompt, agent or mcp_tool

	Command string        // command
	Timeout time.Duration // 0 when unset: the runner's default applies
	// StatusMessage is shown while the hook runs.
	StatusMessage string
	Once          bool
	Async         bool
	// If is a permission-rule filter ("Bash(rm *)") on the tool call.
	If string

	URL            string            // http
	Headers        map[string]string // http
	AllowedEnvVars []string          // http: variables that may be interpolated in headers

	Prompt string // prompt, agent
	Model  string // prompt, agent

	Server string          // mcp_tool
	Tool   string          // mcp_tool
	Input  json.RawMessage // mcp_tool: an object, as written

	// Source is the file and position of the handler object.
	Source Source
}

// hookEvents are the event names a settings file may configure, in the order
// of a session's life.
var hookEvents = [...]string{
	"Setup", "SessionStart", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
	"PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
	"PostToolBatch", "Notification", "Elicitation", "ElicitationResult", "SubagentStart",
	"SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle", "Stop", "StopFailure",
	"PreCompact", "PostCompact", "ConfigChange", "FileChanged", "CwdChanged", "WorktreeCreate",
	"WorktreeRemove", "SessionEnd",
}

// unfiredHookEvents are the events Claude Code's SDK names and tack does
// not fire. A settings file may configure them, so that a file written for
// Claude Code loads; the session then says that those hooks never run.
var unfiredHookEvents = [...]string{"PreModelSwitch", "PostModelSwitch", "DirectoryAdded", "MessageDisplay"}

// HookEvents returns the hook events tack fires, in the order of a
// session's life.
func HookEvents() []string { return append([]string(nil), hookEvents[:]...) }

// UnfiredHookEvents returns the events a settings file may configure that
// tack does not fire.
func UnfiredHookEvents() []string { return append([]string(nil), unfiredHookEvents[:]...) }

// allHookEvents are the event names a settings file may configure.
func allHookEvents() []string { return append(HookEvents(), unfiredHookEvents[:]...) }

// IsHookEvent reports whether name is an event name a settings file may
// configure (case-sensitive), fired or not.
func IsHookEvent(name string) bool {
	for _, e := range allHookEvents() {
		if e == name {
			return true
		}
	}
	return false
}

var (
	modes = []string{"default", "acceptEdits", "plan", "auto", "bypassPermissions", "dontAsk"}
	// EffortLevels are the efforts the API takes, lowest first.
	EffortLevels = []string{"low", "medium", "high", "xhigh", "max"}
	hookTypes    = []string{"command", "http", "prompt", "agent", "mcp_tool"}
	topLevelKeys = []string{
		"permissions", "hooks", "env", "model", "agent", "outputStyle", "statusLine",
		"enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
		"claudeMdExcludes", "disableAllHooks", "allowManagedHooksOnly", "allowedHttpHookUrls",
		"httpHookAllowedEnvVars", "cleanupPeriodDays", "enabledPlugins", "apiKeyHelper",
		"includeCoAuthoredBy", "includeGitInstructions", "alwaysThinkingEnabled", "sandbox", "requireWorkspaceTrust", "availableModels",
		"effortLevel", "providers", "smallModel", "lspServers",
	}
	permissionKeys = []string{"allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"}
	matcherKeys    = []string{"matcher", "hooks"}
	hookKeys       = []string{
		"type", "command", "timeout", "statusMessage", "once", "async", "if", "url",
		"headers", "allowedEnvVars", "prompt", "model", "server", "tool", "input",
	}
	statusLineKeys = []string{"type", "command", "padding"}
)

// orList renders "a, b or c" for messages.
func orList(words []string) string {
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// document is one settings file being interpreted: its bytes, where it came
// from, and what has been read from it so far.
type document struct {
	src      []byte // without a byte order mark
	lines    *jsontree.Lines
	source   Source // scope and path; Line and Col are zero
	opts     *LoadOptions
	settings Settings
	origins  map[string]Source // JSON path of each scalar or map entry set → where
	warnings []*Error
	ignored  []Item // keys left out of an untrusted folder's file
	// hostView is what applies of a host's managed settings, as JSON
	// values (see restrict); nil for a file.
	hostView map[string]any
}

// parseDocument interprets one settings file. The first problem found is
// returned; there is no partial result, since a half-read policy file is
// worse than a refusal.
func parseDocument(src []byte, source Source, opts *LoadOptions) (*document, *Error) {
	// A UTF-8 byte order mark is not JSON, but editors on Windows write one;
	// reading past it is what the user meant. Offsets stay relative to the
	// text after it, which is what editors number.
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	d := &document{src: src, lines: jsontree.NewLines(src), source: source, opts: opts, origins: map[string]Source{}}
	root, serr := jsontree.Parse(src, nil)
	if serr != nil {
		return nil, d.fail(serr.Off, "", "invalid JSON: "+serr.Msg, nil)
	}
	if root == nil {
		return d, nil // an empty file sets nothing
	}
	if err := d.top(root); err != nil {
		return nil, err
	}
	if opts.Untrusted && (source.Scope == ScopeProject || source.Scope == ScopeLocal) {
		d.distrust(root)
	}
	return d, nil
}

// at returns the document's source positioned at byte offset off.
func (d *document) at(off int) Source {
	s := d.source
	s.Line, s.Col = d.lines.Pos(off)
	return s
}

func (d *document) fail(off int, key, msg string, cause error) *Error {
	return &Error{Source: d.at(off), Key: key, Msg: msg, Err: cause}
}

func (d *document) warn(off int, key, msg string) {
	d.warnings = append(d.warnings, &Error{Source: d.at(off), Key: key, Msg: msg})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// object checks that n is an object and that none of its known keys (all
// keys when known is nil) is written twice. A duplicate is an error because
// JSON parsers silently keep only the last one: a second "permissions" would
// drop every rule of the first. Unknown keys are not tack's business.
func (d *document) object(n *jsontree.Node, path string, known []string) *Error {
	if n.Kind != jsontree.Object {
		return d.typeError(n, path, "an object")
	}
	if len(n.Members) < 2 {
		return nil
	}
	seen := make(map[string]int, len(n.Members))
	for _, m := range n.Members {
		if known != nil && !contains(known, m.Key) {
			continue
		}
		if first, dup := seen[m.Key]; dup {
			l, c := d.lines.Pos(first)
			return d.fail(m.KeyOff, join(path, m.Key), fmt.Sprintf("duplicate key (also at line %d, column %d); only one of them would be used", l, c), nil)
		}
		seen[m.Key] = m.KeyOff
	}
	return nil
}

func (d *document) typeError(n *jsontree.Node, path, want string) *Error {
	return d.fail(n.Off, path, fmt.Sprintf("expected %s, got %s", want, n.Kind), nil)
}

// unknownKey keeps quiet about keys tack does not know, except those that
// look like a misspelt known key: those are almost always a policy that
// silently does nothing.
func (d *document) unknownKey(m jsontree.Member, path string, known []string) {
	if s := spell.Suggest(m.Key, known); s != "" {
		d.warn(m.KeyOff, join(path, m.Key), fmt.Sprintf("unknown key is ignored (did you mean %q?)", s))
	}
}

func (d *document) top(root *jsontree.Node) *Error {
	if root.Kind != jsontree.Object {
		return d.fail(root.Off, "", fmt.Sprintf("settings must be a JSON object, got %s", root.Kind), nil)
	}
	if err := d.object(root, "", topLevelKeys); err != nil {
		return err
	}
	s := &d.settings
	for _, m := range root.Members {
		k, v := m.Key, m.Value
		if v.Kind == jsontree.Null && contains(topLevelKeys, k) {
			continue // null means unset
		}
		var err *Error
		switch k {
		case "permissions":
			err = d.permissions(v)
		case "hooks":
			err = d.hooks(v)
		case "env":
			err = d.env(v)
		case "model":
			err = d.scalarString(v, k, &s.Model)
		case "agent":
			err = d.scalarString(v, k, &s.Agent)
		case "outputStyle":
			err = d.scalarString(v, k, &s.OutputStyle)
		case "effortLevel":
			err = d.effortLevel(v, k, &s.EffortLevel)
		case "apiKeyHelper":
			err = d.scalarString(v, k, &s.APIKeyHelper)
		case "statusLine":
			err = d.statusLine(v)
		case "enableAllProjectMcpServers":
			err = d.scalarBool(v, k, &s.EnableAllProjectMcpServers)
		case "disableAllHooks":
			err = d.scalarBool(v, k, &s.DisableAllHooks)
		case "allowManagedHooksOnly":
			if err = d.scalarBool(v, k, &s.AllowManagedHooksOnly); err == nil && d.source.Scope != ScopeManaged {
				// Only an administrator may restrict hooks to theirs; in
				// any other file the key would be a false sense of security.
				d.warn(v.Off, k, "has an effect only in managed settings; ignored here")
				s.AllowManagedHooksOnly = nil
				delete(d.origins, k)
			}
		case "requireWorkspaceTrust":
			err = d.requireTrust(v, k)
		case "includeCoAuthoredBy":
			err = d.scalarBool(v, k, &s.IncludeCoAuthoredBy)
		case "includeGitInstructions":
			err = d.scalarBool(v, k, &s.IncludeGitInstructions)
		case "alwaysThinkingEnabled":
			err = d.scalarBool(v, k, &s.AlwaysThinkingEnabled)
		case "cleanupPeriodDays":
			var n int
			if n, err = d.nonNegativeInt(v, k); err == nil {
				s.CleanupPeriodDays = &n
				d.origins[k] = d.at(v.Off)
			}
		case "enabledMcpjsonServers":
			err = d.items(v, k, &s.EnabledMcpjsonServers, nil, "")
		case "disabledMcpjsonServers":
			err = d.items(v, k, &s.DisabledMcpjsonServers, nil, "")
		case "claudeMdExcludes":
			err = d.items(v, k, &s.ClaudeMdExcludes, nil, "")
		case "availableModels":
			err = d.items(v, k, &s.AvailableModels, nil, "")
		case "allowedHttpHookUrls":
			err = d.items(v, k, &s.AllowedHTTPHookURLs, nil, "")
		case "httpHookAllowedEnvVars":
			err = d.items(v, k, &s.HTTPHookAllowedEnvVars, nil, "")
		case "enabledPlugins":
			err = d.enabledPlugins(v)
		case "providers":
			err = d.providers(v)
		case "smallModel":
			err = d.scalarString(v, k, &s.SmallModel)
		case "lspServers":
			s.LSPServers = raw(d.src, v)
			s.LSPServersAt = d.at(v.Off)
			d.origins[k] = s.LSPServersAt
		case "sandbox":
			s.Sandbox = raw(d.src, v)
			d.origins[k] = d.at(v.Off)
		default:
			if s.Unknown == nil {
				s.Unknown = map[string]json.RawMessage{}
			}
			s.Unknown[k] = raw(d.src, v)
			d.origins[k] = d.at(v.Off)
			d.unknownKey(m, "", topLevelKeys)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// raw copies the text of n, so that the settings do not pin the whole file.
func raw(src []byte, n *jsontree.Node) json.RawMessage {
	return json.RawMessage(bytes.Clone(src[n.Off:n.End]))
}

// effortLevel reads a string that must be one of EffortLevels.
func (d *document) effortLevel(n *jsontree.Node, path string, dst *string) *Error {
	if n.Kind != jsontree.String {
		return d.typeError(n, path, "a string")
	}
	if !contains(EffortLevels, n.Str) {
		return d.fail(n.Off, path, fmt.Sprintf("unknown effort %q (want %s)", n.Str, orList(EffortLevels)), nil)
	}
	*dst = n.Str
	d.origins[path] = d.at(n.Off)
	return nil
}

func (d *document) scalarString(n *jsontree.Node, path string, dst *string) *Error {
	if n.Kind != jsontree.String {
		return d.typeError(n, path, "a string")
	}
	*dst = n.Str
	d.origins[path] = d.at(n.Off)
	return nil
}

func (d *document) scalarBool(n *jsontree.Node, path string, dst **bool) *Error {
	if n.Kind != jsontree.Bool {
		return d.typeError(n, path, "true or false")
	}
	b := n.Bool
	*dst = &b
	d.origins[path] = d.at(n.Off)
	return nil
}

func (d *document) str(n *jsontree.Node, path string) (string, *Error) {
	if n.Kind != jsontree.String {
		return "", d.typeError(n, path, "a string")
	}
	return n.Str, nil
}

func (d *document) boolean(n *jsontree.Node, path string) (bool, *Error) {
	if n.Kind != jsontree.Bool {
		return false, d.typeError(n, path, "true or false")
	}
	return n.Bool, nil
}

// nonNegativeInt reads a whole number ≥ 0; 30.0 counts, as it does in
// JavaScript.
func (d *document) nonNegativeInt(n *jsontree.Node, path string) (int, *Error) {
	if n.Kind != jsontree.Number {
		return 0, d.typeError(n, path, "a whole number")
	}
	f, err := strconv.ParseFloat(n.Str, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, d.fail(n.Off, path, fmt.Sprintf("expected a whole number, got %s", n.Str), nil)
	}
	if f < 0 {
		return 0, d.fail(n.Off, path, fmt.Sprintf("must not be negative, got %s", n.Str), nil)
	}
	return int(f), nil
}

// items reads a list of strings. validate, when set, checks each one; what
// names the thing it checks in the error ("rule").
func (d *document) items(n *jsontree.Node, path string, dst *[]Item, validate func(string) error, what string) *Error {
	if n.Kind != jsontree.Array {
		return d.typeError(n, path, "a list of strings")
	}
	for i, e := range n.Elems {
		if e.Kind != jsontree.String {
			return d.typeError(e, index(path, i), "a string")
		}
		if what != "" && strings.TrimSpace(e.Str) == "" {
			return d.fail(e.Off, index(path, i), "empty "+what, nil)
		}
		if validate != nil {
			if err := validate(e.Str); err != nil {
				return d.fail(e.Off, index(path, i), fmt.Sprintf("invalid %s %q", what, e.Str), err)
			}
		}
		*dst = append(*dst, Item{Text: e.Str, Source: d.at(e.Off)})
	}
	return nil
}

func (d *document) stringList(n *jsontree.Node, path string) ([]string, *Error) {
	if n.Kind != jsontree.Array {
		return nil, d.typeError(n, path, "a list of strings")
	}
	out := make([]string, 0, len(n.Elems))
	for i, e := range n.Elems {
		if e.Kind != jsontree.String {
			return nil, d.typeError(e, index(path, i), "a string")
		}
		out = append(out, e.Str)
	}
	return out, nil
}

func (d *document) permissions(n *jsontree.Node) *Error {
	const path = "permissions"
	if err := d.object(n, path, permissionKeys); err != nil {
		return err
	}
	p := &d.settings.Permissions
	for _, m := range n.Members {
		if m.Value.Kind == jsontree.Null {
			continue
		}
		k, v := join(path, m.Key), m.Value
		var err *Error
		switch m.Key {
		case "allow":
			err = d.items(v, k, &p.Allow, d.opts.ValidateRule, "rule")
		case "ask":
			err = d.items(v, k, &p.Ask, d.opts.ValidateRule, "rule")
		case "deny":
			err = d.items(v, k, &p.Deny, d.opts.ValidateRule, "rule")
		case "additionalDirectories":
			err = d.items(v, k, &p.AdditionalDirectories, nil, "directory")
		case "defaultMode":
			if v.Kind != jsontree.String {
				return d.typeError(v, k, "a string")
			}
			if !contains(modes, v.Str) {
				msg := fmt.Sprintf("unknown mode %q (want %s)", v.Str, orList(modes))
				if s := spell.Suggest(v.Str, modes); s != "" {
					msg = fmt.Sprintf("unknown mode %q (did you mean %q? want %s)", v.Str, s, orList(modes))
				}
				return d.fail(v.Off, k, msg, nil)
			}
			p.DefaultMode = v.Str
			d.origins[k] = d.at(v.Off)
		case "disableBypassPermissionsMode":
			if v.Kind != jsontree.String || v.Str != "disable" {
				return d.fail(v.Off, k, fmt.Sprintf(`expected "disable", got %s`, describeValue(d.src, v)), nil)
			}
			p.DisableBypassPermissionsMode = true
			d.origins[k] = d.at(v.Off)
		default:
			d.unknownKey(m, path, permissionKeys)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// describeValue renders a short value for a message: the JSON text of a
// scalar, the kind of a container.
func describeValue(src []byte, n *jsontree.Node) string {
	if n.Kind == jsontree.Array || n.Kind == jsontree.Object {
		return n.Kind.String()
	}
	s := string(src[n.Off:n.End])
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func (d *document) env(n *jsontree.Node) *Error {
	const path = "env"
	if err := d.object(n, path, nil); err != nil {
		return err
	}
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		// The name and value go to execve as NAME=value, C strings: an "="
		// in the name or a NUL anywhere would corrupt the environment.
		switch {
		case m.Key == "":
			return d.fail(m.KeyOff, path, "empty environment variable name", nil)
		case strings.ContainsAny(m.Key, "=\x00"):
			return d.fail(m.KeyOff, k, "environment variable name contains '=' or NUL", nil)
		}
		var val string
		switch v.Kind {
		case jsontree.Null:
			continue
		case jsontree.String:
			val = v.Str
		case jsontree.Number:
			val = v.Str // "PORT": 8080 means "8080"
		case jsontree.Bool:
			val = strconv.FormatBool(v.Bool)
		default:
			return d.typeError(v, k, "a string")
		}
		if strings.IndexByte(val, 0) >= 0 {
			return d.fail(v.Off, k, "value contains a NUL character", nil)
		}
		if d.settings.Env == nil {
			d.settings.Env = map[string]string{}
		}
		d.settings.Env[m.Key] = val
		d.origins[k] = d.at(v.Off)
	}
	return nil
}

func (d *document) enabledPlugins(n *jsontree.Node) *Error {
	const path = "enabledPlugins"
	if err := d.object(n, path, nil); err != nil {
		return err
	}
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		if v.Kind == jsontree.Null {
			continue
		}
		on, err := d.boolean(v, k)
		if err != nil {
			return err
		}
		if d.settings.EnabledPlugins == nil {
			d.settings.EnabledPlugins = map[string]bool{}
		}
		d.settings.EnabledPlugins[m.Key] = on
		d.origins[k] = d.at(v.Off)
	}
	return nil
}

func (d *document) statusLine(n *jsontree.Node) *Error {
	const path = "statusLine"
	if err := d.object(n, path, statusLineKeys); err != nil {
		return err
	}
	sl := &StatusLine{}
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		if v.Kind == jsontree.Null {
			continue
		}
		var err *Error
		switch m.Key {
		case "type":
			sl.Type, err = d.str(v, k)
		case "command":
			sl.Command, err = d.str(v, k)
		case "padding":
			sl.Padding, err = d.nonNegativeInt(v, k)
		default:
			d.unknownKey(m, path, statusLineKeys)
		}
		if err != nil {
			return err
		}
	}
	if (sl.Type == "" || sl.Type == "command") && strings.TrimSpace(sl.Command) == "" {
		return d.fail(n.Off, path, `missing "command"`, nil)
	}
	d.settings.StatusLine = sl
	d.origins[path] = d.at(n.Off)
	return nil
}

func (d *document) hooks(n *jsontree.Node) *Error {
	const path = "hooks"
	if err := d.object(n, path, nil); err != nil {
		return err
	}
	for _, m := range n.Members {
		event := m.Key
		if !IsHookEvent(event) {
			msg := fmt.Sprintf("unknown hook event %q", event)
			if s := spell.Suggest(event, allHookEvents()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return d.fail(m.KeyOff, join(path, event), msg, nil)
		}
		if m.Value.Kind == jsontree.Null {
			continue
		}
		ep := join(path, event)
		if m.Value.Kind != jsontree.Array {
			return d.typeError(m.Value, ep, "a list of matcher groups")
		}
		for i, g := range m.Value.Elems {
			hm, err := d.matcherGroup(g, index(ep, i))
			if err != nil {
				return err
			}
			if d.settings.Hooks == nil {
				d.settings.Hooks = map[string][]HookMatcher{}
			}
			d.settings.Hooks[event] = append(d.settings.Hooks[event], hm)
		}
	}
	return nil
}

func (d *document) matcherGroup(n *jsontree.Node, path string) (HookMatcher, *Error) {
	hm := HookMatcher{Source: d.at(n.Off)}
	if n.Kind != jsontree.Object {
		return hm, d.fail(n.Off, path, fmt.Sprintf(`expected a matcher group {"matcher": …, "hooks": […]}, got %s`, n.Kind), nil)
	}
	if err := d.object(n, path, matcherKeys); err != nil {
		return hm, err
	}
	var handlers *jsontree.Node
	flat := false
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		switch m.Key {
		case "matcher":
			if v.Kind == jsontree.Null {
				continue
			}
			s, err := d.str(v, k)
			if err != nil {
				return hm, err
			}
			if err := d.checkMatcher(s); err != nil {
				return hm, d.fail(v.Off, k, fmt.Sprintf("matcher %q is not a tool name, a '|' list of names or a valid regular expression", s), err)
			}
			hm.Matcher = s
		case "hooks":
			handlers = v
		case "type", "command", "url", "prompt":
			flat = true
		default:
			d.unknownKey(m, path, matcherKeys)
		}
	}
	if handlers == nil || handlers.Kind == jsontree.Null {
		msg := `missing "hooks" (the list of handlers of this matcher)`
		if flat {
			// The most common mistake, and Claude Code ignores it silently.
			msg = `missing "hooks": handlers go in a nested list, {"matcher": "…", "hooks": [{"type": "command", "command": "…"}]}`
		}
		return hm, d.fail(n.Off, path, msg, nil)
	}
	hp := join(path, "hooks")
	if handlers.Kind != jsontree.Array {
		return hm, d.typeError(handlers, hp, "a list of hook handlers")
	}
	for i, h := range handlers.Elems {
		hk, err := d.hook(h, index(hp, i))
		if err != nil {
			return hm, err
		}
		hm.Hooks = append(hm.Hooks, hk)
	}
	return hm, nil
}

// checkMatcher accepts what a matcher may be: "" or "*" (everything), a tool
// name or a "|" list of them, otherwise a regular expression that must
// compile.
func (d *document) checkMatcher(s string) error {
	if s == "" || s == "*" || isNameList(s) {
		return nil
	}
	_, err := regexp.Compile(s)
	return err
}

// isNameList reports whether s is made only of tool-name characters and '|'.
func isNameList(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '|') {
			return false
		}
	}
	return true
}

// maxTimeoutSeconds keeps a timeout within what time.Duration holds.
const maxTimeoutSeconds = float64(math.MaxInt64 / int64(time.Second))

func (d *document) hook(n *jsontree.Node, path string) (Hook, *Error) {
	h := Hook{Source: d.at(n.Off)}
	if n.Kind != jsontree.Object {
		return h, d.fail(n.Off, path, fmt.Sprintf(`expected a hook handler {"type": …}, got %s`, n.Kind), nil)
	}
	if err := d.object(n, path, hookKeys); err != nil {
		return h, err
	}
	typeSeen := false
	for _, m := range n.Members {
		k, v := join(path, m.Key), m.Value
		if v.Kind == jsontree.Null {
			continue
		}
		var err *Error
		switch m.Key {
		case "type":
			if h.Type, err = d.str(v, k); err == nil && !contains(hookTypes, h.Type) {
				err = d.fail(v.Off, k, fmt.Sprintf("unknown hook type %q (want %s)", h.Type, orList(hookTypes)), nil)
			}
			typeSeen = true
		case "command":
			h.Command, err = d.str(v, k)
		case "timeout":
			if v.Kind != jsontree.Number {
				return h, d.typeError(v, k, "a number of seconds")
			}
			sec, perr := strconv.ParseFloat(v.Str, 64)
			switch {
			case perr != nil || sec > maxTimeoutSeconds:
				err = d.fail(v.Off, k, fmt.Sprintf("timeout %s is too large", v.Str), nil)
			case sec < 0:
				err = d.fail(v.Off, k, fmt.Sprintf("negative timeout %s (seconds)", v.Str), nil)
			default:
				h.Timeout = time.Duration(sec * float64(time.Second))
			}
		case "statusMessage":
			h.StatusMessage, err = d.str(v, k)
		case "once":
			h.Once, err = d.boolean(v, k)
		case "async":
			h.Async, err = d.boolean(v, k)
		case "if":
			if h.If, err = d.str(v, k); err == nil && d.opts.ValidateIf != nil {
				if verr := d.opts.ValidateIf(h.If); verr != nil {
					err = d.fail(v.Off, k, fmt.Sprintf("invalid condition %q", h.If), verr)
				}
			}
		case "url":
			h.URL, err = d.str(v, k)
		case "headers":
			h.Headers, err = d.stringMap(v, k)
		case "allowedEnvVars":
			h.AllowedEnvVars, err = d.stringList(v, k)
		case "prompt":
			h.Prompt, err = d.str(v, k)
		case "model":
			h.Model, err = d.str(v, k)
		case "server":
			h.Server, err = d.str(v, k)
		case "tool":
			h.Tool, err = d.str(v, k)
		case "input":
			if v.Kind != jsontree.Object {
				return h, d.typeError(v, k, "an object")
			}
			h.Input = raw(d.src, v)
		default:
			d.unknownKey(m, path, hookKeys)
		}
		if err != nil {
			return h, err
		}
	}
	if !typeSeen {
		return h, d.fail(n.Off, path, fmt.Sprintf(`missing "type" (want %s)`, orList(hookTypes)), nil)
	}
	var need []string
	switch h.Type {
	case "command":
		if strings.TrimSpace(h.Command) == "" {
			need = []string{"command"}
		}
	case "http":
		if strings.TrimSpace(h.URL) == "" {
			need = []string{"url"}
		}
	case "prompt", "agent":
		if strings.TrimSpace(h.Prompt) == "" {
			need = []string{"prompt"}
		}
	case "mcp_tool":
		if h.Server == "" {
			need = append(need, "server")
		}
		if h.Tool == "" {
			need = append(need, "tool")
		}
	}
	if len(need) > 0 {
		return h, d.fail(n.Off, path, fmt.Sprintf(`missing "%s" (required for type %q)`, strings.Join(need, `" and "`), h.Type), nil)
	}
	return h, nil
}

func (d *document) stringMap(n *jsontree.Node, path string) (map[string]string, *Error) {
	if err := d.object(n, path, nil); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(n.Members))
	for _, m := range n.Members {
		s, err := d.str(m.Value, join(path, m.Key))
		if err != nil {
			return nil, err
		}
		out[m.Key] = s
	}
	return out, nil
}
