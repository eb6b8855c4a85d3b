package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/tackcode/tack/internal/runtime"
	"github.com/tackcode/tack/internal/session"
)

// SessionInfo describes a stored session.
type SessionInfo struct {
	ID string
	// Path is the transcript; "" for a session folder without one.
	Path string
	// Name is the custom title: what Options.Resume matches by name.
	Name string
	// Summary is what a listing shows: the title, else the last prompt,
	// else a summary record, else the first prompt.
	Summary     string
	Cwd         string
	GitBranch   string
	Tag         string
	FirstPrompt string
	LastPrompt  string
	Created     time.Time
	Modified    time.Time
	Size        int64
	// Messages counts the user and assistant messages. Transcripts over
	// 128 KiB are read only at the head and tail, and the count is then
	// estimated from them (MessagesEstimated).
	Messages          int
	MessagesEstimated bool
	// CostUSD and Model are what the session spent and last used, when it
	// recorded them.
	CostUSD float64
	Model   string
	// Hidden sessions are left out of ListSessions (a subagent's
	// transcript, a session without a transcript); PurgeSessions sees them.
	Hidden bool
}

// SessionsDir is the folder the sessions of opts.Cwd (the process's working
// directory by default) are stored in: ~/.claude/projects/ and the folder's
// path as a name, or the same under CLAUDE_CONFIG_DIR. A host keeps its own
// per-folder files (a prompt history…) beside them.
func SessionsDir(opts Options) (string, error) { return runtime.ProjectDir(opts.Cwd, opts.Env) }

// ListSessions lists the sessions of opts.Cwd (the process's working
// directory by default), newest first.
func ListSessions(opts Options) ([]SessionInfo, error) {
	dir, err := SessionsDir(opts)
	if err != nil {
		return nil, err
	}
	list, err := session.List(dir)
	return convert(list, func(in session.Info) SessionInfo { return SessionInfo(in) }), err
}

// SessionMessages returns the conversation of the stored session id of
// opts.Cwd as a resume gives it to the model: its messages in order, the
// summary of a compaction in place of what it replaced. An error wraps
// fs.ErrNotExist when the session has written no transcript (yet).
func SessionMessages(opts Options, id string) ([]MessageParam, error) {
	dir, err := SessionsDir(opts)
	if err != nil {
		return nil, err
	}
	t, err := session.LoadSession(dir, id)
	if err != nil {
		return nil, err
	}
	return convert(t.Messages, messageOf), nil
}

// PurgeSessions deletes the sessions of opts.Cwd last changed before
// cutoff (all of them when cutoff is zero) and returns their ids.
func PurgeSessions(opts Options, cutoff time.Time) ([]string, error) {
	dir, err := SessionsDir(opts)
	if err != nil {
		return nil, err
	}
	return session.Purge(dir, func(in session.Info) bool {
		return !cutoff.IsZero() && !in.Modified.Before(cutoff)
	})
}

// RenameSession names a stored session of opts.Cwd.
func RenameSession(opts Options, id, name string) error {
	dir, err := SessionsDir(opts)
	if err != nil {
		return err
	}
	return session.SetName(dir, id, name)
}

// SessionWorkflow returns the workflow record of the stored session of
// opts.Cwd that idOrName names (an id, or a name as Options.Resume takes
// it), as indented JSON: the record of seed 001, which validates against
// its JSON Schema (name, cwd, permission_mode, settings, mcp_config,
// resume, last_tool). A record that does not match the schema is an error
// naming the file and what is wrong; a session without a record gives an
// error wrapping fs.ErrNotExist.
func SessionWorkflow(opts Options, idOrName string) ([]byte, error) {
	dir, err := SessionsDir(opts)
	if err != nil {
		return nil, err
	}
	info, err := session.Resolve(dir, idOrName)
	if errors.Is(err, session.ErrNotFound) {
		return nil, fmt.Errorf("no session %q in this directory (tack sessions lists them): %w", idOrName, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	w, err := session.LoadWorkflow(dir, info.ID)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %s has no workflow record yet (one is written after its first prompt): %w", info.ID, err)
	}
	if err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode workflow record of %s: %w", info.ID, err)
	}
	return append(data, '\n'), nil
}

// WorkflowSchema is the JSON Schema every workflow record validates
// against: seed 001's, verbatim.
func WorkflowSchema() []byte {
	data, err := session.Schemas.ReadFile("schema/workflow.schema.json")
	if err != nil {
		panic("embedded workflow schema: " + err.Error()) // built into the binary
	}
	return data
}
