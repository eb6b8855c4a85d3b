// Package config reads Claude Code's settings files — user, project, local,
// command line and managed — and merges them into one Merged value that
// records where every value came from, so that a team's .claude/settings.json
// governs tack as it governs Claude Code.
//
// Unlike Claude Code, which ignores a malformed file without a word (and with
// it every hook and deny rule it holds), Load refuses it with one error that
// names the file, line and column and says what is wrong:
//
//	/repo/.claude/settings.json:7:14: permissions.defaultMode: unknown mode "yolo" (want default, acceptEdits, plan, auto, bypassPermissions or dontAsk)
//
// The package is a leaf: permission rules and hook "if" conditions are checked
// by validators the caller passes in LoadOptions.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// Scope is where a settings file sits in the precedence order.
type Scope string

// The scopes, lowest precedence first.
const (
	ScopeUser    Scope = "user"    // <config dir>/settings.json
	ScopeProject Scope = "project" // <project>/.claude/settings.json
	ScopeLocal   Scope = "local"   // <project>/.claude/settings.local.json
	ScopeFlag    Scope = "flag"    // --settings FILE|JSON
	ScopeManaged Scope = "managed" // the administrator's managed-settings.json
)

// Source says where a value was written.
type Source struct {
	Scope Scope
	// Path is the file, or "--settings" for inline JSON given on the command line.
	Path string
	// Line and Col are the 1-based position of the value in Path (columns
	// count characters); both are 0 when Source names a whole file.
	Line, Col int
}

// String renders the source as "scope path[:line:col]".
func (s Source) String() string {
	if s.Line > 0 {
		return fmt.Sprintf("%s %s:%d:%d", s.Scope, s.Path, s.Line, s.Col)
	}
	return string(s.Scope) + " " + s.Path
}

// FlagPath is the Source.Path of inline JSON given to --settings.
const FlagPath = "--settings"

// LoadOptions says which settings files to read and how to check them.
type LoadOptions struct {
	// ConfigDir holds the user settings; "" means DefaultConfigDir(os.Getenv).
	ConfigDir string
	// ProjectDir holds .claude/settings.json and .claude/settings.local.json;
	// "" means Cwd.
	ProjectDir string
	// Cwd resolves a relative --settings path; "" means the process's
	// working directory.
	Cwd string
	// ManagedPath is the managed settings file; "" means DefaultManagedPath().
	ManagedPath string
	// FlagSettings is the value of --settings: inline JSON when it starts
	// with '{', otherwise a file path (which must exist). "" means none.
	FlagSettings string
	// Sources limits which of the user, project and local files are read
	// (--setting-sources). nil means all three; an empty, non-nil slice means
	// none. Command-line and managed settings are always read.
	Sources []Scope
	// ValidateRule, when set, checks each permission rule (allow, ask, deny);
	// its error is reported at the rule's position.
	ValidateRule func(rule string) error
	// ValidateIf, when set, checks each hook's "if" condition likewise.
	ValidateIf func(rule string) error
	// Untrusted reads the project and local files as those of a folder the
	// user has not trusted: they are checked as usual, but of what they set
	// only permissions.deny, permissions.ask and
	// permissions.disableBypassPermissionsMode apply, which can only
	// restrict a session. Every other key — hooks, env, statusLine,
	// apiKeyHelper, permissions.allow, defaultMode and
	// additionalDirectories, enabledPlugins, the MCP approvals, sandbox,
	// model… — is left out and listed in Merged.Ignored.
	Untrusted bool
	// HostManaged is the managed settings an embedding host passes
	// (--managed-settings, initialize's managedSettings): a JSON object, of
	// which only restrictive keys apply (see hostmanaged.go). "" means none.
	HostManaged string
}

// DefaultConfigDir is $CLAUDE_CONFIG_DIR, or ~/.claude.
func DefaultConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}

// DefaultManagedPath is where Claude Code reads managed (administrator)
// settings on this operating system.
func DefaultManagedPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// ParseSources parses the value of --setting-sources: a comma-separated list
// of user, project and local. "" gives an empty, non-nil list (read none).
func ParseSources(list string) ([]Scope, error) {
	out := []Scope{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		s := Scope(f)
		if s != ScopeUser && s != ScopeProject && s != ScopeLocal {
			return nil, fmt.Errorf("--setting-sources: unknown source %q (want user, project or local)", f)
		}
		out = append(out, s)
	}
	return out, nil
}

// maxFileSize bounds what is read: a settings file is a few kilobytes, and a
// mistaken path should not pull a gigabyte into memory.
const maxFileSize = 8 << 20

// fileSystem is what Load needs of the operating system; tests replace it to
// produce errors that root, who runs CI, cannot provoke with chmod.
type fileSystem interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
}

type osFS struct{}

func (osFS) Stat(name string) (fs.FileInfo, error)  { return os.Stat(name) }
func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) ReadFile(name string) ([]byte, error)   { return os.ReadFile(name) }

// Load reads the settings files opts selects, checks each one and merges them.
//
// Files, lowest precedence first: user <ConfigDir>/settings.json, project
// <ProjectDir>/.claude/settings.json, local .claude/settings.local.json,
// --settings, managed. A missing file is absent (except a --settings file,
// which was asked for); a file that exists but cannot be read, or does not
// hold valid settings, is an *Error. Every file is read and checked; when
// several are malformed, the error joins one *Error per file.
//
// Merging: a scalar (model, permissions.defaultMode, statusLine, sandbox, an
// unknown key…) takes the value of the highest file that sets it, so managed
// settings always win. List settings (permission rules, additionalDirectories,
// MCP server lists, claudeMdExcludes, the HTTP hook allow-lists) accumulate
// from lowest to highest, without duplicates, each item keeping its Source.
// Hooks accumulate likewise. env and enabledPlugins merge per key.
//
// Hook guards: when managed settings set allowManagedHooksOnly, only managed
// hooks are kept (the key is ignored, with a warning, in other files). When
// disableAllHooks is true, no hooks are kept — except managed ones, unless
// the managed file itself disables them.
func Load(opts LoadOptions) (*Merged, error) {
	return load(opts, osFS{})
}

// Files are the settings files Load reads with opts, lowest precedence
// first, whether they exist or not (inline --settings JSON is no file).
func (opts LoadOptions) Files() []Source {
	_, cands, managed, _, err := opts.candidates()
	if err != nil {
		return nil
	}
	var out []Source
	for _, c := range append(cands, managed) {
		out = append(out, Source{Scope: c.scope, Path: c.path})
	}
	return out
}

// candidate is a settings file Load may read.
type candidate struct {
	scope    Scope
	path     string
	required bool
}

// candidates fills in what opts leaves unset and lists the files it
// selects: those below the command line's inline JSON (inline), then the
// managed file.
func (opts LoadOptions) candidates() (_ LoadOptions, cands []candidate, managed candidate, inline bool, _ error) {
	if opts.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return opts, nil, managed, false, fmt.Errorf("settings: working directory: %w", err)
		}
		opts.Cwd = wd
	}
	if opts.ProjectDir == "" {
		opts.ProjectDir = opts.Cwd
	}
	if opts.ConfigDir == "" {
		opts.ConfigDir = DefaultConfigDir(os.Getenv)
	}
	if opts.ManagedPath == "" {
		opts.ManagedPath = DefaultManagedPath()
	}
	want := map[Scope]bool{ScopeUser: true, ScopeProject: true, ScopeLocal: true}
	if opts.Sources != nil {
		want = map[Scope]bool{}
		for _, s := range opts.Sources {
			if s != ScopeUser && s != ScopeProject && s != ScopeLocal {
				return opts, nil, managed, false, fmt.Errorf("settings: unknown setting source %q (want user, project or local)", s)
			}
			want[s] = true
		}
	}
	if want[ScopeUser] {
		cands = append(cands, candidate{ScopeUser, filepath.Join(opts.ConfigDir, "settings.json"), false})
	}
	if want[ScopeProject] {
		cands = append(cands, candidate{ScopeProject, filepath.Join(opts.ProjectDir, ".claude", "settings.json"), false})
	}
	if want[ScopeLocal] {
		cands = append(cands, candidate{ScopeLocal, filepath.Join(opts.ProjectDir, ".claude", "settings.local.json"), false})
	}
	inline = strings.HasPrefix(strings.TrimLeft(opts.FlagSettings, " \t\r\n"), "{")
	if opts.FlagSettings != "" && !inline {
		p := opts.FlagSettings
		if !filepath.IsAbs(p) {
			p = filepath.Join(opts.Cwd, p)
		}
		cands = append(cands, candidate{ScopeFlag, p, true})
	}
	return opts, cands, candidate{ScopeManaged, opts.ManagedPath, false}, inline, nil
}

func load(opts LoadOptions, fsys fileSystem) (*Merged, error) {
	opts, cands, managed, inline, err := opts.candidates()
	if err != nil {
		return nil, err
	}

	var layers []*document
	var errs []error
	add := func(src []byte, source Source) {
		doc, err := parseDocument(src, source, &opts)
		if err != nil {
			errs = append(errs, err)
			return
		}
		layers = append(layers, doc)
	}
	var userInfo fs.FileInfo
	read := func(c candidate) {
		src, info, err := readSettings(fsys, c.path, c.required)
		if err != nil {
			errs = append(errs, &Error{Source: Source{Scope: c.scope, Path: c.path}, Msg: err.msg, Err: err.err})
			return
		}
		if info == nil {
			return // absent
		}
		if c.scope == ScopeUser {
			userInfo = info
		}
		if c.scope == ScopeProject && userInfo != nil && os.SameFile(userInfo, info) {
			// Run from the home directory, ~/.claude/settings.json is both
			// the user and the project file; reading it twice would run
			// each of its hooks twice.
			return
		}
		add(src, Source{Scope: c.scope, Path: c.path})
	}
	for _, c := range cands {
		read(c)
	}
	if inline {
		add([]byte(opts.FlagSettings), Source{Scope: ScopeFlag, Path: FlagPath})
	}
	read(managed)
	if opts.HostManaged != "" {
		host, err := hostManagedDoc(opts.HostManaged, &opts)
		if err != nil {
			errs = append(errs, err)
		} else {
			layers = layHost(layers, host)
		}
	}

	switch len(errs) {
	case 0:
		return merge(layers), nil
	case 1:
		return nil, errs[0]
	}
	return nil, errors.Join(errs...)
}

// readErr is why a file could not be read, for an *Error.
type readErr struct {
	msg string
	err error
}

// readSettings reads one settings file. A file that does not exist gives a
// nil info and no error, unless it is required.
func readSettings(fsys fileSystem, path string, required bool) ([]byte, fs.FileInfo, *readErr) {
	info, err := fsys.Stat(path)
	if err != nil {
		if missing(err) {
			if required {
				return nil, nil, &readErr{"settings file not found", cause(err)}
			}
			// A symlink to nothing is a file someone meant to be there.
			if li, lerr := fsys.Lstat(path); lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
				return nil, nil, &readErr{"cannot read settings: the symbolic link points to a missing file", nil}
			}
			return nil, nil, nil
		}
		return nil, nil, &readErr{"cannot read settings", cause(err)}
	}
	// Only regular files: opening a FIFO would block, a directory cannot be read.
	if !info.Mode().IsRegular() {
		return nil, nil, &readErr{"cannot read settings: not a regular file but " + describeMode(info.Mode()), nil}
	}
	if info.Size() > maxFileSize {
		return nil, nil, &readErr{fmt.Sprintf("cannot read settings: %d bytes is too large for a settings file", info.Size()), nil}
	}
	src, err := fsys.ReadFile(path)
	if err != nil {
		return nil, nil, &readErr{"cannot read settings", cause(err)}
	}
	return src, info, nil
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

func missing(err error) bool {
	// ENOTDIR: a path component is a file (".claude" is not a directory),
	// so the settings file cannot exist.
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// cause strips the *PathError around err, whose path the *Error already names.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
