// Package gitroot finds the git work tree a folder is in, as git discovers
// it: the nearest folder at or above it that holds a .git entry — a
// directory, or a file for linked worktrees and submodules.
package gitroot

import (
	"os"
	"path/filepath"
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
