package search

import (
	"github.com/tackcode/tack/internal/gitroot"

	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// vcsDirs are version-control metadata directories, never searched.
var vcsDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".bzr": true, ".jj": true}

// ignoreRules are the gitignore patterns in force in one directory, in
// increasing priority, with the path of that directory relative to the
// directory the patterns' domains are relative to (the repository root, or
// the search root outside a repository). Rules are immutable once built, so
// directories share their parent's rules until they add their own.
type ignoreRules struct {
	patterns []gitignore.Pattern
	matcher  gitignore.Matcher
	comps    []string
}

// ignored reports whether the entry name of the directory of r is ignored.
func (r *ignoreRules) ignored(name string, isDir bool) bool {
	if r.matcher == nil {
		return false
	}
	return r.matcher.Match(r.entry(name), isDir)
}

// entry returns the path components of the entry name of r's directory.
func (r *ignoreRules) entry(name string) []string {
	comps := make([]string, len(r.comps)+1)
	copy(comps, r.comps)
	comps[len(r.comps)] = name
	return comps
}

// with returns rules for the directory comps: r's patterns followed by
// own, which take precedence.
func (r *ignoreRules) with(comps []string, own []gitignore.Pattern) *ignoreRules {
	if len(own) == 0 {
		return &ignoreRules{patterns: r.patterns, matcher: r.matcher, comps: comps}
	}
	ps := make([]gitignore.Pattern, 0, len(r.patterns)+len(own))
	ps = append(append(ps, r.patterns...), own...)
	return &ignoreRules{patterns: ps, matcher: gitignore.NewMatcher(ps), comps: comps}
}

// rootRules returns the rules in force in the search root dir: those of
// .git/info/exclude and of every .gitignore from the enclosing repository's
// root down to dir's parent (dir's own file is read when it is walked).
// Outside a repository the rules start empty at dir. A root that those rules
// ignore was chosen on purpose, so it gets no inherited rules at all.
func rootRules(dir string) *ignoreRules {
	repo := gitroot.Find(dir)
	if repo == "" {
		return &ignoreRules{}
	}
	rel, err := filepath.Rel(repo, dir)
	if err != nil {
		return &ignoreRules{}
	}
	var comps []string
	if rel != "." {
		comps = strings.Split(filepath.ToSlash(rel), "/")
	}
	r := (&ignoreRules{}).with(nil, readIgnoreFile(filepath.Join(repo, ".git", "info", "exclude"), nil))
	for i := 0; i < len(comps); i++ {
		parent := filepath.Join(repo, filepath.Join(comps[:i]...))
		r = r.with(comps[:i], readIgnoreFile(filepath.Join(parent, ".gitignore"), comps[:i]))
		if r.matcher != nil && r.matcher.Match(comps[:i+1], true) {
			return &ignoreRules{comps: comps}
		}
	}
	return &ignoreRules{patterns: r.patterns, matcher: r.matcher, comps: comps}
}

// readIgnoreFile parses a gitignore-format file whose patterns apply below
// domain. A missing or unreadable file has no patterns.
func readIgnoreFile(path string, domain []string) []gitignore.Pattern {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		s := strings.TrimSuffix(string(line), "\r")
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(s, domain))
	}
	return ps
}
