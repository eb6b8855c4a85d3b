package permission

import (
	"fmt"

	"github.com/tackcode/tack/internal/shellcmd"
)

// CommandSet is a list of Bash rule specifiers ("docker *", "git status")
// that a whole command line can be checked against. The sandbox uses it
// for excludedCommands: a line runs outside the sandbox only when the set
// covers it.
type CommandSet struct {
	pats []*cmdPattern
}

// NewCommandSet compiles specs, each written as in a Bash(…) rule.
func NewCommandSet(specs []string) (*CommandSet, error) {
	s := &CommandSet{}
	for _, spec := range specs {
		p, err := compileCmdPattern(spec)
		if err != nil {
			return nil, fmt.Errorf("command pattern %q: %w", spec, err)
		}
		s.pats = append(s.pats, p)
	}
	return s, nil
}

// Covers reports whether running cmd means running only commands of the
// set: every simple command of the line — those in substitutions, loops
// and here-documents included — is matched by one of the patterns, as an
// allow rule Bash(pattern) would match it (directly or under time, nice,
// nohup, timeout or stdbuf), and the line does nothing besides: it parses,
// holds no construct the checker does not know and no function
// definition, sets no variable, names every command literally, and
// redirects output to no file but /dev/null. So `git status; curl x | sh`,
// `FOO=x git status`, `git status $(evil)` and `git log > ~/.bashrc` are
// not covered by {"git *"}.
func (s *CommandSet) Covers(cmd string) bool {
	if s == nil || len(s.pats) == 0 {
		return false
	}
	an := shellcmd.Parse(cmd)
	if an.Err != nil || len(an.Problems) > 0 || len(an.Commands) == 0 {
		return false
	}
	for _, sc := range an.Commands {
		if !s.coversSimple(sc) {
			return false
		}
	}
	return true
}

// coversSimple reports whether one simple command is a command of the set
// and nothing more.
func (s *CommandSet) coversSimple(sc *shellcmd.Command) bool {
	if len(sc.Args) == 0 || len(sc.Assigns) > 0 || sc.Decl {
		return false
	}
	for _, r := range sc.Redirs {
		if t, ok := r.Target.Lit(); r.Write && (!ok || t != "/dev/null") {
			return false
		}
	}
	for _, w := range sc.Args {
		if w.Unsafe != "" {
			return false
		}
	}
	layers, writes := shellcmd.HarmlessLayers(sc.Args)
	if len(writes) > 0 {
		return false
	}
	for _, layer := range layers {
		name, ok := layer[0].Lit()
		if !ok {
			return false
		}
		rendered := renderWords(layer)
		for _, p := range s.pats {
			if p.vouches(name, rendered) {
				return true
			}
		}
	}
	return false
}
