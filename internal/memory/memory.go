package memory

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

//go:embed intro.md
var intro string

// Kind says where a memory file comes from; Render describes it to the model.
type Kind string

const (
	// Managed memory is set by an administrator for every user of the machine.
	Managed Kind = "Managed"
	// User memory is the user's private instructions for all projects.
	User Kind = "User"
	// Project memory is checked into the codebase: CLAUDE.md,
	// .claude/CLAUDE.md, AGENTS.md, .claude/rules/**.md.
	Project Kind = "Project"
	// Local memory is CLAUDE.local.md: private to the user, not checked in.
	Local Kind = "Local"
	// AutoMem is the auto memory index MEMORY.md the model keeps itself.
	AutoMem Kind = "AutoMem"
)

// Description is the parenthesised text that follows a file's path in its
// memory block.
func (k Kind) Description() string {
	switch k {
	case Managed:
		return "managed instructions, set by the administrator for all users"
	case User:
		return "user's private global instructions for all projects"
	case Project:
		return "project instructions, checked into the codebase"
	case Local:
		return "user's private project instructions, not checked in"
	case AutoMem:
		return "user's auto-memory, persists across conversations"
	}
	return string(k)
}

// File is one memory file as the model sees it.
type File struct {
	// Path is the absolute path the file was found at (symbolic links are
	// followed to read it but not resolved in its name).
	Path string
	Kind Kind
	// Content is exactly the text sent: frontmatter of rules and block-level
	// HTML comments removed, leading blank lines and trailing white space
	// trimmed, invalid UTF-8 replaced, and a note appended when it was cut.
	Content string
	// ImportedBy is the Path of the memory file whose @import brought this
	// one in; empty for files found by discovery.
	ImportedBy string
	// Globs are the paths: patterns of a path-scoped rule; nil otherwise.
	Globs []string
	// Reason says why the file was loaded when it was.
	Reason Reason
	// Trigger is the file whose reading loaded this one, for the memory
	// a Tracker hands out; "" otherwise.
	Trigger string
}

// Reason says why a memory file was loaded. The values are those of the
// load_reason of Claude Code's InstructionsLoaded hook event.
type Reason string

const (
	// AtStart: loaded as the session started (Load).
	AtStart Reason = "session_start"
	// Nested: the memory of a directory below the cwd, loaded as a file
	// in it was read (Tracker.OnRead).
	Nested Reason = "nested_traversal"
	// GlobMatch: a path-scoped rule, loaded as a file its paths: globs
	// match was read.
	GlobMatch Reason = "path_glob_match"
	// Included: imported (@path) by the memory file ImportedBy.
	Included Reason = "include"
	// Reloaded: read again from disk after the conversation was compacted
	// (Set.Reload), whatever first brought it in.
	Reloaded Reason = "compact"
)

// Options say where to look for memory. Empty paths turn their source off.
type Options struct {
	// Cwd is the session's working directory; relative values are made
	// absolute against the process's. Required.
	Cwd string
	// ConfigDir holds user memory: ConfigDir/CLAUDE.md and ConfigDir/rules.
	ConfigDir string
	// Home resolves @~/ imports.
	Home string
	// ManagedPath is the managed CLAUDE.md (see ManagedPathFor).
	ManagedPath string
	// AutoMemoryPath is the auto memory MEMORY.md of this project.
	AutoMemoryPath string
	// NoUser skips the user memory (ConfigDir's CLAUDE.md and rules);
	// NoProject the memory of the working directory, its ancestors and
	// the folders below it. Both are set when the session reads no user or
	// no project settings (--setting-sources, the SDK's settingSources),
	// as Claude Code loads CLAUDE.md only with its source, and by --bare.
	NoUser, NoProject bool
	// Excludes are claudeMdExcludes glob patterns (doublestar syntax) matched
	// against absolute paths; a leading ~/ is expanded with Home.
	Excludes []string
}

// ManagedPathFor returns where managed memory lives on goos (runtime.GOOS).
func ManagedPathFor(goos string) string {
	switch goos {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/CLAUDE.md"
	case "windows":
		return `C:\Program Files\ClaudeCode\CLAUDE.md`
	}
	return "/etc/claude-code/CLAUDE.md"
}

// DefaultOptions fills Home ($HOME), ConfigDir ($CLAUDE_CONFIG_DIR, else
// ~/.claude) and ManagedPath for this platform. AutoMemoryPath and Excludes
// are left to the caller.
func DefaultOptions(cwd string, getenv func(string) string) Options {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	config := getenv("CLAUDE_CONFIG_DIR")
	if config == "" && home != "" {
		config = filepath.Join(home, ".claude")
	}
	return Options{Cwd: cwd, Home: home, ConfigDir: config, ManagedPath: ManagedPathFor(runtime.GOOS)}
}

// Set is the memory loaded for a session start.
type Set struct {
	// Files are the memory files loaded at start, in the order sent.
	Files []File
	// Auto is the auto memory MEMORY.md, nil when absent or empty.
	Auto *File
	// Problems are files that exist but could not be read, and bad
	// claudeMdExcludes patterns. None of them stops loading.
	Problems []string
	// Notes explain what was deliberately left out: missing or too deep
	// imports, excluded files. For diagnostics (/memory, --debug).
	Notes []string

	opts    Options
	tracker *Tracker
}

// Load discovers and reads the memory for opts. It fails only when opts.Cwd
// is unusable; unreadable files are reported in Set.Problems.
func Load(opts Options) (*Set, error) {
	if opts.Cwd == "" {
		return nil, errors.New("memory: no working directory")
	}
	cwd, err := filepath.Abs(opts.Cwd)
	if err != nil {
		return nil, fmt.Errorf("memory: working directory %q: %w", opts.Cwd, err)
	}
	opts.Cwd = cwd
	return load(opts, osSys, AtStart), nil
}

// load loads the memory of a start (reason AtStart) or of a reload after
// compaction (Reloaded).
func load(opts Options, sys sysCalls, reason Reason) *Set {
	l := newLoader(opts, sys)
	l.reason = reason
	s := &Set{opts: opts}
	s.Files = l.start()
	s.Auto = l.auto()
	s.Problems = l.takeProblems()
	s.Notes = l.takeNotes()
	s.tracker = &Tracker{l: l}
	return s
}

// Reload reads the same sources again from disk, as compaction does: the
// result has the start-time memory only, each file with Reason Reloaded,
// and a fresh Tracker, so nested memory loads again on the next read below
// the cwd.
func (s *Set) Reload() (*Set, error) {
	if s.opts.Cwd == "" {
		return nil, errors.New("memory: no working directory")
	}
	return load(s.opts, osSys, Reloaded), nil
}

// Root returns the memory loaded at start (managed, user, the cwd and its
// ancestors, with their imports and unconditional rules): what compaction
// re-injects. Nested and path-scoped memory that arrived through the Tracker
// is not part of it.
func (s *Set) Root() []File { return append([]File(nil), s.Files...) }

// Tracker returns the tracker of memory that loads on demand for this set.
func (s *Set) Tracker() *Tracker { return s.tracker }

// Blocks renders Files as the text blocks that open the first user message.
// The first block starts with the introduction telling the model these are
// the user's instructions. Nil when there is no memory.
func (s *Set) Blocks() []llm.Block {
	if len(s.Files) == 0 {
		return nil
	}
	blocks := make([]llm.Block, len(s.Files))
	for i, f := range s.Files {
		lead := ""
		if i == 0 {
			lead = strings.TrimSpace(intro)
		}
		blocks[i] = block(lead, f)
	}
	return blocks
}

// AutoBlock renders the auto memory, which the caller puts in the system
// prompt. False when there is none.
func (s *Set) AutoBlock() (llm.Block, bool) {
	if s.Auto == nil {
		return llm.Block{}, false
	}
	return Render(*s.Auto), true
}

// Render returns the block for one memory file, without the introduction
// (for memory that loads after the first message).
func Render(f File) llm.Block { return block("", f) }

// block is the one place the wire format of a memory block is written, a
// reminder (llm.Reminder) headed by the file's path:
//
//	<system-reminder>[LEAD\n\n]Contents of PATH (DESCRIPTION):\n\nCONTENT\n</system-reminder>
//
// Changing it changes the cached prompt prefix of every session.
func block(lead string, f File) llm.Block {
	heading := "Contents of " + f.Path + " (" + f.Kind.Description() + "):"
	if lead != "" {
		heading = lead + "\n\n" + heading
	}
	return llm.Reminder(heading, f.Content)
}
