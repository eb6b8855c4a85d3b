// Package shell runs shell commands for a session: a persistent working
// directory, timeouts, process-group kills, bounded output and background jobs.
package shell

import "sync"

// Shell is one session's shell state.
type Shell struct {
	mu  sync.Mutex
	cwd string
	env []string
}

// New returns a shell starting in cwd; env is the environment for commands
// (nil means the process environment).
func New(cwd string, env []string) *Shell { return &Shell{cwd: cwd, env: env} }

// Cwd is the current working directory.
func (s *Shell) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}
