package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

const sample = `alpha foo
beta
gamma foo foo
delta
eps
zeta
eta foo
theta
`

// grepEnv is a tree for the Grep tests, with the working directory at its
// root.
func grepEnv(t *testing.T) (*tool.Env, string) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.txt":       sample,
		"b.txt":       "x foo\ny\n",
		"src/c.go":    "package c\n\nfunc Foo() {}\n// FOO in caps\n",
		"src/d.ts":    "const foo = 1;\n",
		"src/e.tsx":   "let foo = <div/>;\n",
		"docs/f.md":   "no match here\n",
		"noeol.txt":   "first\nlast foo",
		"empty.txt":   "",
		"crlf.txt":    "one foo\r\ntwo\r\n",
		"deep/x/y.go": "package y // foo\n",
	}, "deep/x/y.go", "crlf.txt", "noeol.txt", "src/e.tsx", "src/d.ts", "src/c.go", "b.txt", "a.txt")
	return &tool.Env{ProjectDir: dir}, dir
}

func grep(t *testing.T, env *tool.Env, in map[string]any) (string, GrepResult) {
	t.Helper()
	text, st := mustCall(t, grepTool{}, env, in)
	return text, st.(GrepResult)
}

func TestGrepFilesWithMatches(t *testing.T) {
	env, dir := grepEnv(t)
	text, res := grep(t, env, map[string]any{"pattern": "foo"})
	want := "a.txt\nb.txt\nsrc/d.ts\nsrc/e.tsx\nnoeol.txt\ncrlf.txt\ndeep/x/y.go"
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	if res.Mode != modeFiles || res.NumFiles != 7 || len(res.Filenames) != 7 || res.Filenames[0] != "a.txt" {
		t.Errorf("structured %+v", res)
	}
	// An absolute path gives absolute paths.
	text, _ = grep(t, env, map[string]any{"pattern": "Foo", "path": dir})
	if text != filepath.Join(dir, "src/c.go") {
		t.Errorf("absolute: %q", text)
	}
	// A relative path is kept as given.
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "path": "./deep/"})
	if text != "deep/x/y.go" {
		t.Errorf("relative: %q", text)
	}
	// A file is searched alone, named as given.
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "path": "b.txt", "output_mode": "content"})
	if text != "b.txt:1:x foo" {
		t.Errorf("file: %q", text)
	}
}

func TestGrepContent(t *testing.T) {
	env, _ := grepEnv(t)
	text, res := grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "a.txt"})
	want := "a.txt:1:alpha foo\na.txt:3:gamma foo foo\na.txt:7:eta foo"
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	if res.NumLines != 3 || res.Content != want || res.NumFiles != 1 {
		t.Errorf("structured %+v", res)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo$", "output_mode": "content", "glob": "*.txt"})
	want = "a.txt:1:alpha foo\na.txt:3:gamma foo foo\na.txt:7:eta foo\nb.txt:1:x foo\nnoeol.txt:2:last foo"
	if text != want {
		t.Errorf("sorted by path, last line without newline:\n%s", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "a.txt", "-n": false})
	if text != "a.txt:alpha foo\na.txt:gamma foo foo\na.txt:eta foo" {
		t.Errorf("-n false:\n%s", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "fo+", "output_mode": "content", "path": "a.txt", "-o": true})
	if text != "a.txt:1:foo\na.txt:3:foo\na.txt:3:foo\na.txt:7:foo" {
		t.Errorf("-o:\n%s", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "^(alpha|eta) ", "output_mode": "content", "path": "a.txt"})
	if text != "a.txt:1:alpha foo\na.txt:7:eta foo" {
		t.Errorf("anchors:\n%s", text)
	}
}

func TestGrepContext(t *testing.T) {
	env, _ := grepEnv(t)
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"-C": 1}, "a.txt:1:alpha foo\na.txt-2-beta\na.txt:3:gamma foo foo\na.txt-4-delta\n--\na.txt-6-zeta\na.txt:7:eta foo\na.txt-8-theta"},
		{map[string]any{"context": 1}, "a.txt:1:alpha foo\na.txt-2-beta\na.txt:3:gamma foo foo\na.txt-4-delta\n--\na.txt-6-zeta\na.txt:7:eta foo\na.txt-8-theta"},
		{map[string]any{"-A": 1}, "a.txt:1:alpha foo\na.txt-2-beta\na.txt:3:gamma foo foo\na.txt-4-delta\n--\na.txt:7:eta foo\na.txt-8-theta"},
		{map[string]any{"-B": 2}, "a.txt:1:alpha foo\na.txt-2-beta\na.txt:3:gamma foo foo\n--\na.txt-5-eps\na.txt-6-zeta\na.txt:7:eta foo"},
		{map[string]any{"-C": 3, "-A": 0}, "a.txt:1:alpha foo\na.txt-2-beta\na.txt:3:gamma foo foo\na.txt-4-delta\na.txt-5-eps\na.txt-6-zeta\na.txt:7:eta foo"},
		{map[string]any{"-C": 1, "-n": false}, "a.txt:alpha foo\na.txt-beta\na.txt:gamma foo foo\na.txt-delta\n--\na.txt-zeta\na.txt:eta foo\na.txt-theta"},
		{map[string]any{"-C": 1, "-o": true}, "a.txt:1:foo\na.txt-2-beta\na.txt:3:foo\na.txt:3:foo\na.txt-4-delta\n--\na.txt-6-zeta\na.txt:7:foo\na.txt-8-theta"},
	} {
		in := map[string]any{"pattern": "foo", "output_mode": "content", "path": "a.txt"}
		for k, v := range tc.in {
			in[k] = v
		}
		if text, _ := grep(t, env, in); text != tc.want {
			t.Errorf("%v: got\n%s\nwant\n%s", tc.in, text, tc.want)
		}
	}
	// Groups in different files are separated too.
	text, _ := grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "glob": "{a,b}.txt", "-A": 1})
	want := "a.txt:1:alpha foo\na.txt-2-beta\na.txt:3:gamma foo foo\na.txt-4-delta\n--\na.txt:7:eta foo\na.txt-8-theta\n--\nb.txt:1:x foo\nb.txt-2-y"
	if text != want {
		t.Errorf("across files: got\n%s\nwant\n%s", text, want)
	}
}

func TestGrepCountAndCase(t *testing.T) {
	env, _ := grepEnv(t)
	text, res := grep(t, env, map[string]any{"pattern": "foo", "output_mode": "count", "glob": "*.txt"})
	if text != "a.txt:3\nb.txt:1\ncrlf.txt:1\nnoeol.txt:1" || res.NumMatches != 6 || res.NumFiles != 4 || res.Content != text {
		t.Errorf("count: %q %+v", text, res)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "count", "path": "a.txt", "-o": true})
	if text != "a.txt:4" {
		t.Errorf("count -o: %q", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "src/c.go", "-i": true})
	if text != "src/c.go:3:func Foo() {}\nsrc/c.go:4:// FOO in caps" {
		t.Errorf("-i: %q", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "src/c.go"})
	if text != "No matches found" {
		t.Errorf("case-sensitive: %q", text)
	}
}

func TestGrepLimitOffset(t *testing.T) {
	env, _ := grepEnv(t)
	in := map[string]any{"pattern": "foo", "output_mode": "content", "path": "a.txt", "head_limit": 2}
	text, res := grep(t, env, in)
	if !strings.HasPrefix(text, "a.txt:1:alpha foo\na.txt:3:gamma foo foo\n\n[") || !strings.Contains(text, "offset 2") {
		t.Errorf("head_limit: %q", text)
	}
	if res.AppliedLimit == nil || *res.AppliedLimit != 2 || res.NumLines != 2 {
		t.Errorf("structured %+v", res)
	}
	in["offset"] = 2
	text, res = grep(t, env, in)
	if text != "a.txt:7:eta foo" || res.AppliedLimit != nil || res.AppliedOffset == nil || *res.AppliedOffset != 2 {
		t.Errorf("offset: %q %+v", text, res)
	}
	in["offset"] = 5
	if text, _ = grep(t, env, in); !strings.HasPrefix(text, "No results at offset 5") {
		t.Errorf("offset past the end: %q", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "head_limit": 3, "offset": 1})
	if !strings.HasPrefix(text, "b.txt\nsrc/d.ts\nsrc/e.tsx\n\n[Showing files 2–4 of 7") {
		t.Errorf("files page: %q", text)
	}
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "count", "head_limit": 1, "glob": "*.txt"})
	if !strings.HasPrefix(text, "a.txt:3\n\n[Showing files 1–1 of 4") {
		t.Errorf("count page: %q", text)
	}
	// Context lines and separators count as lines.
	text, _ = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "a.txt", "-C": 1, "head_limit": 5, "offset": 1})
	if !strings.HasPrefix(text, "a.txt-2-beta\na.txt:3:gamma foo foo\na.txt-4-delta\n--\na.txt-6-zeta\n\n[Showing lines 2–6 of 8") {
		t.Errorf("context page: %q", text)
	}
	// 0 means no limit.
	many := strings.Repeat("foo\n", 400)
	writeTree(t, env.ProjectDir, map[string]string{"many.txt": many})
	_, res = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "many.txt"})
	if res.NumLines != defaultHeadLimit {
		t.Errorf("default limit: %d lines", res.NumLines)
	}
	_, res = grep(t, env, map[string]any{"pattern": "foo", "output_mode": "content", "path": "many.txt", "head_limit": 0})
	if res.NumLines != 400 {
		t.Errorf("no limit: %d lines", res.NumLines)
	}
}

func TestGrepFilters(t *testing.T) {
	env, _ := grepEnv(t)
	for _, tc := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"glob": "*.go"}, "src/c.go\ndeep/x/y.go"},
		{map[string]any{"glob": "**/*.{ts,tsx}"}, "src/d.ts\nsrc/e.tsx"},
		{map[string]any{"glob": "*.ts, *.go"}, "src/c.go\nsrc/d.ts\ndeep/x/y.go"},
		{map[string]any{"glob": "*.ts *.tsx"}, "src/d.ts\nsrc/e.tsx"},
		{map[string]any{"glob": "src/*"}, "src/c.go\nsrc/d.ts\nsrc/e.tsx"},
		{map[string]any{"glob": "!src"}, "a.txt\nb.txt\nnoeol.txt\ncrlf.txt\ndeep/x/y.go"},
		{map[string]any{"glob": "*.go !deep/**"}, "src/c.go"},
		{map[string]any{"type": "go"}, "src/c.go\ndeep/x/y.go"},
		{map[string]any{"type": "ts"}, "src/d.ts\nsrc/e.tsx"},
		{map[string]any{"type": "typescript"}, "src/d.ts\nsrc/e.tsx"},
		{map[string]any{"type": "go", "glob": "src/**"}, "src/c.go"},
		{map[string]any{"type": "md"}, "No files found"},
	} {
		in := map[string]any{"pattern": "foo", "-i": true}
		for k, v := range tc.in {
			in[k] = v
		}
		if text, _ := grep(t, env, in); text != tc.want {
			t.Errorf("%v: got\n%s\nwant\n%s", tc.in, text, tc.want)
		}
	}
	for _, in := range []map[string]any{{"type": "klingon"}, {"glob": "[x"}} {
		in["pattern"] = "foo"
		if _, _, err := call(t, grepTool{}, env, in); !tool.IsInputError(err) {
			t.Errorf("%v: want input error, got %v", in, err)
		}
	}
}

func TestGrepMultiline(t *testing.T) {
	env, _ := grepEnv(t)
	in := map[string]any{"pattern": `beta\ngamma`, "output_mode": "content", "path": "a.txt", "multiline": true}
	if text, _ := grep(t, env, in); text != "a.txt:2:beta\na.txt:3:gamma foo foo" {
		t.Errorf("multiline: %q", text)
	}
	in["-o"] = true
	if text, _ := grep(t, env, in); text != "a.txt:2:beta\na.txt:3:gamma" {
		t.Errorf("multiline -o: %q", text)
	}
	in = map[string]any{"pattern": `alpha.*beta`, "output_mode": "content", "path": "a.txt", "multiline": true, "-C": 1}
	if text, _ := grep(t, env, in); text != "a.txt:1:alpha foo\na.txt:2:beta\na.txt-3-gamma foo foo" {
		t.Errorf("dot matches newline: %q", text)
	}
	in = map[string]any{"pattern": `foo\nde|eta foo\nth`, "output_mode": "count", "path": "a.txt", "multiline": true}
	if text, _ := grep(t, env, in); text != "a.txt:2" {
		t.Errorf("multiline count: %q", text)
	}
	in = map[string]any{"pattern": `foo`, "output_mode": "count", "path": "a.txt", "multiline": true}
	if text, _ := grep(t, env, in); text != "a.txt:3" {
		t.Errorf("multiline count of one-line matches: %q", text)
	}
	// Without multiline a newline cannot match, and saying one is an error.
	for _, p := range []string{`alpha foo\s+beta`, `foo[^x]beta`, `alpha.*beta`} {
		if text, _ := grep(t, env, map[string]any{"pattern": p, "path": "a.txt"}); text != "No files found" {
			t.Errorf("%s matched across lines: %q", p, text)
		}
	}
	if _, _, err := call(t, grepTool{}, env, map[string]any{"pattern": `beta\ngamma`}); !tool.IsInputError(err) || !strings.Contains(err.Error(), "multiline") {
		t.Errorf("newline without multiline: %v", err)
	}
}

func TestGrepIgnoresAndBinary(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("filler line\n", 10000) // past the binary block
	writeTree(t, dir, map[string]string{
		".gitignore":        "ignored/\n*.gen.go\n",
		".git/HEAD":         "needle\n",
		"ignored/a.txt":     "needle\n",
		"x.gen.go":          "needle\n",
		"keep.go":           "needle\n",
		"sub/.gitignore":    "local.txt\n",
		"sub/local.txt":     "needle\n",
		"sub/other.txt":     "needle\n",
		"bin.dat":           "needle\x00\x01\x02",
		"late-nul.txt":      "needle\n" + big + "\x00needle\n",
		".config/hidden.rc": "needle\n",
	})
	env := &tool.Env{ProjectDir: dir}
	text, _ := grep(t, env, map[string]any{"pattern": "needle", "output_mode": "count"})
	want := ".config/hidden.rc:1\nkeep.go:1\nlate-nul.txt:1\nsub/other.txt:1"
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
	// Explicit paths into ignored places are searched.
	text, _ = grep(t, env, map[string]any{"pattern": "needle", "path": "ignored"})
	if text != "ignored/a.txt" {
		t.Errorf("explicit ignored dir: %q", text)
	}
}

func TestGrepErrors(t *testing.T) {
	env, _ := grepEnv(t)
	for _, in := range []map[string]any{
		{"pattern": "foo("},
		{"pattern": "a{2,1}"},
		{"pattern": "foo", "path": "missing"},
		{"pattern": "foo", "-A": -1},
		{"pattern": "foo", "output_mode": "lines"},
		{"pattern": 3},
	} {
		_, _, err := call(t, grepTool{}, env, in)
		if !tool.IsInputError(err) {
			t.Errorf("%v: want input error, got %v", in, err)
		}
	}
	_, _, err := call(t, grepTool{}, env, map[string]any{"pattern": "foo("})
	if !strings.Contains(err.Error(), "missing closing )") {
		t.Errorf("regexp error not shown: %v", err)
	}
	if text, res := grep(t, env, map[string]any{"pattern": "zzz", "output_mode": "content"}); text != "No matches found" || res.NumFiles != 0 || res.Filenames == nil {
		t.Errorf("no match: %q %+v", text, res)
	}
}

func TestGrepLongLine(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("a", 3000) + "NEEDLE" + strings.Repeat("b", 3000)
	writeTree(t, dir, map[string]string{"long.txt": line + "\n"})
	text, _ := grep(t, &tool.Env{ProjectDir: dir}, map[string]any{"pattern": "NEEDLE", "output_mode": "content"})
	if len(text) > maxLineDisplay+50 || !strings.Contains(text, "NEEDLE") || !strings.HasPrefix(text, "long.txt:1:…a") || !strings.HasSuffix(text, "b…") {
		t.Errorf("long line shown as %d bytes: %.80q…", len(text), text)
	}
}

func TestGrepCancelled(t *testing.T) {
	env, _ := grepEnv(t)
	ctx, cancel := contextCancelled(t)
	defer cancel()
	if _, err := (grepTool{}).Run(ctx, env, []byte(`{"pattern":"foo"}`)); err == nil {
		t.Error("cancelled search reported no error")
	}
}

func TestGrepHugeLine(t *testing.T) {
	// A line longer than the buffer grows it; context survives chunking.
	dir := t.TempDir()
	var b strings.Builder
	for i := range 2000 {
		if i == 1500 {
			b.WriteString("target " + strings.Repeat("x", 5000) + "\n")
			continue
		}
		b.WriteString("line\n")
	}
	writeTree(t, dir, map[string]string{"f.txt": b.String()})
	env := &tool.Env{ProjectDir: dir}
	raw := []byte(`{"pattern":"target","output_mode":"content","-B":2,"-A":1}`)
	var in grepInput
	if err := tool.Decode(grepName, raw, &in); err != nil {
		t.Fatal(err)
	}
	req, err := in.request(env)
	if err != nil {
		t.Fatal(err)
	}
	req.bufSize = 64
	out, err := runGrep(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := out.render(req)
	lines := strings.Split(text, "\n")
	if len(lines) != 4 || lines[0] != "f.txt-1499-line" || !strings.HasPrefix(lines[2], "f.txt:1501:target x") || lines[3] != "f.txt-1502-line" {
		t.Errorf("got %q", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "f.txt")); err != nil {
		t.Fatal(err)
	}
}
