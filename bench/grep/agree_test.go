package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
		if n == 0 {
			t.Errorf("%s: tack found nothing", c)
		}
		if rgErr == nil {
			if m, err := countLines(rgCommand(root, c)); err != nil || m != n {
				t.Errorf("%s: tack %d, rg %d (%v)", c, n, m, err)
			}
		}
		if grepErr == nil {
			if m, err := countLines(grepCommand(root, c)); err != nil || m != n {
				t.Errorf("%s: tack %d, grep %d (%v)", c, n, m, err)
			}
		}
	}
}
