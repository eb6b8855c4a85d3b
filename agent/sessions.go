package agent

import (
	"time"

	"github.com/tackcode/tack/internal/runtime"
	"github.com/tackcode/tack/internal/session"
)

// SessionInfo describes a stored session.
type SessionInfo = session.Info

// ListSessions lists the sessions of opts.Cwd (the process's working
// directory by default), newest first.
func ListSessions(opts Options) ([]SessionInfo, error) {
	dir, err := runtime.ProjectDir(opts.Cwd, opts.Env)
	if err != nil {
		return nil, err
	}
	return session.List(dir)
}

// PurgeSessions deletes the sessions of opts.Cwd last changed before
// cutoff (all of them when cutoff is zero) and returns their ids.
func PurgeSessions(opts Options, cutoff time.Time) ([]string, error) {
	dir, err := runtime.ProjectDir(opts.Cwd, opts.Env)
	if err != nil {
		return nil, err
	}
	return session.Purge(dir, func(in session.Info) bool {
		return !cutoff.IsZero() && !in.Modified.Before(cutoff)
	})
}

// RenameSession names a stored session of opts.Cwd.
func RenameSession(opts Options, id, name string) error {
	dir, err := runtime.ProjectDir(opts.Cwd, opts.Env)
	if err != nil {
		return err
	}
	return session.SetName(dir, id, name)
}
