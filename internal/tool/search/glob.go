package search

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/tackcode/tack/internal/tool"
)

const globName = "Glob"

// globLimit caps the number of paths Glob returns.
const globLimit = 100

//go:embed glob.md
var globDescription string

const globSchema = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Glob pattern, e.g. \"**/*.go\" or \"src/**/*.{ts,tsx}\""},` +
	`"path":{"type":"string","description":"Directory to search in; defaults to the working directory"}},` +
	`"required":["pattern"],"additionalProperties":false}`

type globTool struct{}

func (globTool) Name() string                  { return globName }
func (globTool) Description() string           { return globDescription }
func (globTool) InputSchema() json.RawMessage  { return json.RawMessage(globSchema) }
func (globTool) ReadOnly(json.RawMessage) bool { return true }

// globInput is Glob's input as the model sends it.
type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

// GlobResult is Glob's structured result.
type GlobResult struct {
	Filenames  []string `json:"filenames"`
	DurationMs int64    `json:"durationMs"`
	NumFiles   int      `json:"numFiles"`
	Truncated  bool     `json:"truncated"`
	// TotalMatches counts every file that matched, shown or not.
	TotalMatches int `json:"totalMatches"`
	// CountIsComplete is always true: tack counts every match.
	CountIsComplete bool `json:"countIsComplete"`
}

func (globTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	start := time.Now()
	var in globInput
	if err := tool.Decode(globName, input, &in); err != nil {
		return tool.Result{}, err
	}
	base := env.Abs(in.Path)
	st, err := os.Stat(base)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return tool.Result{}, tool.BadInput(globName, "path does not exist: %s", base)
	case err != nil:
		return tool.Result{}, fmt.Errorf("glob: %w", err)
	case !st.IsDir():
		return tool.Result{}, tool.BadInput(globName, "path is not a directory: %s", base)
	}

	// The pattern's leading literal directories become part of the base,
	// so only that subtree is walked; an absolute pattern replaces path.
	dir, pattern := doublestar.SplitPattern(filepath.ToSlash(in.Pattern))
	if filepath.IsAbs(in.Pattern) {
		base = filepath.Clean(filepath.FromSlash(dir))
	} else if dir != "." {
		base = filepath.Join(base, filepath.FromSlash(dir))
	}
	if !doublestar.ValidatePattern(pattern) {
		return tool.Result{}, tool.BadInput(globName, "invalid glob pattern %q", in.Pattern)
	}

	paths, err := globFiles(ctx, base, pattern)
	if err != nil {
		return tool.Result{}, err
	}
	if env.ReadDenied != nil {
		paths = slices.DeleteFunc(paths, env.ReadDenied)
	}
	res := GlobResult{Filenames: paths, NumFiles: len(paths), TotalMatches: len(paths), CountIsComplete: true}
	var text string
	switch {
	case len(paths) == 0:
		text = "No files found"
	case len(paths) > globLimit:
		res.Filenames, res.NumFiles, res.Truncated = paths[:globLimit], globLimit, true
		text = strings.Join(res.Filenames, "\n") + fmt.Sprintf(
			"\n\n[Results truncated: showing the %d most recently modified of %d files. Use a more specific pattern or path.]", globLimit, len(paths))
	default:
		text = strings.Join(paths, "\n")
	}
	res.DurationMs = time.Since(start).Milliseconds()
	return tool.TextResult(text, res), nil
}

// globFiles returns the absolute paths of the files below base matching
// pattern (relative to base, forward slashes), newest first.
func globFiles(ctx context.Context, base, pattern string) ([]string, error) {
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		return nil, nil // the pattern's directory part names nothing
	}
	type hit struct {
		path string
		mod  time.Time
	}
	o := walkOptions{
		root:     base,
		rules:    rootRules(base),
		workers:  defaultWorkers(),
		keepFile: func(rel, _ string) bool { return doublestar.MatchUnvalidated(pattern, rel) },
	}
	if !strings.Contains(pattern, "**") {
		o.maxDepth = strings.Count(pattern, "/") + 1
	}
	found := make([][]hit, o.workers)
	err := walk(ctx, o, func(w int, path string) {
		h := hit{path: path}
		if st, err := os.Lstat(path); err == nil {
			h.mod = st.ModTime()
		}
		found[w] = append(found[w], h)
	})
	if err != nil {
		return nil, err
	}
	hits := slices.Concat(found...)
	slices.SortFunc(hits, func(a, b hit) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return comparePaths(a.path, b.path)
	})
	paths := make([]string, len(hits))
	for i, h := range hits {
		paths[i] = h.path
	}
	return paths, nil
}
