// Package gitroot finds the git work tree a folder is in, as git discovers
// it: the nearest folder at or above it that holds a .git entry — a
// directory, or a file for linked worktrees and submodules — and the
// folders that work tree's repository lives in.
package gitroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Find returns the nearest folder at or above dir that holds a .git entry,
// or "" when none does. dir is taken as given: make it absolute and clean
// first for an answer about the file system rather than about the path.
func Find(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Dirs are the folders git keeps a work tree's repository in.
type Dirs struct {
	// Git holds what is the work tree's own: HEAD, the index.
	Git string
	// Common holds what its linked worktrees share: refs, objects,
	// config. It is Git but for a linked worktree.
	Common string
}

// Repository returns the repository folders of the work tree at root (as
// Find returns it): its .git folder, or the folder a .git file names
// ("gitdir: PATH", relative to root when not absolute), and that folder's
// commondir when it has one.
func Repository(root string) (Dirs, error) {
	dot := filepath.Join(root, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return Dirs{}, err
	}
	gitDir := dot
	if !fi.IsDir() {
		b, err := os.ReadFile(dot)
		if err != nil {
			return Dirs{}, err
		}
		target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
		if !ok || target == "" {
			return Dirs{}, fmt.Errorf("%s: not a gitdir file", dot)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(root, target)
		}
		gitDir = filepath.Clean(target)
	}
	d := Dirs{Git: gitDir, Common: gitDir}
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	switch {
	case err == nil:
		common := strings.TrimRight(string(b), "\r\n")
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		d.Common = filepath.Clean(common)
	case !errors.Is(err, fs.ErrNotExist):
		return Dirs{}, err
	}
	return d, nil
}
