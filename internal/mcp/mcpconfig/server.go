// Package mcpconfig says which MCP servers a tack session has and where each
// one is defined. It reads the files Claude Code reads, with Claude Code's
// precedence, so that a project's .mcp.json, the user's ~/.claude.json and
// `claude mcp add` habits work unchanged:
//
//   - local: ~/.claude.json → projects["<project dir>"].mcpServers (this
//     project only, private to the user);
//   - project: <project dir>/.mcp.json (shared in git; each server needs the
//     user's approval once, see Set.Approval);
//   - user: ~/.claude.json → mcpServers (every project);
//   - dynamic: --mcp-config FILE|JSON (this launch only); --strict-mcp-config
//     ignores every other source;
//   - plugin:NAME and agent:NAME: added by callers with Set.Add.
//
// A name defined in several scopes resolves to dynamic > local > project > user
// > added servers.
//
// Problems are never fatal to a session and never silent. A file that cannot
// be read, is not JSON, or whose mcpServers is not an object contributes no
// server; a malformed entry (wrong types, missing command or url, unknown
// type, bad URL, an unset ${VAR}) disables that server only. Each problem is
// a *config.Error naming the file, line and column, and a broken entry still
// takes its name's slot, so a broken override never silently falls back to
// the definition it meant to replace.
//
// Edits (Files.AddServer, Files.RemoveServer, …) change only the bytes of the
// member they add, replace or remove: every other key of ~/.claude.json (a
// large file Claude Code owns), its order, spacing and line endings stay as
// they were.
package mcpconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/lazyregexp"
)

// Scope is where a server is defined.
type Scope string

// The scopes of configuration files; plugin and agent scopes are made with
// PluginScope and AgentScope.
const (
	ScopeLocal   Scope = "local"   // ~/.claude.json, under this project
	ScopeProject Scope = "project" // .mcp.json in the project directory
	ScopeUser    Scope = "user"    // ~/.claude.json, top level
	ScopeDynamic Scope = "dynamic" // --mcp-config, as Claude Code names it
)

// PluginScope is the scope of servers a plugin provides.
func PluginScope(plugin string) Scope { return Scope("plugin:" + plugin) }

// AgentScope is the scope of servers an agent definition declares.
func AgentScope(agent string) Scope { return Scope("agent:" + agent) }

// IsPlugin reports whether s is a plugin scope.
func (s Scope) IsPlugin() bool { return strings.HasPrefix(string(s), "plugin:") }

// IsAgent reports whether s is an agent scope.
func (s Scope) IsAgent() bool { return strings.HasPrefix(string(s), "agent:") }

// Editable reports whether tack mcp add/remove can change servers of scope s.
func (s Scope) Editable() bool { return s == ScopeLocal || s == ScopeProject || s == ScopeUser }

// Describe says what the scope means, as `mcp get` and `mcp list` show it.
func (s Scope) Describe() string {
	switch {
	case s == ScopeLocal:
		return "Local config (private to you in this project)"
	case s == ScopeProject:
		return "Project config (shared via .mcp.json)"
	case s == ScopeUser:
		return "User config (available in all your projects)"
	case s == ScopeDynamic:
		return "Dynamic config (--mcp-config, this launch only)"
	case s.IsPlugin():
		return "Plugin " + strings.TrimPrefix(string(s), "plugin:")
	case s.IsAgent():
		return "Agent " + strings.TrimPrefix(string(s), "agent:")
	}
	return string(s)
}

// ParseScope parses the value of --scope: local, project or user.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(s); sc {
	case ScopeLocal, ScopeProject, ScopeUser:
		return sc, nil
	}
	return "", fmt.Errorf("invalid scope %q (want local, project or user)", s)
}

// rank orders scopes by precedence, highest first.
func (s Scope) rank() int {
	switch s {
	case ScopeDynamic:
		return 0
	case ScopeLocal:
		return 1
	case ScopeProject:
		return 2
	case ScopeUser:
		return 3
	}
	return 4 // plugin and agent servers, added by callers
}

// Type is a server's transport.
type Type string

// The transports. "streamable-http" in a file or on the command line is read
// as TypeHTTP, as Claude Code does (it is the MCP specification's name for
// the transport). TypeWS is accepted because Claude Code accepts it; whether
// it can be started is the client's business.
const (
	TypeStdio Type = "stdio"
	TypeHTTP  Type = "http"
	TypeSSE   Type = "sse"
	TypeWS    Type = "ws"
)

// ParseType parses a transport name: stdio, http (or streamable-http), sse
// or ws.
func ParseType(s string) (Type, error) {
	switch s {
	case "stdio", "http", "sse", "ws":
		return Type(s), nil
	case "streamable-http":
		return TypeHTTP, nil
	}
	return "", fmt.Errorf("unknown transport %q (want stdio, http or sse)", s)
}

// Remote reports whether servers of type t are reached by URL.
func (t Type) Remote() bool { return t == TypeHTTP || t == TypeSSE || t == TypeWS }

// Source is where something is written: a file (or "--mcp-config" for
// inline JSON) and, when known, the 1-based line and column in it.
type Source struct {
	Path      string
	Line, Col int
}

// String renders the source as path[:line:col].
func (s Source) String() string {
	if s.Line > 0 {
		return s.Path + ":" + strconv.Itoa(s.Line) + ":" + strconv.Itoa(s.Col)
	}
	return s.Path
}

// problem is the place of a problem at s, as a *config.Error names it.
func (s Source) problem() config.Source {
	return config.Source{Path: s.Path, Line: s.Line, Col: s.Col}
}

// Server is one MCP server definition, with ${VAR} references expanded.
type Server struct {
	Name  string
	Scope Scope
	// Source is where the server's name is written in its file.
	Source Source

	Type Type

	// Command, Args and Env start a stdio server. Env adds to the
	// environment tack passes on; it does not replace it.
	Command string
	Args    []string
	Env     map[string]string

	// URL and Headers reach an http, sse or ws server.
	URL     string
	Headers map[string]string
	// HeadersHelper is a shell command whose JSON output adds headers, as
	// written (not expanded).
	HeadersHelper string
	// OAuth holds a pre-registered OAuth client, when the entry has one.
	OAuth *OAuth

	// Extra holds the entry's keys tack does not interpret (timeout,
	// alwaysLoad, keys of later Claude Code versions…), verbatim. They are
	// kept and otherwise ignored.
	Extra map[string]json.RawMessage
	// Raw is the entry as written, before expansion.
	Raw json.RawMessage

	// Disabled is true when the user turned the server off for this project
	// (projects[…].disabledMcpServers in ~/.claude.json): it is listed but
	// not started.
	Disabled bool
	// Err is why the entry cannot be used, nil when it can. A broken server
	// is listed and still shadows same-named servers of lower scopes.
	Err *config.Error
}

// OAuth is an entry's "oauth" object: a client registered in advance with
// the server's authorisation server, instead of dynamic registration.
type OAuth struct {
	ClientID     string `json:"clientId,omitempty"`
	CallbackPort int    `json:"callbackPort,omitempty"`
}

// Target is a one-line description of what the server runs or reaches: the
// command line, or the URL (its query values masked) and transport.
func (s *Server) Target() string {
	if s.Type.Remote() {
		return MaskURL(s.URL) + " (" + strings.ToUpper(string(s.Type)) + ")"
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

// HealthCheck connects to one server and reports its state for
// `tack mcp list` and `tack mcp get`: a short status such as "✓ Connected"
// or "✗ Failed to connect", and an optional detail (the error, the tool
// count…). It must return once ctx is done. The MCP client provides it.
type HealthCheck func(ctx context.Context, s Server) (status, detail string)

// KV is one name and value of an entry's env or headers, in the order the
// user gave them.
type KV struct{ Key, Value string }

var validName = lazyregexp.New(`^[a-zA-Z0-9_-]+$`)

// ValidName checks a name for a new server as Claude Code does: letters,
// digits, hyphens and underscores. Servers read from files may have other
// names; NormalizeName gives the form tool names use.
func ValidName(name string) error {
	if !validName().MatchString(name) {
		return fmt.Errorf("invalid server name %q: names can only contain letters, numbers, hyphens and underscores", name)
	}
	return nil
}

// NormalizeName replaces each character of name that may not appear in a
// tool name (mcp__<server>__<tool>) by '_', as Claude Code does; approval
// lists are compared in this form.
func NormalizeName(name string) string {
	b := []byte(name)
	ok := true
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			ok = false
			break
		}
	}
	if ok {
		return name
	}
	var out strings.Builder
	for _, r := range name {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			out.WriteRune(r)
		} else {
			out.WriteByte('_')
		}
	}
	return out.String()
}
