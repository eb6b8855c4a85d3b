package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/jsontree"
	"github.com/tackcode/tack/internal/session"
)

// This file is `tack project purge`: what tack (and Claude Code, whose
// files tack shares) keeps about one project, and its removal.

// The kinds of PurgeItem.
const (
	PurgeDir    = "dir"    // the project's folder of sessions
	PurgeConfig = "config" // its entry in ~/.claude.json
	PurgeFilter = "filter" // its lines in a shared file
)

// PurgeItem is one thing kept about a project.
type PurgeItem struct {
	Kind string
	// Path is the folder or file; Key, for PurgeConfig, the entry's key.
	Path, Key string
	// What says what it holds ("3 transcripts, prompt history, memory/").
	What string
}

// PurgeProject lists what is kept about the project at dir (made absolute;
// it need not exist any more) and, unless dryRun, removes it: the
// project's folder under <config dir>/projects (transcripts, workflow
// records, the prompt history, auto memory), its entry in ~/.claude.json,
// and its prompts in <config dir>/history.jsonl. It returns the project's
// path and the items, removed or to remove.
func PurgeProject(dir string, env map[string]string, dryRun bool) (string, []PurgeItem, error) {
	project, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("project %s: %w", dir, err)
	}
	getenv := optionsEnv(env)
	keys := []string{project}
	if real, err := filepath.EvalSymlinks(project); err == nil && real != project {
		keys = append(keys, real)
	}
	var items []PurgeItem
	for _, step := range []func(string, []string, func(string) string, bool) (*PurgeItem, error){
		purgeSessionsDir, purgeClaudeJSON, purgeSharedHistory,
	} {
		it, err := step(project, keys, getenv, dryRun)
		if err != nil {
			return project, items, err
		}
		if it != nil {
			items = append(items, *it)
		}
	}
	return project, items, nil
}

// purgeSessionsDir is the project's folder of sessions.
func purgeSessionsDir(project string, _ []string, getenv func(string) string, dryRun bool) (*PurgeItem, error) {
	dir := session.ProjectDir(session.ConfigDir(getenv), project, getenv)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("purge %s: %w", dir, err)
	}
	it := &PurgeItem{Kind: PurgeDir, Path: dir, What: describeSessionsDir(ents)}
	if dryRun {
		return it, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("purge %s: %w", dir, err)
	}
	return it, nil
}

// describeSessionsDir counts what a folder of sessions holds.
func describeSessionsDir(ents []fs.DirEntry) string {
	var transcripts, sessions int
	var parts []string
	others := 0
	for _, e := range ents {
		name := e.Name()
		switch {
		case !e.IsDir() && strings.HasSuffix(name, ".jsonl") && session.IsSessionID(strings.TrimSuffix(name, ".jsonl")):
			transcripts++
		case e.IsDir() && session.IsSessionID(name):
			sessions++
		case name == "prompt-history.jsonl" || name == "memory":
		default:
			others++
		}
	}
	parts = append(parts, fmt.Sprintf("%d transcripts", transcripts))
	if sessions > 0 {
		parts = append(parts, fmt.Sprintf("%d session folders (workflow records, tool results)", sessions))
	}
	for _, e := range ents {
		switch e.Name() {
		case "prompt-history.jsonl":
			parts = append(parts, "prompt history")
		case "memory":
			parts = append(parts, "auto memory (memory/)")
		}
	}
	if others > 0 {
		parts = append(parts, fmt.Sprintf("%d other files", others))
	}
	return strings.Join(parts, ", ")
}

// purgeClaudeJSON is the project's entry in ~/.claude.json: its trust,
// allowed tools, MCP servers and approvals.
func purgeClaudeJSON(_ string, keys []string, getenv func(string) string, dryRun bool) (*PurgeItem, error) {
	path, err := config.ClaudeJSONPath(getenv)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var found []string
	err = config.EditClaudeJSON(path, func(e *jsontree.Editor) (bool, error) {
		for _, k := range keys {
			n, err := e.Lookup([]string{"projects", k})
			if err != nil {
				return false, fmt.Errorf("%s: %w", path, err)
			}
			if n == nil {
				continue
			}
			found = append(found, k)
			if !dryRun {
				if _, err := e.Remove([]string{"projects", k}); err != nil {
					return false, fmt.Errorf("%s: %w", path, err)
				}
			}
		}
		return !dryRun && len(found) > 0, nil
	})
	if err != nil || len(found) == 0 {
		return nil, err
	}
	return &PurgeItem{Kind: PurgeConfig, Path: path, Key: strings.Join(found, ", "),
		What: "the project's entry (trust, allowed tools, MCP servers and their approvals)"}, nil
}

// purgeSharedHistory takes the project's prompts out of Claude Code's
// prompt history, <config dir>/history.jsonl, which tack reads with it.
func purgeSharedHistory(_ string, keys []string, getenv func(string) string, dryRun bool) (*PurgeItem, error) {
	path := filepath.Join(session.ConfigDir(getenv), "history.jsonl")
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("purge %s: %w", path, err)
	}
	var kept bytes.Buffer
	removed := 0
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var rec struct {
			Project string `json:"project"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Project != "" && slices.Contains(keys, rec.Project) {
			removed++
			continue
		}
		kept.Write(sc.Bytes())
		kept.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("purge %s: %w", path, err)
	}
	if removed == 0 {
		return nil, nil
	}
	it := &PurgeItem{Kind: PurgeFilter, Path: path, What: fmt.Sprintf("%d prompts typed in this project", removed)}
	if dryRun {
		return it, nil
	}
	mode := fs.FileMode(0o600)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := atomicfile.Write(path, kept.Bytes(), mode); err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	return it, nil
}
