package agent

import (
	"os"
	"time"

	"github.com/tackcode/tack/internal/session"
)

// SessionInfo describes a stored session.
type SessionInfo = session.Info

// projectDirOf is the folder holding the sessions of opts' working directory.
func projectDirOf(opts Options) (string, error) {
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return "", err
	}
	getenv := func(k string) string {
		if v, ok := opts.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	return session.ProjectDir(session.ConfigDir(getenv), cwd, getenv), nil
}

// ListSessions lists the sessions of opts.Cwd (the process's working
// directory by default), newest first.
func ListSessions(opts Options) ([]SessionInfo, error) {
	dir, err := projectDirOf(opts)
	if err != nil {
		return nil, err
	}
	return session.List(dir)
}

// PurgeSessions deletes the sessions of opts.Cwd last changed before
// cutoff (all of them when cutoff is zero) and returns their ids.
func PurgeSessions(opts Options, cutoff time.Time) ([]string, error) {
	dir, err := projectDirOf(opts)
	if err != nil {
		return nil, err
	}
	return session.Purge(dir, func(in session.Info) bool {
		return !cutoff.IsZero() && !in.Modified.Before(cutoff)
	})
}

// RenameSession names a stored session of opts.Cwd.
func RenameSession(opts Options, id, name string) error {
	dir, err := projectDirOf(opts)
	if err != nil {
		return err
	}
	return session.SetName(dir, id, name)
}
