package extension

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
)

// maxDefinitionSize bounds what is read of one definition file: a skill is
// a few kilobytes, and a mistaken file should not pull a gigabyte in.
const maxDefinitionSize = 4 << 20

// readDefinition reads one definition file.
func readDefinition(path string) ([]byte, *config.Error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &config.Error{Source: config.Source{Path: path}, Msg: "not a regular file"}
	}
	if fi.Size() > maxDefinitionSize {
		return nil, &config.Error{Source: config.Source{Path: path}, Msg: fmt.Sprintf("%d bytes is too large for a definition file (at most %d)", fi.Size(), maxDefinitionSize)}
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	return src, nil
}

// unreadable is the problem of a definition, or a folder of them, that
// os.Stat or reading failed on with err. A symbolic link to nothing says
// where it points, since "no such file" about a file the user can see in
// a listing is a puzzle.
func unreadable(path string, err error) *config.Error {
	if errors.Is(err, fs.ErrNotExist) {
		if target, lerr := os.Readlink(path); lerr == nil {
			return &config.Error{Source: config.Source{Path: path}, Msg: fmt.Sprintf("cannot read: it is a symbolic link to %s, which does not exist", target)}
		}
	}
	return &config.Error{Source: config.Source{Path: path}, Msg: "cannot read", Err: unwrapPath(err)}
}

// maxNesting is how deep commands and agents are looked for below their
// folder: deeper than anyone namespaces them, and a bound on a link loop.
const maxNesting = 8

func tooDeep(dir string) *config.Error {
	return &config.Error{Source: config.Source{Path: dir}, Msg: fmt.Sprintf("not read: more than %d folders deep (a symbolic link loop?)", maxNesting)}
}

func readSkillFile(path, name string, kind Kind, source Source, pluginRoot string) (*Skill, []*config.Error, *config.Error) {
	src, err := readDefinition(path)
	if err != nil {
		return nil, nil, err
	}
	source.Path = path
	return parseSkill(src, path, name, kind, source, pluginRoot)
}

// entries lists dir sorted by name; a missing folder has none.
func entries(dir string) ([]fs.DirEntry, *config.Error) {
	list, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || isNotDir(err) {
			return nil, nil
		}
		return nil, &config.Error{Source: config.Source{Path: dir}, Msg: "cannot list the folder", Err: unwrapPath(err)}
	}
	return list, nil
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// isDir follows symbolic links, so that a linked skill folder counts.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// scanSkills reads dir/NAME/SKILL.md for every NAME.
func scanSkills(dir, prefix string, source Source, pluginRoot string) ([]*Skill, []*config.Error) {
	list, lerr := entries(dir)
	if lerr != nil {
		return nil, []*config.Error{lerr}
	}
	var out []*Skill
	var probs []*config.Error
	for _, e := range list {
		sub := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !isDir(sub) {
			if _, err := os.Stat(sub); err != nil {
				// A link to a skill folder that is not there, or a folder
				// that cannot be looked at: a skill the user expects.
				probs = append(probs, unreadable(sub, err))
			}
			continue
		}
		path := filepath.Join(sub, "SKILL.md")
		if _, err := os.Lstat(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				probs = append(probs, unreadable(path, err))
			}
			continue // a folder of supporting files, not a skill
		}
		if !validName().MatchString(e.Name()) {
			probs = append(probs, &config.Error{Source: config.Source{Path: path}, Msg: fmt.Sprintf("invalid skill folder name %q: use letters, digits, '-', '_' and '.'", e.Name())})
			continue
		}
		s, w, err := readSkillFile(path, prefix+e.Name(), KindSkill, source, pluginRoot)
		probs = appendProblems(probs, w, err)
		if s != nil {
			out = append(out, s)
		}
	}
	return out, probs
}

// scanCommands reads dir/**/*.md as commands; a subfolder namespaces the
// commands in it (commands/git/commit.md is git:commit).
func scanCommands(dir, prefix string, source Source, pluginRoot string) ([]*Skill, []*config.Error) {
	var out []*Skill
	var probs []*config.Error
	var walk func(d string, ns []string, depth int)
	walk = func(d string, ns []string, depth int) {
		if depth > maxNesting {
			probs = append(probs, tooDeep(d))
			return
		}
		list, lerr := entries(d)
		if lerr != nil {
			probs = append(probs, lerr)
			return
		}
		for _, e := range list {
			name := e.Name()
			p := filepath.Join(d, name)
			if strings.HasPrefix(name, ".") {
				continue
			}
			if isDir(p) {
				walk(p, append(slices.Clone(ns), name), depth+1)
				continue
			}
			if !strings.HasSuffix(name, ".md") {
				continue
			}
			base := strings.TrimSuffix(name, ".md")
			if !validName().MatchString(base) {
				probs = append(probs, &config.Error{Source: config.Source{Path: p}, Msg: fmt.Sprintf("invalid command file name %q: use letters, digits, '-', '_' and '.'", name)})
				continue
			}
			full := prefix + strings.Join(append(slices.Clone(ns), base), ":")
			s, w, err := readSkillFile(p, full, KindCommand, source, pluginRoot)
			probs = appendProblems(probs, w, err)
			if s != nil {
				out = append(out, s)
			}
		}
	}
	walk(dir, nil, 0)
	return out, probs
}

// scanAgents reads dir/*.md (and subfolders) as agents.
func (ap agentParser) scanAgents(dir string, source Source, prefix string) ([]*Agent, []*config.Error) {
	var out []*Agent
	var probs []*config.Error
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		if depth > maxNesting {
			probs = append(probs, tooDeep(d))
			return
		}
		list, lerr := entries(d)
		if lerr != nil {
			probs = append(probs, lerr)
			return
		}
		for _, e := range list {
			p := filepath.Join(d, e.Name())
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if isDir(p) {
				walk(p, depth+1)
				continue
			}
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			src, err := readDefinition(p)
			if err != nil {
				probs = append(probs, err)
				continue
			}
			s := source
			s.Path = p
			a, w, perr := ap.parseAgentFile(src, p, s, prefix)
			probs = appendProblems(probs, w, perr)
			if a != nil {
				out = append(out, a)
			}
		}
	}
	walk(dir, 0)
	return out, probs
}
