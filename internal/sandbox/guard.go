package sandbox

import (
	"github.com/tackcode/tack/internal/gitroot"

	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// guard is a path inside a writable directory that stays read-only in the
// sandbox, because a write there becomes code run later outside it.
type guard struct {
	path string
	// dir: made as a directory when missing; else as a file. (An
	// existing guard is kept read-only whatever it is.)
	dir bool
	// content is what a missing file's stand-in holds: git refuses an
	// empty commondir, and reads "." as "this directory".
	content string
}

// guards are the protected paths of one command, with the directories
// that must be mount points so that no ancestor can be renamed away.
type guards struct {
	guards []guard
	// pins are directories between a writable directory and a guard,
	// parents first.
	pins []string
	// gitDirs are the git directories inside writable directories (the
	// Landlock backend keeps them read-only as a whole).
	gitDirs []string
}

// guardEnv is what the protected paths depend on besides the directories.
type guardEnv struct {
	home, xdgConfig, claudeConfig, gitGlobal string
	path                                     []string
	// nested lists the repositories below a working directory (nil:
	// none looked for).
	nested func(dir string) []string
}

// homeGuards are the files of a home directory that shells, git, ssh and
// Claude Code read and run by themselves.
var homeGuards = []guard{
	{path: ".bashrc"}, {path: ".bash_profile"}, {path: ".bash_login"}, {path: ".bash_logout"},
	{path: ".bash_aliases"}, {path: ".profile"}, {path: ".zshrc"}, {path: ".zshenv"},
	{path: ".zprofile"}, {path: ".zlogin"}, {path: ".zlogout"}, {path: ".gitconfig"},
	{path: ".claude.json"}, {path: ".claude", dir: true}, {path: ".ssh", dir: true},
	{path: ".config/git", dir: true}, {path: ".config/fish", dir: true},
}

// errSymlink explains why a protected path that is a link stops commands.
const errSymlink = "%s is a symbolic link, which the sandbox cannot keep read-only (a command could replace the link itself); sandboxed commands are refused while it is one: replace it by what it points to, or turn the sandbox off"

// findGuards lists the protected paths inside dirs (physical, absolute).
func findGuards(dirs []string, env guardEnv) (guards, error) {
	c := &guardCollector{dirs: dirs, env: env, seen: map[string]bool{}}
	for _, d := range dirs {
		c.add(guard{path: filepath.Join(d, ".claude"), dir: true})
		// Made as a directory when missing: git ignores an empty one, so
		// `git add -A` inside cannot commit the stand-in.
		c.add(guard{path: filepath.Join(d, ".mcp.json"), dir: true})
		if err := c.git(d); err != nil {
			return guards{}, err
		}
		if env.nested == nil {
			continue
		}
		// Repositories inside it (~/projects/*) run their hooks too when
		// the user works in them later.
		for _, top := range env.nested(d) {
			c.add(guard{path: filepath.Join(top, ".claude"), dir: true})
			if fi, err := os.Lstat(filepath.Join(top, ".mcp.json")); err == nil && !fi.IsDir() {
				c.add(guard{path: filepath.Join(top, ".mcp.json")})
			}
			if err := c.git(top); err != nil {
				return guards{}, err
			}
		}
	}
	if home := physical(env.home); home != "" && filepath.IsAbs(home) && withinAny(home, dirs) {
		for _, g := range homeGuards {
			c.add(guard{path: filepath.Join(home, g.path), dir: g.dir})
		}
		for _, p := range env.path {
			if filepath.IsAbs(p) {
				c.add(guard{path: physical(p), dir: true})
			}
		}
	}
	if env.claudeConfig != "" && filepath.IsAbs(env.claudeConfig) {
		c.add(guard{path: physical(env.claudeConfig), dir: true})
	}
	if c.err != nil {
		return guards{}, c.err
	}
	return c.result()
}

type guardCollector struct {
	dirs []string
	env  guardEnv
	seen map[string]bool
	out  []guard
	git_ []string
	err  error
}

// add records g when it lies inside a writable directory (elsewhere the
// whole filesystem is read-only anyway).
func (c *guardCollector) add(g guard) {
	g.path = filepath.Clean(g.path)
	if !withinAny(g.path, c.dirs) || c.seen[g.path] {
		return
	}
	c.seen[g.path] = true
	c.out = append(c.out, g)
}

// git adds the paths of the repository dir belongs to through which git
// runs code: its configuration (and what it includes), hooks, submodules'
// git directories and the files that point git elsewhere.
func (c *guardCollector) git(dir string) error {
	top, dotgit, found := findRepo(dir)
	if !found || top != dir {
		// A .git made at the top of dir would become the repository git
		// uses there.
		c.add(guard{path: filepath.Join(dir, ".git"), dir: true})
	}
	if !found {
		return nil
	}
	gitDir := dotgit
	fi, err := os.Lstat(dotgit)
	if err != nil {
		return nil
	}
	if fi.Mode().IsRegular() {
		// A linked worktree or a submodule checkout: .git names the git
		// directory.
		c.add(guard{path: dotgit})
		target, err := readPointer(dotgit, "gitdir: ")
		if err != nil {
			return err
		}
		if target == "" {
			return nil
		}
		gitDir = physical(resolveAt(top, target))
	}
	common := gitDir
	if rel, err := readPointer(filepath.Join(gitDir, "commondir"), ""); err != nil {
		return err
	} else if rel != "" {
		common = physical(resolveAt(gitDir, rel))
	}
	c.git_ = append(c.git_, gitDir, common)

	cfg, err := readGitConfig(filepath.Join(common, "config"))
	if err != nil {
		return err
	}
	worktreeConfig := strings.EqualFold(cfg.value("extensions", "worktreeConfig"), "true")
	c.add(guard{path: filepath.Join(common, "config")})
	c.add(guard{path: filepath.Join(common, "hooks"), dir: true})
	c.add(guard{path: filepath.Join(common, "modules"), dir: true})
	for _, d := range uniq(gitDir, common) {
		c.add(guard{path: filepath.Join(d, "commondir"), content: ".\n"})
		if worktreeConfig || exists(filepath.Join(d, "config.worktree")) {
			c.add(guard{path: filepath.Join(d, "config.worktree")})
		}
	}
	// The other linked worktrees' pointers to the common directory.
	if entries, err := os.ReadDir(filepath.Join(common, "worktrees")); err == nil {
		for _, e := range entries {
			wt := filepath.Join(common, "worktrees", e.Name())
			c.add(guard{path: filepath.Join(wt, "commondir"), content: ".\n"})
			if worktreeConfig || exists(filepath.Join(wt, "config.worktree")) {
				c.add(guard{path: filepath.Join(wt, "config.worktree")})
			}
		}
	}

	// core.hooksPath and included files, in every configuration git reads
	// for this repository.
	files := []string{filepath.Join(common, "config")}
	if worktreeConfig {
		files = append(files, filepath.Join(gitDir, "config.worktree"))
	}
	files = append(files, c.globalConfigs()...)
	return c.configs(top, files, 0)
}

// globalConfigs are the user's and the system's git configuration files.
func (c *guardCollector) globalConfigs() []string {
	var out []string
	if c.env.gitGlobal != "" {
		out = append(out, c.env.gitGlobal)
	} else {
		xdg := c.env.xdgConfig
		if xdg == "" && c.env.home != "" {
			xdg = filepath.Join(c.env.home, ".config")
		}
		if xdg != "" {
			out = append(out, filepath.Join(xdg, "git", "config"))
		}
		if c.env.home != "" {
			out = append(out, filepath.Join(c.env.home, ".gitconfig"))
		}
	}
	return append(out, "/etc/gitconfig")
}

// maxIncludeDepth bounds git's include chains, as git does.
const maxIncludeDepth = 10

// configs adds the hooks directories and included files the given
// configuration files name (following includes), top being the worktree
// that relative hooks paths are resolved against.
func (c *guardCollector) configs(top string, files []string, depth int) error {
	if depth > maxIncludeDepth {
		return nil
	}
	for _, f := range files {
		f = physical(f)
		cfg, err := readGitConfig(f)
		if err != nil {
			return err
		}
		for _, h := range cfg.values("core", "", "hooksPath") {
			if p := expandGitPath(h, top, c.env.home); p != "" {
				c.add(guard{path: physical(p), dir: true})
			}
		}
		var inc []string
		for _, p := range append(cfg.values("include", "", "path"), cfg.values("includeIf", "*", "path")...) {
			if p = expandGitPath(p, filepath.Dir(f), c.env.home); p != "" {
				p = physical(p)
				c.add(guard{path: p})
				inc = append(inc, p)
			}
		}
		if err := c.configs(top, inc, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// result checks the guards and orders them: no guard inside another, none
// a link, and their ancestors below the writable directory pinned.
func (c *guardCollector) result() (guards, error) {
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].path < c.out[j].path })
	var gs []guard
	for _, g := range c.out {
		covered := false
		for _, o := range gs {
			if within(g.path, o.path) {
				covered = true
			}
		}
		if covered {
			continue
		}
		if fi, err := os.Lstat(g.path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return guards{}, fmt.Errorf("sandbox: "+errSymlink, g.path)
		}
		gs = append(gs, g)
	}
	pinned := map[string]bool{}
	var pins []string
	for _, g := range gs {
		root := ""
		for _, d := range c.dirs {
			if within(g.path, d) && len(d) > len(root) {
				root = d
			}
		}
		var chain []string
		for p := filepath.Dir(g.path); within(p, root) && p != root; p = filepath.Dir(p) {
			chain = append(chain, p)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			p := chain[i]
			if pinned[p] {
				continue
			}
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return guards{}, fmt.Errorf("sandbox: "+errSymlink, p)
			}
			pinned[p] = true
			pins = append(pins, p)
		}
	}
	sort.Slice(pins, func(i, j int) bool { return len(pins[i]) < len(pins[j]) })
	var gitDirs []string
	for _, d := range c.git_ {
		if withinAny(d, c.dirs) && !contains(gitDirs, d) {
			gitDirs = append(gitDirs, d)
		}
	}
	return guards{guards: gs, pins: pins, gitDirs: gitDirs}, nil
}

// Bounds of the search for repositories inside a working directory.
const (
	nestedDepth = 2    // dir/a/.git and dir/a/b/.git
	nestedLimit = 4096 // directories looked into
)

// nestedRepos lists the worktree tops below dir, at most nestedDepth
// levels down, looking into at most nestedLimit directories (hidden ones
// and node_modules skipped; links not followed).
func nestedRepos(dir string) []string {
	var tops []string
	seen := 0
	level := []string{dir}
	for depth := 0; depth < nestedDepth && len(level) > 0; depth++ {
		var next []string
		for _, d := range level {
			entries, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range entries {
				name := e.Name()
				if !e.IsDir() || strings.HasPrefix(name, ".") || name == "node_modules" {
					continue
				}
				if seen++; seen > nestedLimit {
					return tops
				}
				p := filepath.Join(d, name)
				if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
					tops = append(tops, p)
				}
				next = append(next, p)
			}
		}
		level = next
	}
	return tops
}

// findRepo walks up from dir to the worktree top holding .git.
func findRepo(dir string) (top, dotgit string, found bool) {
	if top = gitroot.Find(dir); top == "" {
		return "", "", false
	}
	return top, filepath.Join(top, ".git"), true
}

// maxPointer bounds the pointer files read, as git does for .git files.
const maxPointer = 1 << 20

// readPointer reads a git pointer file (a .git file with prefix "gitdir: ",
// or commondir): the path it holds, "" when the file is absent or holds
// none. git strips trailing newlines only.
func readPointer(path, prefix string) (string, error) {
	// Non-blocking: a FIFO made there must not hang tack.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: %s: %w", path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", nil // git reads only regular files here
	}
	b := make([]byte, maxPointer+1)
	n, _ := f.Read(b)
	if n > maxPointer {
		return "", fmt.Errorf("sandbox: %s is larger than git reads; cannot tell which git directory it names", path)
	}
	b = bytes.TrimRight(b[:n], "\r\n")
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return "", nil
	}
	b = b[len(prefix):]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b), nil
}

// resolveAt makes p absolute against dir, without folding ".." (physical
// does that as the kernel would).
func resolveAt(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return dir + "/" + p
}

// physical is p as the kernel reaches it: symbolic links followed before
// each "..", for the longest part that exists; the rest folded.
func physical(p string) string {
	if p == "" {
		return ""
	}
	rest := ""
	cur := p
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(p)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// expandGitPath resolves a path from git configuration: "~/" is the home
// directory, a relative path is relative to base.
func expandGitPath(p, base, home string) string {
	switch {
	case p == "":
		return ""
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(p, "~"))
	case strings.HasPrefix(p, "~"):
		return "" // ~user: not a path the sandbox guesses
	case strings.HasPrefix(p, "%(prefix)/"):
		return ""
	case filepath.IsAbs(p):
		return p
	}
	return resolveAt(base, p)
}

// gitConfig is one parsed git configuration file.
type gitConfig struct{ c *gitconfig.Config }

// readGitConfig parses a git configuration file; a missing one is empty.
// A file git could read but the parser cannot stops commands: what it
// includes or where it puts hooks would be unknown.
func readGitConfig(path string) (gitConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) {
			return gitConfig{gitconfig.New()}, nil
		}
		return gitConfig{}, fmt.Errorf("sandbox: git configuration %s: %w", path, err)
	}
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(bytes.NewReader(b)).Decode(cfg); err != nil {
		return gitConfig{}, fmt.Errorf("sandbox: git configuration %s cannot be read (%v), so the hooks and files it names are unknown; fix it or turn the sandbox off", path, err)
	}
	return gitConfig{cfg}, nil
}

// values are every value of section[.sub].key ("*": any subsection),
// across repeated sections.
func (g gitConfig) values(section, sub, key string) []string {
	var out []string
	for _, s := range g.c.Sections {
		if !s.IsName(section) {
			continue
		}
		if sub == "" {
			out = append(out, s.Options.GetAll(key)...)
			continue
		}
		for _, ss := range s.Subsections {
			if sub == "*" || ss.IsName(sub) {
				out = append(out, ss.Options.GetAll(key)...)
			}
		}
	}
	return out
}

// value is the last value of section.key.
func (g gitConfig) value(section, key string) string {
	vs := g.values(section, "", key)
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
