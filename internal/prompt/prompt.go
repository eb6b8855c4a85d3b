// Package prompt assembles the system prompt: a short identity block, then
// the main prompt (tack's own, or the user's replacement), the environment
// facts, any appended text and the git status of the session's start. Prompt text lives in the embedded .md files
// beside this code. Nothing here changes within a session, so the assembled
// blocks can sit in the cached prefix.
package prompt

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/gitroot"
	"github.com/tackcode/tack/internal/llm"
)

//go:embed identity.md
var identity string

//go:embed system.md
var mainPrompt string

// Options shape the system prompt.
type Options struct {
	// Replace replaces tack's main prompt (--system-prompt).
	Replace string
	// ReplaceSet is true when Replace was given, even empty.
	ReplaceSet bool
	// Append is added last (--append-system-prompt).
	Append string
	// AutoMemory is the rendered auto memory (MEMORY.md), if any.
	AutoMemory string
	Env        Env
	// GitStatus is the git snapshot of the session's start (GitStatus),
	// sent last: it differs from one session to the next, so what comes
	// before it stays the same prefix.
	GitStatus string
}

// Env is what the model is told about where it runs.
type Env struct {
	Cwd       string
	IsGitRepo bool
	Platform  string // runtime.GOOS
	Shell     string
	OSVersion string
	Date      string // YYYY-MM-DD, fixed for the session
	Model     string
	ExtraDirs []string
}

// DetectEnv reads the environment facts for cwd. It runs no subprocess.
func DetectEnv(cwd string, now time.Time, getenv func(string) string) Env {
	return Env{
		Cwd:       cwd,
		IsGitRepo: InGitRepo(cwd),
		Platform:  runtime.GOOS,
		Shell:     filepath.Base(getenv("SHELL")),
		OSVersion: osVersion(),
		Date:      now.Format("2006-01-02"),
	}
}

// System returns the system blocks, in a fixed order: identity, main
// prompt, auto memory, environment, appended text, git status. Each part
// is its own block so that the parts never shift into each other.
func System(o Options) []llm.Block {
	blocks := []llm.Block{llm.Text(strings.TrimSpace(identity))}
	add := func(text string) {
		if text = strings.TrimSpace(text); text != "" {
			blocks = append(blocks, llm.Text(text))
		}
	}
	if o.ReplaceSet {
		add(o.Replace)
	} else {
		add(mainPrompt)
	}
	add(o.AutoMemory)
	if !o.ReplaceSet {
		add(o.Env.describe())
	}
	add(o.Append)
	add(o.GitStatus)
	return blocks
}

// Describe is the environment section of a system prompt.
func (e Env) Describe() string { return e.describe() }

func (e Env) describe() string {
	var b strings.Builder
	b.WriteString("# Environment\n")
	fmt.Fprintf(&b, "- Working directory: %s\n", e.Cwd)
	for _, d := range e.ExtraDirs {
		fmt.Fprintf(&b, "- Additional working directory: %s\n", d)
	}
	fmt.Fprintf(&b, "- Git repository: %s\n", yesNo(e.IsGitRepo))
	fmt.Fprintf(&b, "- Platform: %s\n", e.Platform)
	if e.OSVersion != "" {
		fmt.Fprintf(&b, "- OS version: %s\n", e.OSVersion)
	}
	if e.Shell != "" && e.Shell != "." {
		fmt.Fprintf(&b, "- Shell: %s\n", e.Shell)
	}
	fmt.Fprintf(&b, "- Today's date: %s\n", e.Date)
	if e.Model != "" {
		fmt.Fprintf(&b, "- Model: %s\n", e.Model)
	}
	return strings.TrimRight(b.String(), "\n")
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// InGitRepo says whether dir is in a git work tree: it or a parent holds
// .git.
func InGitRepo(dir string) bool { return gitroot.Find(dir) != "" }
