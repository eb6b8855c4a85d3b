package prompt

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

//go:embed gitstatus.md
var gitStatusText string

// GitStatusTimeout bounds the git commands of GitStatus together: a slow
// repository costs the session's start this much at most, and its prompt
// goes without the status.
const GitStatusTimeout = 2 * time.Second

// maxStatusBytes is where a long `git status --short` is cut.
const maxStatusBytes = 2000

// gitQuery is one git command of the snapshot.
type gitQuery struct {
	args []string
	out  string
	err  error
}

// GitStatus is the git section of the system prompt for the repository
// holding dir: the current and main branches, a short status (cut when
// long) and the last five commits. It is "" when git is not installed,
// dir is in no repository, or git did not answer within GitStatusTimeout.
// The commands take no lock on the repository (--no-optional-locks), so a
// session starting beside a running git command does not disturb it.
func GitStatus(ctx context.Context, dir string) string {
	if _, err := exec.LookPath("git"); err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, GitStatusTimeout)
	defer cancel()
	// Up to three commands, run together: the status with its branch
	// header (## BRANCH...UPSTREAM), the log, and the candidates for the
	// main branch when the repository's files do not tell them.
	status := &gitQuery{args: []string{"status", "--short", "--branch"}}
	log := &gitQuery{args: []string{"log", "--oneline", "-n", "5"}}
	refs := &gitQuery{args: append([]string{"for-each-ref", "--format=%(refname)%09%(symref)"}, mainRefs...)}
	queries := []*gitQuery{status, log}
	if out, ok := readMainRefs(dir, os.Getenv); ok {
		refs.out = out
	} else {
		queries = append(queries, refs)
	}
	var wg sync.WaitGroup
	for _, q := range queries {
		wg.Go(func() { q.out, q.err = runGit(ctx, dir, q.args...) })
	}
	wg.Wait()
	if status.err != nil {
		return ""
	}
	current, short := splitBranch(status.out)
	commits := strings.TrimSpace(log.out)
	if log.err != nil || commits == "" {
		commits = "(no commits yet)"
	}
	return strings.TrimSpace(fmt.Sprintf(gitStatusText, current, mainBranch(refs.out, current), shortStatus(short), commits))
}

// splitBranch takes the branch header off `git status --short --branch`:
// "## main...origin/main [ahead 1]", "## No commits yet on main", or
// "## HEAD (no branch)" when detached. It returns the current branch and
// the status lines.
func splitBranch(out string) (branch, rest string) {
	head, rest, _ := strings.Cut(out, "\n")
	head, ok := strings.CutPrefix(head, "## ")
	if !ok {
		return "(detached HEAD)", out
	}
	for _, p := range []string{"No commits yet on ", "Initial commit on "} {
		head = strings.TrimPrefix(head, p)
	}
	if name, _, found := strings.Cut(head, "..."); found {
		head = name
	} else if name, _, found := strings.Cut(head, " ["); found {
		head = name
	}
	if head == "" || strings.HasPrefix(head, "HEAD (") {
		return "(detached HEAD)", rest
	}
	return head, rest
}

// runGit runs git in dir and returns its standard output.
func runGit(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-optional-locks", "-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// mainBranch picks the main branch from for-each-ref's lines: what
// origin/HEAD points to, else main, else master, else the current branch.
func mainBranch(refs, current string) string {
	have := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(refs), "\n") {
		name, target, _ := strings.Cut(line, "\t")
		have[name] = target
	}
	if t := have["refs/remotes/origin/HEAD"]; t != "" {
		return strings.TrimPrefix(t, "refs/remotes/origin/")
	}
	for _, b := range []string{"main", "master"} {
		if _, ok := have["refs/heads/"+b]; ok {
			return b
		}
	}
	return current
}

// shortStatus is `git status --short`, cut at a line boundary when long.
func shortStatus(out string) string {
	out = strings.TrimRight(out, "\n")
	if out == "" {
		return "(clean)"
	}
	if len(out) <= maxStatusBytes {
		return out
	}
	cut := strings.LastIndexByte(out[:maxStatusBytes], '\n')
	if cut < 0 {
		cut = maxStatusBytes
	}
	return out[:cut] + fmt.Sprintf("\n… (cut: %d more lines; run git status for all of them)", strings.Count(out[cut:], "\n"))
}
