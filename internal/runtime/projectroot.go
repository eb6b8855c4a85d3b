package runtime

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// The project root. A session's tools work in its working directory, but
// its project scope — the project and local settings (rules, hooks, env),
// .mcp.json, the .claude/ folders of skills, commands and agents,
// CLAUDE_PROJECT_DIR and the workspace trust record — comes from
// one folder: the working directory, or the trusted checkout an SDK host
// names with Config.ProjectConfigRoot (--project-config-root), of which
// the working directory is a worktree. Then whatever the branch checked
// out in the worktree carries in its own .claude/ is not what runs, and
// command hooks run in the root. CLAUDE.md and transcripts stay the
// working directory's, as in Claude Code.

// place is where a session runs: cwd for its tools, root for its project
// scope. Every step that loads project-scoped configuration takes root.
type place struct {
	cwd, root string
}

// placeOf resolves cfg's working directory and project root, once.
func placeOf(cfg Config) (place, error) {
	cwd, err := workingDir(cfg.Cwd)
	if err != nil {
		return place{}, err
	}
	root, err := projectRoot(cfg.ProjectConfigRoot, cwd)
	if err != nil {
		return place{}, err
	}
	return place{cwd: cwd, root: root}, nil
}

// projectRoot checks the root a host named: an absolute path to a
// directory, symbolic links resolved; cwd when none was named. A relative
// path is refused rather than read against cwd, since cwd is the checkout
// the root exists to overrule.
func projectRoot(dir, cwd string) (string, error) {
	if dir == "" {
		return cwd, nil
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("--project-config-root %q must be an absolute path", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("--project-config-root: %w", err)
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("--project-config-root: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("--project-config-root %s is not a directory", dir)
	}
	return real, nil
}

// place is where the session runs.
func (s *Session) place() place { return place{cwd: s.cwd, root: s.root} }

// namedRoot is the project root when Config.ProjectConfigRoot named one,
// "" when it is the working directory.
func (s *Session) namedRoot() string {
	if s.cfg.ProjectConfigRoot == "" {
		return ""
	}
	return s.root
}

// mcpFiles are the MCP configuration files of pl: .mcp.json from the
// root, while the local scope (and the approvals of project servers) in
// ~/.claude.json stay under the working directory's key, as Claude Code
// keeps them.
func mcpFiles(getenv func(string) string, pl place) (mcpconfig.Files, error) {
	files, err := mcpconfig.DefaultFiles(getenv, pl.root)
	files.ProjectKey = filepath.Clean(pl.cwd)
	return files, err
}
