package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/jsonx"
)

// Files are the configuration files of one project: Claude Code's global
// ~/.claude.json (user and local scopes, approvals) and the project's
// .mcp.json.
type Files struct {
	// ClaudeJSON is Claude Code's global configuration file; see
	// ClaudeJSONPath.
	ClaudeJSON string
	// ProjectDir is the project directory: it holds .mcp.json.
	ProjectDir string
	// ProjectKey is this project's key under "projects" in ClaudeJSON; ""
	// means ProjectDir. Claude Code keys projects by the absolute path of
	// the directory it was started in (recent versions: of the enclosing
	// git repository's root, when there is one).
	ProjectKey string
}

// DefaultFiles are the files of the project in dir ("" means the working
// directory), with ~/.claude.json found through getenv.
func DefaultFiles(getenv func(string) string, dir string) (Files, error) {
	var f Files
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return f, fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return f, fmt.Errorf("project directory: %w", err)
	}
	f.ProjectDir = abs
	f.ClaudeJSON, err = config.ClaudeJSONPath(getenv)
	return f, err
}

// MCPJSON is the project's .mcp.json.
func (f Files) MCPJSON() string { return filepath.Join(f.ProjectDir, ".mcp.json") }

// Key is this project's key under "projects" in ClaudeJSON.
func (f Files) Key() string {
	if f.ProjectKey != "" {
		return f.ProjectKey
	}
	return filepath.Clean(f.ProjectDir)
}

// Path is the file that holds the servers of scope s ("" for scopes that
// have no file of their own).
func (f Files) Path(s Scope) string {
	switch s {
	case ScopeProject:
		return f.MCPJSON()
	case ScopeLocal, ScopeUser:
		return f.ClaudeJSON
	}
	return ""
}

// serversPath is the JSON path of scope s's mcpServers object in Path(s).
func (f Files) serversPath(s Scope) []string {
	if s == ScopeLocal {
		return []string{"projects", f.Key(), "mcpServers"}
	}
	return []string{"mcpServers"}
}

// The keys of a project's entry in ~/.claude.json that concern MCP.
const (
	keyEnabled    = "enabledMcpjsonServers"
	keyDisabled   = "disabledMcpjsonServers"
	keyEnableAll  = "enableAllProjectMcpServers"
	keyOffServers = "disabledMcpServers"
)

var projectKeys = []string{"mcpServers", keyEnabled, keyDisabled, keyEnableAll, keyOffServers}

// claudeJSONFilter builds, of ~/.claude.json, only what concerns MCP for
// project key: the file is mostly Claude Code's history and state.
func claudeJSONFilter(key string) jsontree.Filter {
	return func(p []string) jsontree.Build {
		switch {
		case len(p) == 1 && p[0] == "mcpServers":
			return jsontree.Full
		case len(p) == 1 && p[0] == "projects":
			return jsontree.Filtered
		case len(p) == 2 && p[0] == "projects" && p[1] == key:
			return jsontree.Filtered
		case len(p) == 3 && p[0] == "projects" && p[1] == key && contains(projectKeys, p[2]):
			return jsontree.Full
		}
		return jsontree.Shallow
	}
}

// maxConfigSize bounds .mcp.json and --mcp-config files, which are small;
// ~/.claude.json is bounded by config.MaxClaudeJSONSize.
const maxConfigSize = 8 << 20

// Errors of the editing functions; test with errors.Is.
var (
	ErrExists   = errors.New("already exists")
	ErrNotFound = errors.New("no such MCP server")
)

// AmbiguousError is returned by RemoveServer when no scope is given and the
// name is defined in several.
type AmbiguousError struct {
	Name   string
	Scopes []Scope
}

func (e *AmbiguousError) Error() string {
	names := make([]string, len(e.Scopes))
	for i, s := range e.Scopes {
		names[i] = string(s)
	}
	return fmt.Sprintf("MCP server %q is defined in several scopes (%s): say which with --scope", e.Name, strings.Join(names, ", "))
}

// CheckEntry checks that raw is a server entry tack and Claude Code can
// read. ${VAR} references are not expanded, and may name variables that are
// not set: they are resolved when a session starts.
// label names raw in errors, whose positions are in raw.
func CheckEntry(name string, raw json.RawMessage, label string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	d, perr := parseDoc(raw, label, nil)
	if perr != nil {
		return perr
	}
	if d.root == nil {
		return &config.Error{Source: config.Source{Path: label}, Msg: "empty server entry"}
	}
	s := d.entry(jsontree.Member{Key: name, Value: d.root}, "", "", func(string) (string, bool) { return "", false })
	if s.Err != nil && s.Err.Missing == nil {
		return s.Err
	}
	return nil
}

// AddServer writes entry (a server's JSON object) as server name of scope
// local, project or user, and returns the file it wrote. An existing server
// of that name in that scope is replaced when replace is set, else the
// result is an error wrapping ErrExists. The entry is written as given
// (laid out in the file's style), its ${VAR} references unexpanded.
func (f Files) AddServer(scope Scope, name string, entry json.RawMessage, replace bool) (string, error) {
	if !scope.Editable() {
		return "", fmt.Errorf("cannot add a server to scope %q", scope)
	}
	if err := CheckEntry(name, entry, "the server entry"); err != nil {
		return "", err
	}
	path := append(f.serversPath(scope), name)
	file := f.Path(scope)
	err := f.edit(scope, func(e *jsontree.Editor) (bool, error) {
		if !replace {
			at, ok, err := locate(e, path)
			if err != nil {
				return false, err
			}
			if ok {
				return false, fmt.Errorf("MCP server %q %w in %s config (%s)", name, ErrExists, scope, at.in(file))
			}
		}
		return true, e.Set(path, entry)
	})
	return file, err
}

// RemoveServer deletes server name from scope local, project or user, or,
// when scope is "", from the one of them that defines it (an
// *AmbiguousError when several do). It returns the scope and file changed.
func (f Files) RemoveServer(scope Scope, name string) (Scope, string, error) {
	if scope == "" {
		scopes, err := f.Defined(name)
		if err != nil {
			return "", "", err
		}
		switch len(scopes) {
		case 0:
			return "", "", fmt.Errorf("%w named %q", ErrNotFound, name)
		case 1:
			scope = scopes[0]
		default:
			return "", "", &AmbiguousError{Name: name, Scopes: scopes}
		}
	} else if !scope.Editable() {
		return "", "", fmt.Errorf("cannot remove a server from scope %q", scope)
	}
	file := f.Path(scope)
	err := f.edit(scope, func(e *jsontree.Editor) (bool, error) {
		found, err := e.Remove(append(f.serversPath(scope), name))
		if err == nil && !found {
			err = fmt.Errorf("%w named %q in %s config (%s)", ErrNotFound, name, scope, file)
		}
		return found, err
	})
	return scope, file, err
}

// Defined returns the scopes among local, project and user whose files
// define server name, highest precedence first.
func (f Files) Defined(name string) ([]Scope, error) {
	var out []Scope
	for _, s := range []Scope{ScopeLocal, ScopeProject, ScopeUser} {
		file := f.Path(s)
		limit := int64(maxConfigSize)
		if s != ScopeProject {
			limit = config.MaxClaudeJSONSize
		}
		src, exists, err := config.ReadJSONFile(file, limit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if !exists {
			continue
		}
		_, ok, err := locate(jsontree.NewEditor(src), append(f.serversPath(s), name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// location is an offset in a document's text.
type location struct {
	text []byte
	off  int
}

// in names the location in file as path:line:col.
func (l location) in(file string) string {
	line, col := jsontree.NewLines(l.text).Pos(l.off)
	return fmt.Sprintf("%s:%d:%d", file, line, col)
}

// locate finds the key of the member at path; the error is for a document
// the editor cannot read.
func locate(e *jsontree.Editor, path []string) (location, bool, error) {
	obj, err := e.Lookup(path[:len(path)-1])
	if err != nil {
		return location{}, false, err
	}
	idx := obj.Index(path[len(path)-1])
	if idx < 0 {
		return location{}, false, nil
	}
	return location{e.Text(), obj.Members[idx].KeyOff}, true, nil
}

// SetApproval records the user's answer for project server name in
// ~/.claude.json, under this project: approved adds it to
// enabledMcpjsonServers (and takes it out of disabledMcpjsonServers), a
// refusal does the opposite.
func (f Files) SetApproval(name string, approved bool) error {
	add, drop := keyEnabled, keyDisabled
	if !approved {
		add, drop = drop, add
	}
	return f.edit(ScopeLocal, func(e *jsontree.Editor) (bool, error) {
		changed := false
		for _, k := range []string{add, drop} {
			path := []string{"projects", f.Key(), k}
			list, exists, err := stringList(e, path)
			if err != nil {
				return false, err
			}
			var next []string
			for _, s := range list {
				if NormalizeName(s) != NormalizeName(name) {
					next = append(next, s)
				}
			}
			if k == add {
				next = append(next, name)
			}
			if exists && equalStrings(next, list) || !exists && len(next) == 0 {
				continue
			}
			if err := e.Set(path, stringsJSON(next)); err != nil {
				return false, err
			}
			changed = true
		}
		return changed, nil
	})
}

// ApproveAllProjectServers records in this project's entry of
// ~/.claude.json that every server of its .mcp.json, now and to come, may
// start (enableAllProjectMcpServers), as the UI's "use this and all future
// MCP servers" answer does.
func (f Files) ApproveAllProjectServers() error {
	return f.edit(ScopeLocal, func(e *jsontree.Editor) (bool, error) {
		path := []string{"projects", f.Key(), keyEnableAll}
		if v, err := e.Lookup(path); err == nil && v != nil && v.Kind == jsontree.Bool && v.Bool {
			return false, nil
		}
		if err := e.Set(path, []byte("true")); err != nil {
			return false, err
		}
		return true, nil
	})
}

// ResetProjectChoices forgets the approvals and refusals of this project's
// .mcp.json servers, as `claude mcp reset-project-choices` does: it empties
// enabledMcpjsonServers and disabledMcpjsonServers and turns
// enableAllProjectMcpServers off in this project's entry of ~/.claude.json.
// Settings files are not touched. It reports whether anything changed.
func (f Files) ResetProjectChoices() (bool, error) {
	changed := false
	err := f.edit(ScopeLocal, func(e *jsontree.Editor) (bool, error) {
		for _, k := range []string{keyEnabled, keyDisabled} {
			path := []string{"projects", f.Key(), k}
			list, exists, err := stringList(e, path)
			if err != nil || !exists || len(list) == 0 {
				continue // nothing to forget; a malformed list is the user's to fix
			}
			if err := e.Set(path, []byte("[]")); err != nil {
				return false, err
			}
			changed = true
		}
		path := []string{"projects", f.Key(), keyEnableAll}
		v, err := e.Lookup(path)
		if err != nil {
			return false, err
		}
		if v != nil && v.Kind == jsontree.Bool && v.Bool {
			if err := e.Set(path, []byte("false")); err != nil {
				return false, err
			}
			changed = true
		}
		return changed, nil
	})
	return changed, err
}

// stringList reads the list of strings at path.
func stringList(e *jsontree.Editor, path []string) ([]string, bool, error) {
	v, err := e.Lookup(path)
	if err != nil {
		return nil, false, err
	}
	if v == nil || v.Kind == jsontree.Null {
		return nil, false, nil
	}
	if v.Kind != jsontree.Array {
		return nil, true, fmt.Errorf("%s is %s, not a list of names", jsontree.PathString(path), v.Kind)
	}
	var out []string
	for _, el := range v.Elems {
		if el.Kind != jsontree.String {
			return nil, true, fmt.Errorf("%s holds %s, not only names", jsontree.PathString(path), el.Kind)
		}
		out = append(out, el.Str)
	}
	return out, true, nil
}

// appendQuoted appends s as a JSON string literal.
func appendQuoted(dst []byte, s string) []byte { return jsonx.AppendString(dst, s) }

func stringsJSON(list []string) []byte {
	b := []byte{'['}
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, s)
	}
	return append(b, ']')
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// edit changes the file of scope with fn, atomically (config.EditJSONFile).
// ~/.claude.json is locked against Claude Code while it is read and
// rewritten. fn's errors name the file, ErrExists and ErrNotFound already do.
func (f Files) edit(scope Scope, fn func(e *jsontree.Editor) (bool, error)) error {
	file := f.Path(scope)
	named := func(e *jsontree.Editor) (bool, error) {
		changed, err := fn(e)
		if err != nil && !errors.Is(err, ErrExists) && !errors.Is(err, ErrNotFound) {
			err = fmt.Errorf("%s: %w", file, err)
		}
		return changed, err
	}
	if scope == ScopeProject {
		return config.EditJSONFile(file, 0o644, false, maxConfigSize, named)
	}
	return config.EditClaudeJSON(file, named)
}
