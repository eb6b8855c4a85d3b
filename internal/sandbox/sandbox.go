// Package sandbox runs shell commands inside bubblewrap (bwrap) when the
// settings' "sandbox" says so: the whole filesystem read-only except the
// session's working directories, a private /tmp, and no network. A
// command the sandbox would break can be excluded by prefix
// (excludedCommands): it then runs outside, under the permission rules.
//
// Claude Code's sandbox settings are read as written; tack honours
// enabled, autoAllowBashIfSandboxed and excludedCommands, and cuts the
// network entirely (it runs no filtering proxy for network.allowedDomains).
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Settings is the settings' "sandbox" object.
type Settings struct {
	Enabled bool `json:"enabled"`
	// AutoAllowBashIfSandboxed (default true) runs sandboxed commands
	// without asking; deny and ask rules still hold.
	AutoAllowBashIfSandboxed *bool `json:"autoAllowBashIfSandboxed,omitempty"`
	// ExcludedCommands run outside the sandbox: a command whose text starts
	// with one of them ("docker", "git push").
	ExcludedCommands []string `json:"excludedCommands,omitempty"`
}

// Parse reads a "sandbox" value; an absent one is a disabled sandbox.
func Parse(raw json.RawMessage) (Settings, error) {
	var s Settings
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("sandbox settings: %w", err)
	}
	return s, nil
}

// AutoAllow reports whether sandboxed commands run without asking.
func (s Settings) AutoAllow() bool {
	return s.AutoAllowBashIfSandboxed == nil || *s.AutoAllowBashIfSandboxed
}

// Excluded reports whether command runs outside the sandbox.
func (s Settings) Excluded(command string) bool {
	c := strings.TrimSpace(command)
	for _, e := range s.ExcludedCommands {
		e = strings.TrimSpace(e)
		if e != "" && (c == e || strings.HasPrefix(c, e+" ")) {
			return true
		}
	}
	return false
}

// ErrNoBwrap is returned when the sandbox is enabled but bubblewrap is not
// installed: commands are then refused, never run unsandboxed.
var ErrNoBwrap = errors.New("the sandbox is enabled but bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap) or disable sandbox.enabled")

// Sandbox wraps the commands of one session.
type Sandbox struct {
	settings Settings
	bwrap    string
	// writable returns the directories commands may write (the session's
	// working directories, which may grow mid-session).
	writable func() []string
}

// New returns the sandbox of s, or nil when it is disabled. lookPath finds
// bwrap (nil: exec.LookPath).
func New(s Settings, writable func() []string, lookPath func(string) (string, error)) (*Sandbox, error) {
	if !s.Enabled {
		return nil, nil
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	bwrap, err := lookPath("bwrap")
	if err != nil {
		return nil, ErrNoBwrap
	}
	return &Sandbox{settings: s, bwrap: bwrap, writable: writable}, nil
}

// Settings returns what the sandbox was made from.
func (b *Sandbox) Settings() Settings { return b.settings }

// Covers reports whether command runs in the sandbox (it is not excluded).
func (b *Sandbox) Covers(command string) bool { return !b.settings.Excluded(command) }

// Wrap returns the argv that runs argv for command: inside bwrap, or argv
// itself for an excluded command. extra are more paths the command must be
// able to write (the shell's own bookkeeping files).
func (b *Sandbox) Wrap(command string, argv []string, extra ...string) []string {
	if !b.Covers(command) {
		return argv
	}
	out := []string{b.bwrap,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--unshare-net",
		"--die-with-parent",
	}
	for _, d := range append(b.writable(), extra...) {
		out = append(out, "--bind", d, d)
	}
	out = append(out, "--")
	return append(out, argv...)
}
