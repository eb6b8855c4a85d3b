package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/watch"
)

// File checkpoints: with Config.FileCheckpointing (or
// CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING, which the Agent SDK sets for
// enableFileCheckpointing), the first time a prompt's Edit, Write or
// NotebookEdit touches a file, the file as it was is kept, so that
// RewindFiles can put every file back as it was before that prompt. Shell
// commands' changes are not tracked, as in Claude Code.

// truthy reads a boolean environment variable as Claude Code does.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// RewindResult says what RewindFiles did (or, for a dry run, would do).
type RewindResult struct {
	CanRewind    bool     `json:"canRewind"`
	Error        string   `json:"error,omitempty"`
	FilesChanged []string `json:"filesChanged,omitempty"`
	Insertions   int      `json:"insertions"`
	Deletions    int      `json:"deletions"`
}

// snapshot is a file as it was before a prompt changed it.
type snapshot struct {
	existed bool
	data    []byte
	mode    fs.FileMode
}

// checkpoint is what one prompt's file tools found before changing files.
type checkpoint struct {
	messageID string
	files     map[string]snapshot
}

type checkpoints struct {
	// writes records the files a rewind restores as the session's own.
	writes *watch.Writes

	mu   sync.Mutex
	list []*checkpoint
}

// begin opens the checkpoint of the prompt whose user message is id.
func (c *checkpoints) begin(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, &checkpoint{messageID: id, files: map[string]snapshot{}})
}

// keep records path as it is now, unless the current prompt already did.
func (c *checkpoints) keep(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) == 0 {
		return
	}
	cur := c.list[len(c.list)-1]
	if _, ok := cur.files[path]; ok {
		return
	}
	snap := snapshot{}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		if data, err := os.ReadFile(path); err == nil {
			snap = snapshot{existed: true, data: data, mode: fi.Mode().Perm()}
		}
	}
	cur.files[path] = snap
}

// rewind puts the files the prompts from messageID on changed back as they
// were before it; dryRun only says what would change.
func (c *checkpoints) rewind(messageID string, dryRun bool) RewindResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := slices.IndexFunc(c.list, func(cp *checkpoint) bool { return cp.messageID == messageID })
	if at < 0 {
		return RewindResult{Error: fmt.Sprintf("no file checkpoint for user message %s", messageID)}
	}
	// The earliest snapshot of each file from that prompt on is its state
	// before the prompt.
	before := map[string]snapshot{}
	for _, cp := range c.list[at:] {
		for path, snap := range cp.files {
			if _, ok := before[path]; !ok {
				before[path] = snap
			}
		}
	}
	res := RewindResult{CanRewind: true}
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(before)) {
		snap := before[path]
		now, err := os.ReadFile(path)
		exists := err == nil
		if exists == snap.existed && string(now) == string(snap.data) {
			continue
		}
		res.FilesChanged = append(res.FilesChanged, path)
		ins, del := lineChanges(string(now), string(snap.data))
		res.Insertions += ins
		res.Deletions += del
		if dryRun {
			continue
		}
		if !snap.existed {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := c.writes.Do(path, func() error { return restoreFile(path, snap) }); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		res.CanRewind = false
		res.Error = errors.Join(errs...).Error()
		return res
	}
	if !dryRun {
		c.list = c.list[:at]
	}
	return res
}

// restoreFile writes a snapshot back through a temporary file, so that an
// interruption never leaves half a file.
func restoreFile(path string, snap snapshot) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	if err := atomicfile.Write(path, snap.data, snap.mode); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

// lineChanges counts the lines a rewind from now to then adds and removes
// (a multiset difference of lines: enough for the summary).
func lineChanges(now, then string) (insertions, deletions int) {
	count := map[string]int{}
	for _, l := range splitLines(now) {
		count[l]--
	}
	for _, l := range splitLines(then) {
		count[l]++
	}
	for _, n := range count {
		if n > 0 {
			insertions += n
		} else {
			deletions -= n
		}
	}
	return
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// checkpointed wraps a file tool so that each file it is about to change
// is kept first.
type checkpointed struct {
	tool.Tool
	cps *checkpoints
}

func (t checkpointed) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	if json.Unmarshal(input, &in) == nil {
		if p := firstNonEmpty(in.FilePath, in.NotebookPath); p != "" {
			if !filepath.IsAbs(p) {
				p = filepath.Join(env.Cwd(), p)
			}
			t.cps.keep(filepath.Clean(p))
		}
	}
	return t.Tool.Run(ctx, env, input)
}

// withCheckpoints wraps the file-changing tools of tools.
func withCheckpoints(tools []tool.Tool, cps *checkpoints) []tool.Tool {
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		switch t.Name() {
		case "Edit", "Write", "NotebookEdit":
			out[i] = checkpointed{Tool: t, cps: cps}
		default:
			out[i] = t
		}
	}
	return out
}
