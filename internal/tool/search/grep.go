package search

import (
	"bytes"
	"container/heap"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tackcode/tack/internal/tool"
)

const grepName = "Grep"

// defaultHeadLimit caps output when head_limit is not given.
const defaultHeadLimit = 250

//go:embed grep.md
var grepDescription string

const grepSchema = `{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Regular expression to search for"},` +
	`"path":{"type":"string","description":"File or directory to search (default: the working directory)"},` +
	`"glob":{"type":"string","description":"Only files matching these globs, e.g. \"*.go\", \"**/*.{ts,tsx}\""},` +
	`"output_mode":{"type":"string","enum":["content","files_with_matches","count"],"description":"Default files_with_matches"},` +
	`"-B":{"type":"number","description":"Context lines before each match (content mode)"},` +
	`"-A":{"type":"number","description":"Context lines after each match (content mode)"},` +
	`"-C":{"type":"number","description":"Context lines around each match (content mode)"},` +
	`"context":{"type":"number","description":"Same as -C"},` +
	`"-n":{"type":"boolean","description":"Line numbers (content mode; default true)"},` +
	`"-i":{"type":"boolean","description":"Ignore case"},` +
	`"-o":{"type":"boolean","description":"Only the matched text"},` +
	`"type":{"type":"string","description":"ripgrep file type, e.g. go, py, ts, rust"},` +
	`"head_limit":{"type":"number","description":"At most this many lines or entries (default 250; 0: all)"},` +
	`"offset":{"type":"number","description":"Skip this many lines or entries first"},` +
	`"multiline":{"type":"boolean","description":"Let matches span lines; . matches newlines"}},` +
	`"required":["pattern"],"additionalProperties":false}`

type grepTool struct{}

func (grepTool) Name() string                  { return grepName }
func (grepTool) Description() string           { return grepDescription }
func (grepTool) InputSchema() json.RawMessage  { return json.RawMessage(grepSchema) }
func (grepTool) ReadOnly(json.RawMessage) bool { return true }
func (grepTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in grepInput
	if err := tool.Decode(grepName, input, &in); err != nil {
		return tool.Result{}, err
	}
	req, err := in.request(env)
	if err != nil {
		return tool.Result{}, err
	}
	req.denied = env.ReadDenied
	out, err := runGrep(ctx, req)
	if err != nil {
		return tool.Result{}, err
	}
	text, structured := out.render(req)
	return tool.TextResult(text, structured), nil
}

// grepInput is Grep's input as the model sends it.
type grepInput struct {
	Pattern      string   `json:"pattern"`
	Path         string   `json:"path"`
	Glob         string   `json:"glob"`
	OutputMode   string   `json:"output_mode"`
	Before       *float64 `json:"-B"`
	After        *float64 `json:"-A"`
	Context      *float64 `json:"-C"`
	ContextAlias *float64 `json:"context"`
	LineNumbers  *bool    `json:"-n"`
	IgnoreCase   bool     `json:"-i"`
	OnlyMatching bool     `json:"-o"`
	Type         string   `json:"type"`
	HeadLimit    *float64 `json:"head_limit"`
	Offset       *float64 `json:"offset"`
	Multiline    bool     `json:"multiline"`
}

// grepRequest is a checked Grep call, ready to run.
type grepRequest struct {
	opts    grepOptions
	m       *matcher
	root    string // absolute file or directory
	rootDir bool
	filter  *fileFilter
	// display names a found file for the model.
	display func(path string) string
	limit   int // 0: no limit
	offset  int
	workers int // 0: default
	bufSize int // 0: default
	// denied reports a file that permission rules forbid reading; its
	// matches are dropped. Nil: none. Checked only for files that matched,
	// so that rules cost nothing on the walk.
	denied func(path string) bool
}

// request checks the input and resolves it against env.
func (in *grepInput) request(env *tool.Env) (*grepRequest, error) {
	req := &grepRequest{opts: grepOptions{mode: in.OutputMode}}
	switch in.OutputMode {
	case "":
		req.opts.mode = modeFiles
	case modeContent, modeFiles, modeCount:
	default:
		return nil, tool.BadInput(grepName, "output_mode must be content, files_with_matches or count, not %q", in.OutputMode)
	}
	var err error
	num := func(name string, v *float64, def int) int {
		if err != nil || v == nil {
			return def
		}
		if *v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0) {
			err = tool.BadInput(grepName, "%s must be a non-negative number, not %v", name, *v)
			return def
		}
		return int(min(*v, math.MaxInt32))
	}
	ctxLines := num("context", in.ContextAlias, 0)
	ctxLines = num("-C", in.Context, ctxLines)
	req.opts.before = num("-B", in.Before, ctxLines)
	req.opts.after = num("-A", in.After, ctxLines)
	req.limit = num("head_limit", in.HeadLimit, defaultHeadLimit)
	req.offset = num("offset", in.Offset, 0)
	if err != nil {
		return nil, err
	}
	if req.opts.mode != modeContent {
		req.opts.before, req.opts.after = 0, 0
	}
	req.opts.lineNumbers = in.LineNumbers == nil || *in.LineNumbers
	req.opts.onlyMatching = in.OnlyMatching
	if req.limit > 0 {
		req.opts.budget = req.offset + req.limit
	}

	req.m, err = compilePattern(in.Pattern, in.IgnoreCase, in.Multiline)
	if err != nil {
		return nil, tool.BadInput(grepName, "invalid pattern: %v", err)
	}
	req.filter, err = newFileFilter(in.Glob, in.Type)
	if err != nil {
		return nil, tool.BadInput(grepName, "%v", err)
	}

	req.root = env.Abs(in.Path)
	st, err := os.Stat(req.root)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, tool.BadInput(grepName, "path does not exist: %s", req.root)
	case err != nil:
		return nil, fmt.Errorf("grep: %w", err)
	case st.IsDir():
		req.rootDir = true
	case !st.Mode().IsRegular():
		return nil, tool.BadInput(grepName, "not a regular file or directory: %s", req.root)
	}
	req.display = displayFunc(in.Path, req.root, req.rootDir)
	return req, nil
}

// displayFunc returns how found files are named in the output: absolute
// when the model gave an absolute path (or a ~ one), relative to the
// working directory otherwise, the way ripgrep prints what it is given.
func displayFunc(given, root string, rootDir bool) func(string) string {
	if filepath.IsAbs(given) || strings.HasPrefix(given, "~") {
		return func(p string) string { return p }
	}
	prefix := filepath.Clean(given)
	if !rootDir {
		return func(string) string { return prefix }
	}
	if given == "" || prefix == "." {
		prefix = ""
	} else {
		prefix += string(filepath.Separator)
	}
	skip := len(root) + 1
	if os.IsPathSeparator(root[len(root)-1]) {
		skip = len(root)
	}
	return func(p string) string {
		if len(p) <= skip {
			return prefix
		}
		return prefix + p[skip:]
	}
}

// grepOutcome is what a search found.
type grepOutcome struct {
	files []*fileMatch
}

// runGrep searches the request's root with a pool of workers.
func runGrep(ctx context.Context, req *grepRequest) (*grepOutcome, error) {
	c := newCollector(req)
	stop := func() bool { return ctx.Err() != nil }
	if !req.rootDir {
		s := newSearcher(req.m, &req.opts, stop, req.display)
		s.bufSize = req.bufSize
		if m, ok := s.search(req.root); ok && !req.isDenied(req.root) {
			c.add(m)
		}
		return &grepOutcome{files: c.files}, ctx.Err()
	}
	o := walkOptions{root: req.root, rules: rootRules(req.root), workers: req.workers}
	if o.workers <= 0 {
		o.workers = defaultWorkers()
	}
	if !req.filter.empty() {
		o.keepDir, o.keepFile = req.filter.keepDir, req.filter.keepFile
	}
	searchers := make([]*searcher, o.workers)
	for i := range searchers {
		searchers[i] = newSearcher(req.m, &req.opts, stop, req.display)
		searchers[i].bufSize = req.bufSize
	}
	err := walk(ctx, o, func(w int, path string) {
		if m, ok := searchers[w].search(path); ok && !req.isDenied(path) {
			c.add(m)
		}
	})
	if err != nil {
		return nil, err
	}
	return &grepOutcome{files: c.files}, nil
}

func (req *grepRequest) isDenied(path string) bool {
	return req.denied != nil && req.denied(path)
}

// collector gathers the files that matched. In content mode it keeps the
// output of only as many files, in output order, as the requested page
// needs, so that memory stays bounded however much matches.
type collector struct {
	mu    sync.Mutex
	need  int // output lines worth keeping; 0 means all
	sep   int // the "--" line output between files, if any
	files []*fileMatch
	kept  keptHeap
	// keptLines is the number of output lines of the kept files, counting
	// a separator before each.
	keptLines int
}

func newCollector(req *grepRequest) *collector {
	c := &collector{need: req.opts.budget}
	if req.opts.before > 0 || req.opts.after > 0 {
		c.sep = 1
	}
	return c
}

func (c *collector) add(m fileMatch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := &m
	c.files = append(c.files, f)
	if c.need == 0 || f.lines == 0 {
		return
	}
	heap.Push(&c.kept, f)
	c.keptLines += f.lines + c.sep
	// Drop the last file while the others give the page all it needs (the
	// first file has no separator before it).
	for len(c.kept) > 1 && c.keptLines-(c.kept[0].lines+c.sep)-c.sep >= c.need {
		last := heap.Pop(&c.kept).(*fileMatch)
		c.keptLines -= last.lines + c.sep
		last.out = nil
	}
}

// keptHeap holds the files whose output is kept, the last in output order
// on top.
type keptHeap []*fileMatch

func (h keptHeap) Len() int           { return len(h) }
func (h keptHeap) Less(i, j int) bool { return comparePaths(h[i].path, h[j].path) > 0 }
func (h keptHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *keptHeap) Push(x any)        { *h = append(*h, x.(*fileMatch)) }
func (h *keptHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// comparePaths orders paths the way a sorted directory walk visits them:
// component by component, so "a/b" comes before "a-b".
func comparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return -1
		}
		if cb == '/' {
			return 1
		}
		return int(ca) - int(cb)
	}
	return len(a) - len(b)
}

// GrepResult is Grep's structured result.
type GrepResult struct {
	Mode string `json:"mode"`
	// NumFiles is the number of files that matched.
	NumFiles int `json:"numFiles"`
	// Filenames lists the files shown in files_with_matches mode.
	Filenames []string `json:"filenames"`
	// Content is the text shown in content and count modes.
	Content string `json:"content,omitempty"`
	// NumLines is the number of lines of Content in content mode.
	NumLines int `json:"numLines,omitempty"`
	// TotalLines is the number of lines found in content mode, shown or not.
	TotalLines int `json:"totalLines,omitempty"`
	// TotalFiles is the number of files found in files_with_matches mode,
	// shown or not.
	TotalFiles int `json:"totalFiles,omitempty"`
	// NumMatches is the total of the counts in count mode.
	NumMatches int `json:"numMatches,omitempty"`
	// AppliedLimit is the head_limit that cut the results, if one did.
	AppliedLimit *int `json:"appliedLimit,omitempty"`
	// AppliedOffset is the offset given, if any.
	AppliedOffset *int `json:"appliedOffset,omitempty"`
}

// MarshalJSON writes the keys Claude Code's Grep gives in each mode, in
// its order: files_with_matches lists the files before counting them, and
// gives totalFiles; content gives numLines and totalLines; count
// numMatches.
func (r GrepResult) MarshalJSON() ([]byte, error) {
	type page struct {
		AppliedLimit  *int `json:"appliedLimit,omitempty"`
		AppliedOffset *int `json:"appliedOffset,omitempty"`
	}
	p := page{r.AppliedLimit, r.AppliedOffset}
	switch r.Mode {
	case modeFiles:
		return json.Marshal(struct {
			Mode       string   `json:"mode"`
			Filenames  []string `json:"filenames"`
			NumFiles   int      `json:"numFiles"`
			TotalFiles int      `json:"totalFiles"`
			page
		}{r.Mode, r.Filenames, r.NumFiles, r.TotalFiles, p})
	case modeCount:
		return json.Marshal(struct {
			Mode       string   `json:"mode"`
			NumFiles   int      `json:"numFiles"`
			Filenames  []string `json:"filenames"`
			Content    string   `json:"content"`
			NumMatches int      `json:"numMatches"`
			page
		}{r.Mode, r.NumFiles, r.Filenames, r.Content, r.NumMatches, p})
	}
	return json.Marshal(struct {
		Mode       string   `json:"mode"`
		NumFiles   int      `json:"numFiles"`
		Filenames  []string `json:"filenames"`
		Content    string   `json:"content"`
		NumLines   int      `json:"numLines"`
		TotalLines int      `json:"totalLines"`
		page
	}{r.Mode, r.NumFiles, r.Filenames, r.Content, r.NumLines, r.TotalLines, p})
}

// render turns what was found into the model's text and the structured
// result, applying offset and head_limit.
func (out *grepOutcome) render(req *grepRequest) (string, GrepResult) {
	res := GrepResult{Mode: req.opts.mode, NumFiles: len(out.files), Filenames: []string{}}
	if req.offset > 0 {
		res.AppliedOffset = &req.offset
	}
	if len(out.files) == 0 {
		if req.opts.mode == modeFiles {
			return "No files found", res
		}
		return "No matches found", res
	}
	var b strings.Builder
	var total, shown int
	unit := "files"
	switch req.opts.mode {
	case modeFiles:
		slices.SortFunc(out.files, func(a, b *fileMatch) int {
			if c := b.modTime.Compare(a.modTime); c != 0 {
				return c
			}
			return comparePaths(a.path, b.path)
		})
		total = len(out.files)
		res.TotalFiles = total
		for _, f := range window(out.files, req.offset, req.limit) {
			res.Filenames = append(res.Filenames, f.display)
			b.WriteString(f.display)
			b.WriteByte('\n')
			shown++
		}
	case modeCount:
		sortByPath(out.files)
		total = len(out.files)
		for _, f := range out.files {
			res.NumMatches += f.count
		}
		for _, f := range window(out.files, req.offset, req.limit) {
			b.WriteString(f.display)
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(f.count))
			b.WriteByte('\n')
			shown++
		}
	default:
		unit = "lines"
		sortByPath(out.files)
		total, shown = writeContent(&b, out.files, req)
		res.NumLines, res.TotalLines = shown, total
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if req.opts.mode != modeFiles {
		res.Content = text
	}
	switch {
	case shown == 0:
		text = fmt.Sprintf("No results at offset %d: there are %d %s.", req.offset, total, unit)
	case req.offset+shown < total:
		limit := req.limit
		res.AppliedLimit = &limit
		text += fmt.Sprintf("\n\n[Showing %s %d–%d of %d. Use offset %d for more, or narrow the search.]",
			unit, req.offset+1, req.offset+shown, total, req.offset+shown)
	}
	return text, res
}

// window returns the page of items that offset and limit select.
func window[T any](items []T, offset, limit int) []T {
	items = items[min(offset, len(items)):]
	if limit > 0 && len(items) > limit {
		items = items[:limit]
	}
	return items
}

func sortByPath(files []*fileMatch) {
	slices.SortFunc(files, func(a, b *fileMatch) int { return comparePaths(a.path, b.path) })
}

// writeContent writes the page of content-mode lines that the request's
// offset and limit select, with "--" between files when context is shown,
// and returns the total number of lines and the number written.
func writeContent(b *strings.Builder, files []*fileMatch, req *grepRequest) (total, shown int) {
	grouped := req.opts.before > 0 || req.opts.after > 0
	end := math.MaxInt
	if req.limit > 0 {
		end = req.offset + req.limit
	}
	emit := func(line []byte) {
		if total >= req.offset && total < end {
			b.Write(line)
			b.WriteByte('\n')
			shown++
		}
		total++
	}
	for i, f := range files {
		if grouped && i > 0 {
			emit([]byte("--"))
		}
		if total+f.lines <= req.offset || total >= end || len(f.out) == 0 {
			total += f.lines
			continue
		}
		rendered := 0
		for line := range bytes.SplitSeq(bytes.TrimSuffix(f.out, []byte{'\n'}), []byte{'\n'}) {
			emit(line)
			rendered++
		}
		total += f.lines - rendered
	}
	return total, shown
}
