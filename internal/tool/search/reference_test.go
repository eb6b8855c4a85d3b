package search

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool"
)

// genTree writes a random tree of text files made of a small vocabulary,
// so that patterns match often, with a few odd files: no final newline,
// CRLF, empty, binary, and a larger one.
func genTree(t *testing.T, rng *rand.Rand) string {
	dir := t.TempDir()
	words := []string{"foo", "bar", "Foo", "FOO", "baz_qux", "func", "(", ")", "x1", "Reader", "newReader", "NewReader(", "fOo", "", " ", "\t", "é", "bar.", "foobar", "a"}
	line := func() string {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) > 0 {
				b.WriteByte(' ')
			}
		}
		return b.String()
	}
	files := map[string]string{}
	dirs := []string{"", "a/", "a/b/", "a-b/", "c/d/e/", "z/"}
	for i := range 40 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(line())
			b.WriteByte('\n')
		}
		content := b.String()
		if i%7 == 3 {
			content += line() // no final newline
		}
		if i%11 == 5 {
			content = strings.ReplaceAll(content, "\n", "\r\n")
		}
		files[fmt.Sprintf("%sf%02d.txt", dirs[rng.IntN(len(dirs))], i)] = content
	}
	var big strings.Builder
	for big.Len() < 24<<10 {
		big.WriteString(line())
		big.WriteByte('\n')
	}
	files["a/big.txt"] = big.String()
	files["empty.txt"] = ""
	files["bin.dat"] = "foo bar\x00Reader\n"
	writeTree(t, dir, files)
	return dir
}

// refOptions are the options the reference implementation understands.
type refOptions struct {
	mode          string
	ignoreCase    bool
	before, after int
	noLineNumbers bool
	onlyMatching  bool
}

// refGrep is a deliberately plain grep: a sorted walk, whole files read,
// one regexp match per line.
func refGrep(t *testing.T, root, pattern string, o refOptions) string {
	flags := ""
	if o.ignoreCase {
		flags = "(?i)"
	}
	re := regexp.MustCompile(flags + pattern)
	var out []string
	printedGroup := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.ContainsRune(string(data[:min(len(data), binaryBlock)]), 0) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		lines := strings.Split(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		matches := make([][]string, len(lines))
		var hits []int
		count := 0
		for i, l := range lines {
			if o.onlyMatching {
				for _, m := range re.FindAllString(l, -1) {
					if m != "" {
						matches[i] = append(matches[i], m)
					}
				}
				if len(matches[i]) > 0 {
					hits = append(hits, i)
					count += len(matches[i])
				}
			} else if re.MatchString(l) {
				hits = append(hits, i)
				count++
			}
		}
		if len(hits) == 0 {
			return nil
		}
		switch o.mode {
		case modeFiles:
			out = append(out, rel)
		case modeCount:
			out = append(out, fmt.Sprintf("%s:%d", rel, count))
		default:
			show := map[int]bool{}
			isHit := map[int]bool{}
			for _, h := range hits {
				isHit[h] = true
				for j := max(0, h-o.before); j <= min(len(lines)-1, h+o.after); j++ {
					show[j] = true
				}
			}
			last := -2
			for i := range lines {
				if !show[i] {
					continue
				}
				if (o.before > 0 || o.after > 0) && printedGroup && i != last+1 {
					out = append(out, "--")
				}
				printedGroup, last = true, i
				sep := "-"
				if isHit[i] {
					sep = ":"
				}
				prefix := rel + sep
				if !o.noLineNumbers {
					prefix += fmt.Sprint(i+1) + sep
				}
				if isHit[i] && o.onlyMatching {
					for _, m := range matches[i] {
						out = append(out, prefix+m)
					}
				} else {
					out = append(out, prefix+lines[i])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		if o.mode == modeFiles {
			return "No files found"
		}
		return "No matches found"
	}
	return strings.Join(out, "\n")
}

// TestGrepMatchesReference compares Grep with refGrep over many patterns
// and options on a generated tree, with the default buffer, a small one and
// sometimes a tiny one, so that lines and context cross chunk boundaries.
func TestGrepMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	root := genTree(t, rng)
	env := &tool.Env{ProjectDir: root}
	patterns := []string{
		"foo", "Foo", "foo bar", `\bfoo\b`, `fo+`, `^foo`, `bar$`, `(foo|bar)baz`, `foo|Reader`,
		`new\w+`, `\w+Reader\(`, `[A-Z]{2,}`, `x\d`, `^$`, `^`, `.`, `a*`, `reader`, `foo.*bar`,
		`[^a-z ]+`, `\s+$`, `é`, `É`, `NewReader\(`, `qux|func|bar\.`, `(?i)FOOBAR`, `o\b`, `\A\w`, `\w\z`,
	}
	optionSets := []refOptions{
		{mode: modeContent},
		{mode: modeContent, ignoreCase: true},
		{mode: modeContent, before: 1, after: 2},
		{mode: modeContent, before: 3, ignoreCase: true, noLineNumbers: true},
		{mode: modeContent, after: 1, onlyMatching: true},
		{mode: modeCount},
		{mode: modeCount, onlyMatching: true, ignoreCase: true},
		{mode: modeFiles},
		{mode: modeFiles, ignoreCase: true},
	}
	for i, p := range patterns {
		for _, o := range optionSets {
			want := refGrep(t, root, p, o)
			in := map[string]any{"pattern": p, "output_mode": o.mode, "-i": o.ignoreCase, "-B": o.before, "-A": o.after,
				"-n": !o.noLineNumbers, "-o": o.onlyMatching, "head_limit": 0}
			bufSizes := []int{0, 1024}
			if i%5 == 0 {
				bufSizes = append(bufSizes, 37)
			}
			for _, bufSize := range bufSizes {
				got := runWithBuffer(t, env, in, bufSize)
				if o.mode == modeFiles {
					got = sortLines(got)
				}
				if got != want {
					t.Errorf("buffer %d, pattern %q, %+v:\n got %.600q\nwant %.600q", bufSize, p, o, got, want)
				}
			}
		}
	}
}

// TestGrepMultilineMatchesReference checks which files multiline patterns
// find against a whole-file regexp.
func TestGrepMultilineMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	root := genTree(t, rng)
	env := &tool.Env{ProjectDir: root}
	for _, p := range []string{`foo\nbar`, `foo.*\n.*Reader`, `\(\s*\)`, `x1\s+\w+\n\n`, `^bar.*$\n^foo`} {
		re := regexp.MustCompile("(?ms)" + p)
		var want []string
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(path)
			if !strings.ContainsRune(string(data), 0) && re.Match(data) {
				rel, _ := filepath.Rel(root, path)
				want = append(want, rel)
			}
			return nil
		})
		wantText := strings.Join(want, "\n")
		if len(want) == 0 {
			wantText = "No files found"
		}
		got := runWithBuffer(t, env, map[string]any{"pattern": p, "multiline": true, "head_limit": 0}, 0)
		if sortLines(got) != wantText {
			t.Errorf("%q: got %q want %q", p, got, wantText)
		}
	}
}

func runWithBuffer(t *testing.T, env *tool.Env, input map[string]any, bufSize int) string {
	t.Helper()
	raw := mustJSON(t, input)
	var in grepInput
	if err := tool.Decode(grepName, raw, &in); err != nil {
		t.Fatal(err)
	}
	req, err := in.request(env)
	if err != nil {
		t.Fatalf("%v: %v", input, err)
	}
	req.bufSize = bufSize
	out, err := runGrep(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := out.render(req)
	return text
}

func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.SortFunc(lines, comparePaths)
	return strings.Join(lines, "\n")
}

// TestGrepLargeFileMatchesReference checks a file larger than the default
// buffer, read in several chunks, with context kept across them.
func TestGrepLargeFileMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	dir := t.TempDir()
	var b strings.Builder
	for b.Len() < 3*initialBuffer {
		fmt.Fprintf(&b, "line %d %s\n", rng.IntN(1000), strings.Repeat("ab", rng.IntN(40)))
	}
	writeTree(t, dir, map[string]string{"big.txt": b.String()})
	env := &tool.Env{ProjectDir: dir}
	for _, p := range []string{`line 99\b`, `line 5\d\d b`, `^line \d ab$`} {
		for _, o := range []refOptions{{mode: modeContent, before: 2, after: 2}, {mode: modeCount}} {
			want := refGrep(t, dir, p, o)
			got := runWithBuffer(t, env, map[string]any{"pattern": p, "output_mode": o.mode, "-B": o.before, "-A": o.after, "head_limit": 0}, 0)
			if got != want {
				t.Errorf("%q %+v:\n got %.300q\nwant %.300q", p, o, got, want)
			}
		}
	}
}

// TestGrepPagesMatchFullOutput checks that every page that offset and
// head_limit select is the same slice of the unlimited output, although
// the search keeps only the files that page needs.
func TestGrepPagesMatchFullOutput(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 60 {
		var b strings.Builder
		for j := range 12 {
			if (i+j)%3 == 0 {
				fmt.Fprintf(&b, "hit %d %d\n", i, j)
			} else {
				fmt.Fprintf(&b, "miss %d %d\n", i, j)
			}
		}
		files[fmt.Sprintf("d%d/f%02d.txt", i%4, i)] = b.String()
	}
	writeTree(t, dir, files)
	env := &tool.Env{ProjectDir: dir}
	for _, extra := range []map[string]any{{}, {"-C": 1}, {"-B": 2, "-o": true}} {
		in := map[string]any{"pattern": "hit", "output_mode": "content", "head_limit": 0}
		for k, v := range extra {
			in[k] = v
		}
		full := strings.Split(runWithBuffer(t, env, in, 0), "\n")
		for _, page := range [][2]int{{0, 1}, {0, 25}, {30, 25}, {7, 100}, {len(full) - 3, 10}} {
			in["offset"], in["head_limit"] = page[0], page[1]
			got := runWithBuffer(t, env, in, 0)
			got, _, _ = strings.Cut(got, "\n\n[")
			want := strings.Join(full[page[0]:min(len(full), page[0]+page[1])], "\n")
			if got != want {
				t.Errorf("%v page %v:\n got %q\nwant %q", extra, page, got, want)
			}
		}
	}
}
