package tool

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/watch"
)

// TextFiles is where the file tools read and write text instead of the
// disk: a host's editor, whose buffers hold changes not saved yet. Read
// still checks on disk that the file exists and what kind it is, and the
// writing tools still check it was read first; only the text goes through
// TextFiles. Paths are absolute.
type TextFiles interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// Env is the state one session's tool calls share. It is safe for
// concurrent use by parallel read-only calls.
type Env struct {
	// SessionID identifies the session (for scratch files and hooks).
	SessionID string
	// ProjectDir is the directory the session started in.
	ProjectDir string
	// Shell runs commands; its working directory persists across Bash calls
	// and is the base for relative paths given to any tool.
	Shell *shell.Shell
	// Files remembers which files were read, to guard writes.
	Files *FileState
	// TextFiles, when set, holds the text the file tools read and write in
	// place of the disk (an editor's buffers); nil uses the disk.
	TextFiles TextFiles
	// Writes records what the file tools write, so that the session's file
	// watcher does not take those changes for someone else's. The
	// session's threads share it; nil records nothing.
	Writes *watch.Writes
	// Tools is the session's tool catalogue (ToolSearch looks in it).
	Tools *Registry
	// Model calls the model for tools that need one (WebFetch, WebSearch).
	Model ModelCaller
	// HTTP is the client for WebFetch. Nil means a default client.
	HTTP *http.Client
	// ScratchDir holds files the session creates for itself (background
	// command output). It is created on first use.
	ScratchDir string
	// ReadDenied reports a file the permission rules forbid reading, so
	// that tools listing or searching many files (Glob, Grep) leave it out.
	// Nil when no rule forbids any read.
	ReadDenied func(path string) bool
	// NestedMemory returns the memory that reading path makes relevant for
	// the first time (a CLAUDE.md below the working directory), rendered
	// for the model. Nil: none.
	NestedMemory func(path string) []llm.Block
	// Subagents runs the subagents the Agent tool starts; nil inside a
	// subagent, which cannot start subagents.
	Subagents Subagents
	// Modes reads and changes the session's permission mode (ExitPlanMode
	// leaves plan mode). Nil when the session has no permission layer.
	Modes ModeControl
	// TaskApprover is asked before the task list changes in the ways the
	// session's hooks guard (a task created, a task completed). Nil
	// approves every change.
	TaskApprover TaskApprover

	stateMu sync.Mutex
	state   map[any]any
}

// State returns the session's value for key, made by create on first use.
// Tools keep their own session state here (the task list, background jobs)
// under an unexported key type of their package.
func (e *Env) State(key any, create func() any) any {
	e.stateMu.Lock()
	defer e.stateMu.Unlock()
	if v, ok := e.state[key]; ok {
		return v
	}
	if e.state == nil {
		e.state = map[any]any{}
	}
	v := create()
	e.state[key] = v
	return v
}

// Subagents runs subagents for the Agent tool.
type Subagents interface {
	// Run runs a subagent to the end (or starts it in the background) and
	// returns its report.
	Run(ctx context.Context, req SubagentRequest) (SubagentResult, error)
	// Output returns a background subagent's report when it is done;
	// done is false while it still runs. wait bounds how long to wait.
	Output(ctx context.Context, id string, wait time.Duration) (report string, done bool, err error)
}

// SubagentRequest is one Agent tool call.
type SubagentRequest struct {
	Type, Description, Prompt, Model, Effort string
	Background                               bool
	Isolation                                string
	// ToolUseID is the Agent call's id: the subagent's messages carry it
	// as parent_tool_use_id.
	ToolUseID string
}

// SubagentResult is what a subagent reports. Its JSON (MarshalJSON) is
// Claude Code's Agent result: the report as a list of text blocks.
type SubagentResult struct {
	AgentID         string
	AgentType       string
	Status          string // completed, failed, running
	Prompt          string // what the subagent was asked
	Model           string // the model it ran on
	Report          string
	IsError         bool
	Background      bool
	TotalTokens     int64
	TotalToolUses   int
	TotalDurationMS int64
	Usage           *llm.Usage // the subagent's tokens, summed over its requests
	CostUSD         float64
	Worktree        string
	WorktreeBranch  string
}

// MarshalJSON writes r in Claude Code's order of keys, tack's own
// (isAsync, costUSD, the worktree) after them.
func (r SubagentResult) MarshalJSON() ([]byte, error) {
	type block struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	content := []block{}
	if r.Report != "" {
		content = append(content, block{"text", r.Report})
	}
	return json.Marshal(struct {
		Status          string     `json:"status"`
		Prompt          string     `json:"prompt"`
		AgentID         string     `json:"agentId"`
		AgentType       string     `json:"agentType"`
		Content         []block    `json:"content"`
		ResolvedModel   string     `json:"resolvedModel,omitempty"`
		TotalDurationMS int64      `json:"totalDurationMs"`
		TotalTokens     int64      `json:"totalTokens"`
		TotalToolUses   int        `json:"totalToolUseCount"`
		Usage           *llm.Usage `json:"usage,omitempty"`
		Background      bool       `json:"isAsync,omitempty"`
		CostUSD         float64    `json:"costUSD"`
		Worktree        string     `json:"worktreePath,omitempty"`
		WorktreeBranch  string     `json:"worktreeBranch,omitempty"`
	}{r.Status, r.Prompt, r.AgentID, r.AgentType, content, r.Model, r.TotalDurationMS, r.TotalTokens, r.TotalToolUses,
		r.Usage, r.Background, r.CostUSD, r.Worktree, r.WorktreeBranch})
}

// TaskApprover approves changes to the session's task list (TaskCreate,
// TaskUpdate): the runtime answers with the TaskCreated and TaskCompleted
// hooks. A non-nil error refuses the change; its text is what the model
// reads as the tool's error, so it says who refused and why.
type TaskApprover interface {
	// ApproveCreate is asked before task is added to the list.
	ApproveCreate(ctx context.Context, task TaskInfo) error
	// ApproveComplete is asked before task is marked completed.
	ApproveComplete(ctx context.Context, task TaskInfo) error
}

// TaskInfo is a task of the task list as a TaskApprover sees it.
type TaskInfo struct {
	ID, Subject, Description string
}

// ModeControl is the session's permission mode, as tools see it.
type ModeControl interface {
	Mode() string
	SetMode(mode string) error
}

// ModelCaller gives tools access to the model. Small is the small fast model
// (summarising fetched pages); Main is the session's model.
type ModelCaller struct {
	Provider llm.Provider
	Small    string
	Main     string
}

// Cwd is the current working directory of the session.
func (e *Env) Cwd() string {
	if e.Shell != nil {
		return e.Shell.Cwd()
	}
	return e.ProjectDir
}

// Abs resolves p against the current working directory and cleans it.
func (e *Env) Abs(p string) string {
	if p == "" {
		return e.Cwd()
	}
	if len(p) > 1 && p[0] == '~' && p[1] == '/' {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.Cwd(), p)
	}
	return filepath.Clean(p)
}

// HTTPClient returns the client to use for outgoing requests.
func (e *Env) HTTPClient() *http.Client {
	if e.HTTP != nil {
		return e.HTTP
	}
	return http.DefaultClient
}

// Scratch returns the session scratch directory, creating it if needed.
func (e *Env) Scratch() (string, error) {
	if err := os.MkdirAll(e.ScratchDir, 0o700); err != nil {
		return "", err
	}
	return e.ScratchDir, nil
}

// FileState remembers, per absolute path, what a session last saw of a file,
// so that Write and Edit refuse to overwrite what the model has not read or
// what changed on disk since.
type FileState struct {
	mu sync.Mutex
	m  map[string]FileStamp
	// unguarded lets Write and Edit change files unread (UnguardedFileState).
	unguarded bool
	// seen is told of every file recorded (OnRecord).
	seen func(path string)
}

// FileStamp is what a session saw of a file when it read or wrote it.
type FileStamp struct {
	ModTime time.Time
	Size    int64
	// Partial is true when only part of the file was read.
	Partial bool
}

// NewFileState returns an empty FileState.
func NewFileState() *FileState { return &FileState{m: map[string]FileStamp{}} }

// UnguardedFileState returns an empty FileState under which Write and Edit
// change a file whether or not it was read: for callers that are not the
// model and know what they change (tack mcp serve's client, as Claude
// Code's mcp serve lets its client).
func UnguardedFileState() *FileState {
	return &FileState{m: map[string]FileStamp{}, unguarded: true}
}

// Guarded reports whether a file must have been read, and be unchanged
// since, before Write or Edit changes it.
func (s *FileState) Guarded() bool { return !s.unguarded }

// Record notes that the session has seen path as described by info.
func (s *FileState) Record(path string, info os.FileInfo, partial bool) {
	s.mu.Lock()
	s.m[path] = FileStamp{ModTime: info.ModTime(), Size: info.Size(), Partial: partial}
	seen := s.seen
	s.mu.Unlock()
	if seen != nil {
		seen(path)
	}
}

// OnRecord has f told of every file recorded from now on: the files the
// session read or wrote, which its file watcher watches.
func (s *FileState) OnRecord(f func(path string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = f
}

// Paths are the files recorded so far.
func (s *FileState) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(s.m))
}

// Get returns the stamp recorded for path.
func (s *FileState) Get(path string) (FileStamp, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[path]
	return st, ok
}

// Forget drops what is known of path.
func (s *FileState) Forget(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, path)
}

// Changed reports whether the file described by info differs from the stamp.
func (st FileStamp) Changed(info os.FileInfo) bool {
	return !info.ModTime().Equal(st.ModTime) || info.Size() != st.Size
}

// contextKey types values tools may find in a call's context.
type contextKey int

const toolUseIDKey contextKey = iota

// WithToolUseID returns ctx carrying the id of the call being run.
func WithToolUseID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, toolUseIDKey, id)
}

// ToolUseID returns the id of the call being run, if ctx carries one.
func ToolUseID(ctx context.Context) string {
	id, _ := ctx.Value(toolUseIDKey).(string)
	return id
}
