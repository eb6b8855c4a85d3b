// Package store is the directory every worker of a fleet reaches (a shared
// or network file system): per run, the state a worker that takes a run
// over restores from — the session's transcript, one record per tool call,
// the result — and, in one bare git repository, the snapshots of the runs'
// workspaces. What is large lives here and is passed to Temporal by
// reference (a path under the store), never as a payload.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/atomicfile"
)

// Store is a store directory.
type Store struct{ Root string }

// Open makes the store at root, creating its folders.
func Open(root string) (*Store, error) {
	if root == "" {
		return nil, errors.New("store: no directory (set --store or TACK_WORKER_STORE)")
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	if err := os.MkdirAll(filepath.Join(abs, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	return &Store{Root: abs}, nil
}

// Run is the part of the store one run (one task's workflow) owns.
type Run struct {
	Dir string
	ID  string
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// RunDirName is the folder name of the run id (a workflow id, which may hold
// slashes).
func RunDirName(id string) string { return unsafeName.ReplaceAllString(id, "_") }

// Run returns run id's part of the store, creating it.
func (s *Store) Run(id string) (*Run, error) {
	dir := filepath.Join(s.Root, "runs", RunDirName(id))
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		return nil, fmt.Errorf("store run %s: %w", id, err)
	}
	return &Run{Dir: dir, ID: id}, nil
}

// SnapshotRepo is the bare repository holding every run's workspace
// snapshots, each run under its own ref (SnapshotRef).
func (s *Store) SnapshotRepo() string { return filepath.Join(s.Root, "snapshots.git") }

// SnapshotRef is the private ref of run id's latest snapshot.
func SnapshotRef(id string) string { return "refs/tack/runs/" + RunDirName(id) }

// State is what a run has durably reached.
type State struct {
	// SessionID is the agent session of the run, fixed by its first attempt.
	SessionID string `json:"session_id"`
	// BaseCommit is the commit the workspace was cloned at.
	BaseCommit string `json:"base_commit"`
	// Snapshot is the commit of the workspace's latest snapshot ("" before
	// the first one: the workspace is then BaseCommit).
	Snapshot string `json:"snapshot,omitempty"`
	// Attempts counts the attempts that started the session.
	Attempts int `json:"attempts"`
	// CostUSD is what the earlier attempts spent: those that ended, and
	// those cut off as far as AttemptCostUSD had got.
	CostUSD float64 `json:"cost_usd"`
	// AttemptCostUSD is what the attempt in progress had spent at its last
	// model response. An attempt cut off leaves it here, and the next one
	// adds it to CostUSD: its requests were paid for.
	AttemptCostUSD float64 `json:"attempt_cost_usd,omitempty"`
}

// State reads the run's state; ok is false when no attempt has saved one.
func (r *Run) State() (st State, ok bool, err error) {
	ok, err = readJSON(filepath.Join(r.Dir, "state.json"), &st)
	return st, ok, err
}

// SaveState replaces the run's state.
func (r *Run) SaveState(st State) error { return writeJSON(filepath.Join(r.Dir, "state.json"), st) }

// Tool call states.
const (
	ToolStarted  = "started"
	ToolFinished = "finished"
)

// ToolCall is the record of one tool call: written as started before the
// tool runs and as finished once it has, so that a worker taking the run
// over knows which call was cut off by the death of the last one.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	State string          `json:"state"`
	// Attempt is the run attempt the call ran in.
	Attempt int `json:"attempt"`
	// Response is the tool's output (cut to a bounded size), Failed whether
	// it was an error.
	Response string    `json:"response,omitempty"`
	Failed   bool      `json:"failed,omitempty"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	// Reported is set once a resumed session was told about the call.
	Reported bool `json:"reported,omitempty"`
}

func (r *Run) toolPath(id string) string {
	return filepath.Join(r.Dir, "tools", RunDirName(id)+".json")
}

// SaveTool writes a tool call's record, durably (fsync) before it returns.
func (r *Run) SaveTool(c ToolCall) error { return writeJSON(r.toolPath(c.ID), c) }

// Tools reads every tool call record of the run, in the order they started.
func (r *Run) Tools() ([]ToolCall, error) {
	entries, err := os.ReadDir(filepath.Join(r.Dir, "tools"))
	if err != nil {
		return nil, fmt.Errorf("read tool records: %w", err)
	}
	var out []ToolCall
	for _, e := range entries {
		var c ToolCall
		if _, err := readJSON(filepath.Join(r.Dir, "tools", e.Name()), &c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sortByStart(out)
	return out, nil
}

func sortByStart(cs []ToolCall) {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && cs[j].Started.Before(cs[j-1].Started); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// TranscriptDir is where the run's transcripts are mirrored, laid out as
// under the session's folder of projects (<session>.jsonl, and
// <session>/subagents/…).
func (r *Run) TranscriptDir() string { return filepath.Join(r.Dir, "transcript") }

// AppendTranscript appends lines to the mirror of the transcript rel (a
// path relative to the sessions folder), durably.
func (r *Run) AppendTranscript(rel string, lines []json.RawMessage) error {
	if filepath.IsAbs(rel) || strings.HasPrefix(filepath.Clean(rel), "..") {
		return fmt.Errorf("transcript mirror: %q is outside the sessions folder", rel)
	}
	path := filepath.Join(r.TranscriptDir(), rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("transcript mirror: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("transcript mirror: %w", err)
	}
	var buf []byte
	for _, l := range lines {
		buf = append(append(buf, l...), '\n')
	}
	_, err = f.Write(buf)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("transcript mirror %s: %w", path, err)
	}
	return nil
}

// RestoreTranscripts copies the mirrored transcripts into dir (a sessions
// folder), replacing what is there.
func (r *Run) RestoreTranscripts(dir string) error {
	src := r.TranscriptDir()
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == src {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("restore transcript: %w", err)
		}
		return os.WriteFile(dst, data, 0o600)
	})
}

// ResultPath is where the run's whole result is kept.
func (r *Run) ResultPath() string { return filepath.Join(r.Dir, "result.json") }

// SaveResult writes v as the run's result.
func (r *Run) SaveResult(v any) error { return writeJSON(r.ResultPath(), v) }

// Result reads the run's result into v; ok is false when there is none yet.
func (r *Run) Result(v any) (ok bool, err error) { return readJSON(r.ResultPath(), v) }

// writeJSON replaces path with v's JSON, whole and synced: written to a
// temporary file, synced, renamed over path.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

// RateLimit is the model API's rate limit as the fleet's workers share
// it: no worker sends a model request before NotBefore.
type RateLimit struct {
	NotBefore time.Time `json:"not_before"`
	// Worker and Status say whose response set it, and with what status.
	Worker string `json:"worker,omitempty"`
	Status int    `json:"status,omitempty"`
}

func (s *Store) rateLimitPath() string { return filepath.Join(s.Root, "ratelimit.json") }

// RateLimit reads the shared rate limit (zero when none was ever set).
func (s *Store) RateLimit() (RateLimit, error) {
	var rl RateLimit
	_, err := readJSON(s.rateLimitPath(), &rl)
	return rl, err
}

// ExtendRateLimit sets the shared rate limit to rl unless it already
// lasts longer. Two workers extending it at the same moment may leave the
// earlier of their times: the next refused request sets it again.
func (s *Store) ExtendRateLimit(rl RateLimit) error {
	if cur, err := s.RateLimit(); err == nil && !cur.NotBefore.Before(rl.NotBefore) {
		return nil
	}
	return writeJSON(s.rateLimitPath(), rl)
}
