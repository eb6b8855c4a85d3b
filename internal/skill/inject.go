package skill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/shell"
)

// RunFunc runs one injected command and returns what it printed. An error
// means it failed (a non-zero exit, a timeout); the output is still shown.
type RunFunc func(ctx context.Context, command string) (output string, err error)

// CheckFunc decides whether an injected command may run: nil lets it run;
// an error wrapping ErrNeedsApproval means no rule allows it, and the
// skill's allowed-tools may still; any other error denies it outright.
type CheckFunc func(command string) error

// ErrNeedsApproval is what a CheckFunc wraps when a command would need the
// user's approval: a skill's allowed-tools can grant it, since nobody is
// asked while a prompt is being prepared.
var ErrNeedsApproval = errors.New("needs approval")

// CheckerFunc checks commands with the session's permission checker, as a
// Bash call would be: allowed, asked (ErrNeedsApproval) or denied.
func CheckerFunc(c *permission.Checker) CheckFunc {
	return func(command string) error {
		d := c.Check(bashCall(command))
		switch d.Behavior {
		case permission.Allow:
			return nil
		case permission.Ask:
			return fmt.Errorf("%s: %w", d.Reason, ErrNeedsApproval)
		}
		return errors.New(d.Reason)
	}
}

func bashCall(command string) permission.Call {
	in, _ := json.Marshal(map[string]string{"command": command})
	return permission.Call{Tool: "Bash", Input: in}
}

// ShellRunner runs commands with a shell of their own started in cwd with
// env (nil: the process's), so that an injected "cd" does not move the
// session's shell. Standard error follows standard output.
func ShellRunner(cwd string, env []string) RunFunc { return ShellRunnerWith(cwd, env, nil) }

// ShellRunnerWith is ShellRunner with the shell's commands run through wrap
// (the session's sandbox); nil runs them as they are.
func ShellRunnerWith(cwd string, env []string, wrap shell.Wrapper) RunFunc {
	return func(ctx context.Context, command string) (string, error) {
		sh := shell.New(cwd, env)
		if wrap != nil {
			sh.SetWrapper(wrap)
		}
		out, err := sh.Run(ctx, command, shell.RunOptions{})
		if err != nil {
			return "", err
		}
		text := out.Stdout
		if out.Stderr != "" {
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += out.Stderr
		}
		switch {
		case out.Interrupted:
			return text, errors.New("interrupted")
		case out.TimedOut:
			return text, fmt.Errorf("timed out after %v", out.Timeout)
		case out.ExitCode != 0:
			return text, fmt.Errorf("exit code %d", out.ExitCode)
		}
		return text, nil
	}
}

// injection is one !`command` or ```! block of a prepared body.
type injection struct {
	from, to int // the bytes it replaces
	command  string
}

// findInjections finds the dynamic injections of t, leaving out markers
// that fall in filled-in values: inline !`command` (the "!" at the start
// of a line or after a blank) and fenced blocks opened by a line "```!"
// and closed by a line "```".
func findInjections(t text) []injection {
	s := t.s
	var out []injection
	for i := 0; i < len(s); i++ {
		atLineStart := i == 0 || s[i-1] == '\n'
		if atLineStart && strings.HasPrefix(s[i:], "```!") && !t.protected(i) {
			lineEnd := strings.IndexByte(s[i:], '\n')
			if lineEnd < 0 {
				break
			}
			if strings.TrimSpace(s[i+4:i+lineEnd]) != "" {
				continue // ```!lang or text after the marker: not a block we know
			}
			start := i + lineEnd + 1
			end, closeEnd := -1, -1
			for j := start; j <= len(s); {
				k := strings.IndexByte(s[j:], '\n')
				line := s[j:]
				if k >= 0 {
					line = s[j : j+k]
				}
				if strings.TrimSpace(line) == "```" {
					end, closeEnd = j, j+len(line)
					break
				}
				if k < 0 {
					break
				}
				j += k + 1
			}
			if end < 0 {
				continue // never closed: left as text
			}
			cmd := strings.TrimRight(s[start:end], "\n")
			if strings.TrimSpace(cmd) != "" {
				out = append(out, injection{from: i, to: closeEnd, command: cmd})
			}
			i = closeEnd - 1
			continue
		}
		if s[i] == '!' && i+1 < len(s) && s[i+1] == '`' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n') && !t.protected(i) {
			end := strings.IndexAny(s[i+2:], "`\n")
			if end <= 0 || s[i+2+end] != '`' {
				continue
			}
			cmd := s[i+2 : i+2+end]
			if strings.TrimSpace(cmd) == "" {
				continue
			}
			out = append(out, injection{from: i, to: i + 2 + end + 1, command: cmd})
			i += 2 + end
		}
	}
	return out
}
