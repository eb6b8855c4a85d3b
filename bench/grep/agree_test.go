package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// TestToolsAgree runs every benchmark search on a small generated tree
// with tack's Grep and, where installed, ripgrep and GNU grep, and checks
// that they find the same number of files or lines, so that the benchmark
// compares like with like.
func TestToolsAgree(t *testing.T) {
	root := t.TempDir()
	lines := []string{
		"func NewReader(r io.Reader) *Reader {",
		"func newReaderSize(r io.Reader, n int) *Reader {",
		"\tr := bufio.NEWREADER(f)",
		"\tif err != nil {\n\t\treturn err\n\t}",
		"// TODO: handle FIXME later",
		"package main",
		"func ReadContext(ctx context.Context) error {",
	}
	for i := range 40 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%d", i%6), fmt.Sprintf("sub%d", i%3))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var content string
		for j := range i % 9 {
			content += lines[(i*j+i)%len(lines)] + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := grepTool()
	_, rgErr := exec.LookPath("rg")
	_, grepErr := exec.LookPath("grep")
	for _, c := range cases {
		n, err := runTack(t.Context(), g, root, c)
		if err != nil {
			t.Fatal(err)
		}
		if none := c.name == "no match"; none != (n == 0) {
			t.Errorf("%s: tack found %d", c, n)
		}
		if rgErr == nil {
			if m, _, err := countFound(rgCommand(root, c), c); err != nil || m != n {
				t.Errorf("%s: tack %d, rg %d (%v)", c, n, m, err)
			}
		}
		if grepErr == nil {
			if m, _, err := countFound(grepCommand(root, c), c); err != nil || m != n {
				t.Errorf("%s: tack %d, grep %d (%v)", c, n, m, err)
			}
		}
	}
}

// TestContentSameAsRipgrep compares tack's content output with ripgrep's,
// byte for byte, on the Go sources: line numbers, context and "--"
// separators included (lines are short enough not to be clipped).
func TestContentSameAsRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("rg not installed")
	}
	root, err := goSrc()
	if err != nil {
		t.Skip(err)
	}
	root = filepath.Join(root, "bufio")
	for _, tc := range []struct {
		in   map[string]any
		args []string
	}{
		{map[string]any{"pattern": `func \w+Reader\(`}, []string{"-n", `func \w+Reader\(`}},
		{map[string]any{"pattern": `newreader`, "-i": true, "-C": 2}, []string{"-n", "-i", "-C2", `newreader`}},
		{map[string]any{"pattern": `err\w*`, "-o": true, "-B": 1}, []string{"-n", "-o", "-B1", `err\w*`}},
		{map[string]any{"pattern": `^\s*return\b`, "-n": false, "-A": 1}, []string{"-N", "-A1", `^\s*return\b`}},
	} {
		tc.in["output_mode"], tc.in["head_limit"], tc.in["path"] = "content", 0, root
		raw, _ := json.Marshal(tc.in)
		res, err := grepTool().Run(t.Context(), &tool.Env{ProjectDir: root}, raw)
		if err != nil {
			t.Fatal(err)
		}
		got := llm.TextOf(res.Content)
		args := append([]string{"--no-config", "--hidden", "--no-require-git", "--sort", "path"}, tc.args...)
		out, err := exec.Command("rg", append(args, root)...).Output()
		if err != nil {
			t.Fatalf("rg %v: %v", args, err)
		}
		if want := strings.TrimSuffix(string(out), "\n"); got != want {
			t.Errorf("%v: tack and rg differ:\ntack %.400q\n  rg %.400q", tc.in, got, want)
		}
	}
}
