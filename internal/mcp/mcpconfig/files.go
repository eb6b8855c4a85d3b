package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tackcode/tack/internal/atomicfile"
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

// ClaudeJSONPath is where Claude Code keeps its global configuration:
// $CLAUDE_CONFIG_DIR/.claude.json when CLAUDE_CONFIG_DIR is set, else
// ~/.claude.json. As in Claude Code, a legacy <config dir>/.config.json
// (config dir: $CLAUDE_CONFIG_DIR or ~/.claude) is used instead when it
// exists.
func ClaudeJSONPath(getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil && getenv("CLAUDE_CONFIG_DIR") == "" {
			return "", fmt.Errorf("locating ~/.claude.json: %w", err)
		}
		home = h
	}
	dir := getenv("CLAUDE_CONFIG_DIR")
	configDir := dir
	if configDir == "" {
		configDir = filepath.Join(home, ".claude")
	}
	if legacy := filepath.Join(configDir, ".config.json"); fileExists(legacy) {
		return legacy, nil
	}
	if dir == "" {
		dir = home
	}
	return filepath.Join(dir, ".claude.json"), nil
}

func fileExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
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
	f.ClaudeJSON, err = ClaudeJSONPath(getenv)
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

// Size limits: .mcp.json and --mcp-config files are small; ~/.claude.json
// holds prompt history and grows, but not to this.
const (
	maxConfigSize     = 8 << 20
	maxClaudeJSONSize = 512 << 20
)

// readConfig reads a configuration file. A missing file gives nil, false.
func readConfig(path string, limit int64) ([]byte, bool, error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, false, nil
		}
		return nil, false, cause(err)
	}
	if !info.Mode().IsRegular() {
		return nil, true, errors.New("not a regular file")
	}
	if info.Size() > limit {
		return nil, true, fmt.Errorf("%d bytes is too large for a configuration file", info.Size())
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, true, cause(err)
	}
	return src, true, nil
}

// cause strips the *PathError around err, whose path the message names.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

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
		return &Error{Source: Source{Path: label}, Msg: "empty server entry"}
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
			limit = maxClaudeJSONSize
		}
		src, exists, err := readConfig(file, limit)
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

// edit changes the file of scope with fn, atomically. ~/.claude.json is
// locked against Claude Code while it is read and rewritten.
func (f Files) edit(scope Scope, fn func(e *jsontree.Editor) (bool, error)) error {
	file := f.Path(scope)
	if scope == ScopeProject {
		return editFile(file, 0o644, false, maxConfigSize, fn)
	}
	return editFile(file, 0o600, true, maxClaudeJSONSize, fn)
}

// editFile reads path, lets fn edit it and writes the result back atomically
// (a temporary file renamed over it), keeping the file's mode (perm for a
// new file) and writing through a symbolic link to its target. When lock is
// set, the edit holds Claude Code's lock on the file. The file is not
// written when fn changes nothing, nor when it changed on disk meanwhile.
func editFile(path string, perm fs.FileMode, lock bool, limit int64, fn func(e *jsontree.Editor) (bool, error)) error {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	if lock {
		unlock, err := lockFile(path, lockWait)
		if err != nil {
			return err
		}
		defer unlock()
	}
	src, exists, err := readConfig(target, limit)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	mode := perm
	if exists {
		if info, err := os.Stat(target); err == nil {
			mode = info.Mode().Perm()
		}
	}
	e := jsontree.NewEditor(src)
	changed, err := fn(e)
	if errors.Is(err, ErrExists) || errors.Is(err, ErrNotFound) {
		return err // these name the file already
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	out := e.Bytes()
	if !changed || bytes.Equal(out, src) {
		return nil
	}
	// A last check that the edit left valid JSON: the file is not ours.
	if _, serr := jsontree.Parse(bytes.TrimPrefix(out, bom), func([]string) jsontree.Build { return jsontree.Shallow }); serr != nil {
		return fmt.Errorf("%s: internal error: the edit would leave invalid JSON (%s); nothing written", path, serr.Msg)
	}
	now, _, err := readConfig(target, limit)
	if err != nil || !bytes.Equal(now, src) {
		return fmt.Errorf("%s changed while tack was editing it; nothing written, try again", path)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(target, out, mode)
}

// Claude Code serialises its writes of ~/.claude.json with the npm package
// proper-lockfile: the lock is a directory named after the file plus
// ".lock", considered stale when its modification time is older than ten
// seconds (a live holder refreshes it). tack takes the same lock, so that an
// edit does not interleave with a running Claude Code's write.
const (
	lockStale = 10 * time.Second
	lockWait  = 3 * time.Second
)

// lockFile takes Claude Code's lock on path, waiting at most wait for
// another holder to release it, and returns its release.
func lockFile(path string, wait time.Duration) (func(), error) {
	lock := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := os.Mkdir(lock, 0o700)
		if err == nil {
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if info, serr := os.Stat(lock); serr == nil && time.Since(info.ModTime()) > lockStale {
			os.Remove(lock) // stale: its holder died
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is locked by another program (%s exists); try again", path, lock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
