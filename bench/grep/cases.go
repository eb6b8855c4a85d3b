// Command grep compares tack's Grep tool with ripgrep and GNU grep on the
// same searches over the same tree (by default the Go distribution's
// source, $(go env GOROOT)/src), and prints median wall times, their
// ratios, and how many files or lines each tool found, to show they agree.
//
//	go run ./bench/grep [-root DIR] [-runs N]
//
// The same searches run as Go benchmarks with go test -bench . ./bench/grep/.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/search"
)

// benchCase is one search as an agent would ask for it.
type benchCase struct {
	name       string
	pattern    string
	mode       string // content, files_with_matches or count
	ignoreCase bool
}

// cases are typical agent searches: literals and regexps, exact case and
// not, listing files and printing lines.
var cases = []benchCase{
	{name: "literal", pattern: "func NewReader", mode: "files_with_matches"},
	{name: "literal", pattern: "func NewReader", mode: "content"},
	{name: "regex", pattern: `func \w+Reader\(`, mode: "files_with_matches"},
	{name: "regex", pattern: `func \w+Reader\(`, mode: "content"},
	{name: "regex", pattern: `func \w+Context\(`, mode: "files_with_matches"},
	{name: "regex", pattern: `func \w+Context\(`, mode: "content"},
	{name: "literal -i", pattern: "newreader", mode: "files_with_matches", ignoreCase: true},
	{name: "literal -i", pattern: "newreader", mode: "content", ignoreCase: true},
	{name: "alternation", pattern: `TODO|FIXME`, mode: "content"},
	{name: "common word", pattern: `return err`, mode: "content"},
	{name: "common word", pattern: `return err`, mode: "count"},
	{name: "no match", pattern: `xyzzy plugh`, mode: "content"},
	{name: "no match", pattern: `func \w+Xyzzy\(`, mode: "files_with_matches"},
}

// grepTool returns tack's Grep.
func grepTool() tool.Tool {
	for _, t := range search.Tools() {
		if t.Name() == "Grep" {
			return t
		}
	}
	panic("no Grep tool")
}

// runTack runs c with tack's Grep over root, without a head limit, and
// returns the number of files (files mode), lines (content mode) or
// matching lines (count mode) found.
func runTack(ctx context.Context, g tool.Tool, root string, c benchCase) (int, error) {
	in := map[string]any{"pattern": c.pattern, "path": root, "output_mode": c.mode, "head_limit": 0}
	if c.ignoreCase {
		in["-i"] = true
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	res, err := g.Run(ctx, &tool.Env{ProjectDir: root}, raw)
	if err != nil {
		return 0, fmt.Errorf("tack grep %q: %w", c.pattern, err)
	}
	gr, ok := res.Structured.(search.GrepResult)
	if !ok {
		return 0, fmt.Errorf("tack grep: unexpected result %T", res.Structured)
	}
	switch c.mode {
	case "content":
		return gr.NumLines, nil
	case "count":
		return gr.NumMatches, nil
	}
	return gr.NumFiles, nil
}

// onceFlag makes this program run one search with tack's Grep and print
// its output, to time tack as a command like the others.
const onceFlag = "-once"

// tackCommand runs this program with onceFlag for c.
func tackCommand(self, root string, c benchCase) *exec.Cmd {
	return exec.Command(self, onceFlag, root, c.pattern, c.mode, strconv.FormatBool(c.ignoreCase))
}

// once runs the search that tackCommand describes and prints what Grep
// returned to the model.
func once(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("%s wants ROOT PATTERN MODE IGNORECASE", onceFlag)
	}
	in := map[string]any{"pattern": args[1], "path": args[0], "output_mode": args[2], "head_limit": 0, "-i": args[3] == "true"}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	res, err := grepTool().Run(context.Background(), &tool.Env{ProjectDir: args[0]}, raw)
	if err != nil {
		return err
	}
	if gr, ok := res.Structured.(search.GrepResult); ok && gr.NumFiles == 0 {
		return nil
	}
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	w.WriteString(llm.TextOf(res.Content))
	w.WriteByte('\n')
	return w.Flush()
}

// modeFlag is the flag of rg and grep for each output mode.
var modeFlag = map[string]string{"content": "-n", "files_with_matches": "-l", "count": "-c"}

// rgCommand is ripgrep doing the same work as tack: no config file,
// hidden files searched and .gitignore files honoured even outside a git
// repository (as tack does), .git skipped, line numbers in content mode.
func rgCommand(root string, c benchCase) *exec.Cmd {
	args := []string{"--no-config", "--hidden", "--no-require-git", "--glob", "!.git"}
	args = append(args, modeFlag[c.mode])
	if c.ignoreCase {
		args = append(args, "-i")
	}
	return exec.Command("rg", append(args, "-e", c.pattern, root)...)
}

// grepCommand is GNU grep -r: binary files skipped, no ignore files.
func grepCommand(root string, c benchCase) *exec.Cmd {
	args := []string{"-r", "-E", "-I", "--exclude-dir=.git"}
	args = append(args, modeFlag[c.mode])
	if c.ignoreCase {
		args = append(args, "-i")
	}
	return exec.Command("grep", append(args, "-e", c.pattern, root)...)
}

func (c benchCase) String() string {
	s := fmt.Sprintf("%s %q", c.name, c.pattern)
	if c.ignoreCase {
		s += " -i"
	}
	return s + " " + strings.TrimSuffix(c.mode, "_with_matches")
}
