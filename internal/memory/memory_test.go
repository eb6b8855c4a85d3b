package memory

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// write creates root/rel with content, making its directories.
func write(t testing.TB, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fixture builds the tree of the main test and returns its root and the
// options of a session whose cwd is root/home/work/repo/svc/app.
func fixture(t *testing.T) (string, Options) {
	t.Helper()
	root := t.TempDir()
	// Resolve /tmp → /private/tmp and the like, so expected paths match.
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	work := filepath.Join(home, "work")
	repo := filepath.Join(work, "repo")
	app := filepath.Join(repo, "svc", "app")

	write(t, root, "etc/claude-code/CLAUDE.md", "Managed policy.\n")
	write(t, root, "home/.claude/CLAUDE.md", "User prefs.\n@~/notes/style.md\n")
	write(t, root, "home/notes/style.md", "Style notes.\n")
	write(t, root, "home/.claude/rules/user-rule.md", "User rule.\n")

	write(t, root, "home/work/CLAUDE.md", strings.Join([]string{
		"# Work",
		"",
		"Mail me@example.com about it.",
		"Not an import: `@span.md`, nor ``code @span.md``.",
		"",
		"```sh",
		"@fenced.md",
		"```",
		"",
		"~~~",
		"@fenced.md",
		"~~~",
		"",
		"Shared: @" + filepath.ToSlash(filepath.Join(root, "shared", "abs.md")),
		"",
	}, "\n"))
	// Files that would show up if the scanner got it wrong.
	write(t, root, "home/work/span.md", "WRONG: code span import\n")
	write(t, root, "home/work/fenced.md", "WRONG: fenced import\n")
	write(t, root, "home/work/example.com", "WRONG: email import\n")
	write(t, root, "shared/abs.md", "Absolute import.\n")
	// CLAUDE.local.md is a symbolic link to a file elsewhere.
	private := write(t, root, "private/work-local.md", "Work local.\n")
	if err := os.Symlink(private, filepath.Join(work, "CLAUDE.local.md")); err != nil {
		t.Fatal(err)
	}

	write(t, root, "home/work/repo/CLAUDE.md", "Repo memory.\n@docs/a.md\n@chain/c1.md\n")
	write(t, root, "home/work/repo/AGENTS.md", "WRONG: AGENTS.md beside CLAUDE.md\n")
	write(t, root, "home/work/repo/docs/a.md", "Doc A.\n@b.md\n")
	write(t, root, "home/work/repo/docs/b.md", "Doc B.\n@a.md\n")
	for i := 1; i <= 6; i++ {
		write(t, root, fmt.Sprintf("home/work/repo/chain/c%d.md", i), fmt.Sprintf("Chain %d.\n@c%d.md\n", i, i+1))
	}
	write(t, root, "home/work/repo/.claude/CLAUDE.md", "Repo dot-claude memory.\n")
	write(t, root, "home/work/repo/.claude/rules/style.md", "Style rule.\n")
	write(t, root, "home/work/repo/.claude/rules/api/http.md", "HTTP rule.\n")
	write(t, root, "home/work/repo/.claude/rules/go.md", "---\ndescription: Go\npaths:\n  - \"**/*.go\"\n---\n\nGo rule.\n")
	write(t, root, "home/work/repo/.claude/rules/notes.txt", "WRONG: not a .md rule\n")
	write(t, root, "home/work/repo/CLAUDE.local.md", "Repo local.\n")

	// svc has only AGENTS.md (a directory named CLAUDE.md does not count).
	write(t, root, "home/work/repo/svc/AGENTS.md", "Svc agents.\n")
	if err := os.MkdirAll(filepath.Join(repo, "svc", "CLAUDE.md"), 0o755); err != nil {
		t.Fatal(err)
	}

	write(t, root, "home/work/repo/svc/app/CLAUDE.md", "App memory.\n")
	write(t, root, "home/work/repo/svc/app/CLAUDE.local.md", "WRONG: excluded\n")
	// .claude/CLAUDE.md is a link to CLAUDE.md: one file, sent once.
	if err := os.MkdirAll(filepath.Join(app, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../CLAUDE.md", filepath.Join(app, ".claude", "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "home/work/repo/svc/app/sub/CLAUDE.md", "Sub memory.\n")
	write(t, root, "home/work/repo/svc/app/sub/x.go", "package sub\n")

	return root, Options{
		Cwd:         app,
		Home:        home,
		ConfigDir:   filepath.Join(home, ".claude"),
		ManagedPath: filepath.Join(root, "etc", "claude-code", "CLAUDE.md"),
		Excludes:    []string{"**/app/CLAUDE.local.md"},
	}
}

// within keeps the files under root: the machine running the test may have
// memory of its own in the directories above it (/CLAUDE.md, /tmp/…).
func within(root string, files []File) []File {
	var out []File
	for _, f := range files {
		if strings.HasPrefix(f.Path, root+string(filepath.Separator)) {
			out = append(out, f)
		}
	}
	return out
}

type want struct {
	rel, kind, content, importedBy string
}

func check(t *testing.T, root string, got []File, wants []want) {
	t.Helper()
	var g, w []string
	for _, f := range got {
		imp := ""
		if f.ImportedBy != "" {
			imp, _ = filepath.Rel(root, f.ImportedBy)
		}
		rel, _ := filepath.Rel(root, f.Path)
		g = append(g, fmt.Sprintf("%s %s %q <- %s", filepath.ToSlash(rel), f.Kind, f.Content, filepath.ToSlash(imp)))
	}
	for _, x := range wants {
		w = append(w, fmt.Sprintf("%s %s %q <- %s", x.rel, x.kind, x.content, x.importedBy))
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("files:\n got %s\nwant %s", strings.Join(g, "\n     "), strings.Join(w, "\n     "))
	}
}

func TestLoadFixture(t *testing.T) {
	root, opts := fixture(t)
	set, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	work := "# Work\n\nMail me@example.com about it.\nNot an import: `@span.md`, nor ``code @span.md``.\n\n```sh\n@fenced.md\n```\n\n~~~\n@fenced.md\n~~~\n\nShared: @" +
		filepath.ToSlash(filepath.Join(root, "shared", "abs.md"))
	check(t, root, within(root, set.Files), []want{
		{"etc/claude-code/CLAUDE.md", "Managed", "Managed policy.", ""},
		{"home/.claude/CLAUDE.md", "User", "User prefs.\n@~/notes/style.md", ""},
		{"home/notes/style.md", "User", "Style notes.", "home/.claude/CLAUDE.md"},
		{"home/.claude/rules/user-rule.md", "User", "User rule.", ""},
		{"home/work/CLAUDE.md", "Project", work, ""},
		{"shared/abs.md", "Project", "Absolute import.", "home/work/CLAUDE.md"},
		{"home/work/CLAUDE.local.md", "Local", "Work local.", ""},
		{"home/work/repo/CLAUDE.md", "Project", "Repo memory.\n@docs/a.md\n@chain/c1.md", ""},
		{"home/work/repo/docs/a.md", "Project", "Doc A.\n@b.md", "home/work/repo/CLAUDE.md"},
		{"home/work/repo/docs/b.md", "Project", "Doc B.\n@a.md", "home/work/repo/docs/a.md"},
		{"home/work/repo/chain/c1.md", "Project", "Chain 1.\n@c2.md", "home/work/repo/CLAUDE.md"},
		{"home/work/repo/chain/c2.md", "Project", "Chain 2.\n@c3.md", "home/work/repo/chain/c1.md"},
		{"home/work/repo/chain/c3.md", "Project", "Chain 3.\n@c4.md", "home/work/repo/chain/c2.md"},
		{"home/work/repo/chain/c4.md", "Project", "Chain 4.\n@c5.md", "home/work/repo/chain/c3.md"},
		{"home/work/repo/chain/c5.md", "Project", "Chain 5.\n@c6.md", "home/work/repo/chain/c4.md"},
		{"home/work/repo/.claude/CLAUDE.md", "Project", "Repo dot-claude memory.", ""},
		{"home/work/repo/.claude/rules/api/http.md", "Project", "HTTP rule.", ""},
		{"home/work/repo/.claude/rules/style.md", "Project", "Style rule.", ""},
		{"home/work/repo/CLAUDE.local.md", "Local", "Repo local.", ""},
		{"home/work/repo/svc/AGENTS.md", "Project", "Svc agents.", ""},
		{"home/work/repo/svc/app/CLAUDE.md", "Project", "App memory.", ""},
	})
	if len(set.Problems) != 0 {
		t.Errorf("problems: %q", set.Problems)
	}
	notes := strings.Join(set.Notes, "\n")
	for _, n := range []string{"c6.md, more than 5 imports deep", "app/CLAUDE.local.md skipped by claudeMdExcludes"} {
		if !strings.Contains(notes, n) {
			t.Errorf("notes lack %q:\n%s", n, notes)
		}
	}
	if set.Auto != nil {
		t.Errorf("auto memory without a path: %+v", set.Auto)
	}

	// The exact bytes of the blocks: the introduction in the first only.
	blocks := set.Blocks()
	if len(blocks) != len(set.Files) {
		t.Fatalf("%d blocks for %d files", len(blocks), len(set.Files))
	}
	first := set.Files[0]
	wantFirst := "<system-reminder>" + strings.TrimSpace(intro) + "\n\nContents of " + first.Path + " (" +
		first.Kind.Description() + "):\n\n" + first.Content + "\n</system-reminder>"
	if blocks[0].Type != "text" || blocks[0].Text != wantFirst {
		t.Errorf("first block:\n%q\nwant\n%q", blocks[0].Text, wantFirst)
	}
	last := blocks[len(blocks)-1].Text
	wantLast := "<system-reminder>Contents of " + filepath.Join(opts.Cwd, "CLAUDE.md") +
		" (project instructions, checked into the codebase):\n\nApp memory.\n</system-reminder>"
	if last != wantLast {
		t.Errorf("last block:\n%q\nwant\n%q", last, wantLast)
	}
	if strings.Contains(last, strings.TrimSpace(intro)) {
		t.Error("the introduction is repeated")
	}
	for _, b := range blocks {
		if strings.Contains(b.Text, "WRONG") {
			t.Errorf("a file that must not load was sent: %q", b.Text)
		}
	}

	// On demand: a read that matches nothing, then one in sub/.
	tr := set.Tracker()
	if got := tr.OnRead(filepath.Join(opts.Cwd, "README.md")); got != nil {
		t.Errorf("README.md brought %+v", got)
	}
	check(t, root, tr.OnRead("sub/x.go"), []want{
		{"home/work/repo/.claude/rules/go.md", "Project", "Go rule.", ""},
		{"home/work/repo/svc/app/sub/CLAUDE.md", "Project", "Sub memory.", ""},
	})
	for _, p := range []string{"sub/x.go", filepath.Join(opts.Cwd, "sub", "y.go"), "main.go"} {
		if got := tr.OnRead(p); got != nil {
			t.Errorf("second time, %s brought %+v", p, got)
		}
	}
	if p := tr.Problems(); len(p) != 0 {
		t.Errorf("tracker problems: %q", p)
	}
}

func TestRenderFormat(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		desc string
	}{
		{Managed, "managed instructions, set by the administrator for all users"},
		{User, "user's private global instructions for all projects"},
		{Project, "project instructions, checked into the codebase"},
		{Local, "user's private project instructions, not checked in"},
		{AutoMem, "user's auto-memory, persists across conversations"},
	} {
		b := Render(File{Path: "/r/CLAUDE.md", Kind: tc.kind, Content: "line 1\nline 2"})
		want := "<system-reminder>Contents of /r/CLAUDE.md (" + tc.desc + "):\n\nline 1\nline 2\n</system-reminder>"
		if b.Type != "text" || b.Text != want {
			t.Errorf("%s: %q, want %q", tc.kind, b.Text, want)
		}
	}
}

func TestDeterministic(t *testing.T) {
	_, opts := fixture(t)
	opts.AutoMemoryPath = write(t, opts.Home, ".claude/projects/p/memory/MEMORY.md", "- [Build](build.md): make\n")
	encode := func() []byte {
		set, err := Load(opts)
		if err != nil {
			t.Fatal(err)
		}
		auto, _ := set.AutoBlock()
		data, err := json.Marshal(append(set.Blocks(), auto))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	a, b := encode(), encode()
	if string(a) != string(b) {
		t.Errorf("two loads differ:\n%s\n%s", a, b)
	}
}

func TestReload(t *testing.T) {
	_, opts := fixture(t)
	set, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Tracker().OnRead("sub/x.go"); len(got) != 2 {
		t.Fatalf("OnRead: %+v", got)
	}
	write(t, opts.Cwd, "CLAUDE.md", "App memory, edited.\n")
	again, err := set.Reload()
	if err != nil {
		t.Fatal(err)
	}
	root := again.Root()
	if last := root[len(root)-1]; last.Content != "App memory, edited." {
		t.Errorf("reloaded root ends with %+v", last)
	}
	if len(root) != len(set.Files) {
		t.Errorf("reload has %d files, first load %d", len(root), len(set.Files))
	}
	// Nested memory is not part of the root, and loads again after a reload.
	if got := again.Tracker().OnRead("sub/x.go"); len(got) != 2 {
		t.Errorf("OnRead after reload: %+v", got)
	}
}

func TestLoadNeedsCwd(t *testing.T) {
	if _, err := Load(Options{}); err == nil {
		t.Error("no error without a cwd")
	}
}

func TestTrackerConcurrent(t *testing.T) {
	_, opts := fixture(t)
	set, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	tr := set.Tracker()
	var mu sync.Mutex
	var got []File
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			f := tr.OnRead(fmt.Sprintf("sub/f%d.go", i%4))
			mu.Lock()
			got = append(got, f...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(got) != 2 {
		t.Errorf("%d files from parallel reads, want 2: %+v", len(got), got)
	}
}

func TestNestedDirectories(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a/CLAUDE.md", "A.\n")
	write(t, root, "a/b/AGENTS.md", "B agents.\n")
	write(t, root, "a/b/CLAUDE.local.md", "B local.\n")
	write(t, root, "a/b/.claude/rules/r.md", "B rule.\n")
	write(t, root, "a/b/.claude/rules/scoped.md", "---\npaths: \"*.ts, lib/**\"\n---\nTS rule.\n")
	write(t, root, "a/b/c/CLAUDE.md", "C.\n@../../../shared.md\n")
	write(t, root, "shared.md", "Shared.\n")
	write(t, root, "other/CLAUDE.md", "Other.\n")
	set, err := Load(Options{Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := within(root, set.Files); len(got) != 0 {
		t.Fatalf("memory below the cwd loaded at start: %+v", got)
	}
	tr := set.Tracker()
	// Outside the cwd: nothing.
	if got := tr.OnRead(filepath.Join(filepath.Dir(root), "elsewhere", "x")); got != nil {
		t.Errorf("outside read: %+v", got)
	}
	check(t, root, tr.OnRead("a/b/c/d/main.go"), []want{
		{"a/CLAUDE.md", "Project", "A.", ""},
		{"a/b/AGENTS.md", "Project", "B agents.", ""},
		{"a/b/.claude/rules/r.md", "Project", "B rule.", ""},
		{"a/b/CLAUDE.local.md", "Local", "B local.", ""},
		{"a/b/c/CLAUDE.md", "Project", "C.\n@../../../shared.md", ""},
		{"shared.md", "Project", "Shared.", "a/b/c/CLAUDE.md"},
	})
	if got := tr.OnRead("a/b/c/x.go"); got != nil {
		t.Errorf("second read in c: %+v", got)
	}
	// The scoped rule of a/b waits for *.ts or lib/** relative to a/b.
	if got := tr.OnRead("a/x.ts"); got != nil {
		t.Errorf("a/x.ts is outside a/b: %+v", got)
	}
	check(t, root, tr.OnRead("a/b/lib/deep/x.js"), []want{{"a/b/.claude/rules/scoped.md", "Project", "TS rule.", ""}})
	check(t, root, tr.OnRead("other/x"), []want{{"other/CLAUDE.md", "Project", "Other.", ""}})
}

func TestAutoMemory(t *testing.T) {
	lines := func(n, width int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%-*d\n", width-1, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, content string
		lines         int
		note          string
	}{
		{"short", lines(10, 20), 10, ""},
		{"exactly 200 lines", lines(200, 20), 200, ""},
		{"250 lines", lines(250, 20), 200, autoLinesNote},
		{"30 KB in 100 lines", lines(100, 300), 83, autoBytesNote}, // 83*300 = 24 900 ≤ 25 000
		{"both: bytes bind", lines(300, 200), 125, autoBytesNote},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := write(t, dir, "MEMORY.md", tc.content)
			write(t, dir, "topic.md", "WRONG: topic files load on demand\n")
			set, err := Load(Options{Cwd: dir, AutoMemoryPath: p})
			if err != nil {
				t.Fatal(err)
			}
			if set.Auto == nil {
				t.Fatal("no auto memory")
			}
			body, found := strings.CutSuffix(set.Auto.Content, tc.note)
			if !found {
				t.Fatalf("content does not end with %q: ...%q", tc.note, set.Auto.Content[max(0, len(set.Auto.Content)-200):])
			}
			if tc.note != "" && strings.Contains(body, "(Only the first") {
				t.Error("two notes")
			}
			if n := strings.Count(body, "\n") + 1; n != tc.lines {
				t.Errorf("%d lines kept, want %d", n, tc.lines)
			}
			if len(body) > autoMaxBytes {
				t.Errorf("%d bytes kept", len(body))
			}
			if !strings.HasPrefix(tc.content, body) {
				t.Error("kept text is not a prefix of the file")
			}
			b, ok := set.AutoBlock()
			if !ok || !strings.HasPrefix(b.Text, "<system-reminder>Contents of "+p+" (user's auto-memory, persists across conversations):\n\n") {
				t.Errorf("auto block: %q", b.Text[:min(len(b.Text), 200)])
			}
			for _, blk := range set.Blocks() {
				if strings.Contains(blk.Text, "WRONG") || strings.Contains(blk.Text, "MEMORY.md") {
					t.Errorf("auto memory or topic file among the memory blocks: %q", blk.Text)
				}
			}
		})
	}
	// A single line longer than the limit is cut at a character boundary.
	dir := t.TempDir()
	p := write(t, dir, "MEMORY.md", strings.Repeat("é", autoMaxBytes))
	set, _ := Load(Options{Cwd: dir, AutoMemoryPath: p})
	body := strings.TrimSuffix(set.Auto.Content, autoBytesNote)
	if len(body) != autoMaxBytes || !strings.HasPrefix(strings.Repeat("é", autoMaxBytes), body) {
		t.Errorf("long line cut to %d bytes", len(body))
	}
	// Empty or missing: no block.
	for _, content := range []string{"", "\n  \n"} {
		write(t, dir, "MEMORY.md", content)
		set, _ := Load(Options{Cwd: dir, AutoMemoryPath: p})
		if _, ok := set.AutoBlock(); ok {
			t.Errorf("block for %q", content)
		}
	}
	set, _ = Load(Options{Cwd: dir, AutoMemoryPath: filepath.Join(dir, "none.md")})
	if set.Auto != nil || len(set.Problems) != 0 {
		t.Errorf("missing MEMORY.md: %+v %q", set.Auto, set.Problems)
	}
}

func TestLargeFileCut(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	write(t, dir, "CLAUDE.md", strings.Repeat(line, maxFileBytes/100+50))
	set, err := Load(Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	f := within(dir, set.Files)
	if len(f) != 1 {
		t.Fatalf("files: %d", len(f))
	}
	body, ok := strings.CutSuffix(f[0].Content, cutNote)
	if !ok {
		t.Fatal("no cut note")
	}
	if n := len(body) + 1; n > maxFileBytes || n%100 != 0 {
		t.Errorf("cut to %d bytes, not at a line boundary under 1 MiB", n)
	}
}

// failSys wraps the real file system with failures for chosen paths.
func failSys(failOpen map[string]error) sysCalls {
	s := osSys
	s.open = func(p string) (io.ReadCloser, error) {
		if err := failOpen[p]; err != nil {
			return nil, &fs.PathError{Op: "open", Path: p, Err: err}
		}
		return os.Open(p)
	}
	return s
}

func TestProblems(t *testing.T) {
	dir := t.TempDir()
	locked := write(t, dir, "CLAUDE.local.md", "Secret.\n")
	write(t, dir, "CLAUDE.md", "Readable.\n@bin.md\n@missing.md\n")
	write(t, dir, "bin.md", "a\x00b")
	set := load(Options{Cwd: dir, Excludes: []string{"[unclosed"}}, failSys(map[string]error{locked: fs.ErrPermission}), AtStart)
	check(t, dir, within(dir, set.Files), []want{{"CLAUDE.md", "Project", "Readable.\n@bin.md\n@missing.md", ""}})
	problems := strings.Join(set.Problems, "\n")
	for _, p := range []string{"invalid pattern \"[unclosed\"", "open " + locked + ": permission denied", "bin.md: not a text file"} {
		if !strings.Contains(problems, p) {
			t.Errorf("problems lack %q:\n%s", p, problems)
		}
	}
	if !strings.Contains(strings.Join(set.Notes, "\n"), "missing.md, which does not exist") {
		t.Errorf("notes: %q", set.Notes)
	}
	if strings.Contains(problems, "missing.md") {
		t.Error("a missing import is a problem")
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	p := write(t, dir, "CLAUDE.md", "Secret.\n")
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	set, err := Load(Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(within(dir, set.Files)) != 0 || len(set.Problems) == 0 {
		t.Errorf("files %+v problems %q", set.Files, set.Problems)
	}
}

func TestRulesFollowLinksWithoutLooping(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, ".claude/rules/a.md", "A.\n")
	write(t, dir, ".claude/rules/a/x.md", "A/X.\n")
	write(t, dir, ".claude/rules/a-b.md", "A-B.\n")
	write(t, dir, "shared-rules/s.md", "Shared rule.\n")
	if err := os.Symlink(filepath.Join(dir, "shared-rules"), filepath.Join(dir, ".claude/rules/shared")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, ".claude/rules"), filepath.Join(dir, ".claude/rules/loop")); err != nil {
		t.Fatal(err)
	}
	set, err := Load(Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	check(t, dir, within(dir, set.Files), []want{
		{".claude/rules/a-b.md", "Project", "A-B.", ""},
		{".claude/rules/a.md", "Project", "A.", ""},
		{".claude/rules/a/x.md", "Project", "A/X.", ""},
		{".claude/rules/shared/s.md", "Project", "Shared rule.", ""},
	})
}

func TestHomeIsCwd(t *testing.T) {
	// With the cwd at the home, ~/.claude is both the config directory and
	// the cwd's .claude: its files are user memory, sent once.
	home := t.TempDir()
	write(t, home, ".claude/CLAUDE.md", "User.\n")
	write(t, home, ".claude/rules/r.md", "---\npaths: [\"*.go\"]\n---\nGo.\n")
	set, err := Load(Options{Cwd: home, Home: home, ConfigDir: filepath.Join(home, ".claude")})
	if err != nil {
		t.Fatal(err)
	}
	check(t, home, within(home, set.Files), []want{{".claude/CLAUDE.md", "User", "User.", ""}})
	check(t, home, set.Tracker().OnRead("main.go"), []want{{".claude/rules/r.md", "User", "Go.", ""}})
	if got := set.Tracker().OnRead("other.go"); got != nil {
		t.Errorf("rule sent twice: %+v", got)
	}
}

func TestDefaultOptions(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	o := DefaultOptions("/w", func(k string) string { return env[k] })
	if o.Home != "/h" || o.ConfigDir != filepath.Join("/h", ".claude") || o.Cwd != "/w" || o.ManagedPath == "" {
		t.Errorf("%+v", o)
	}
	env["CLAUDE_CONFIG_DIR"] = "/c"
	if o := DefaultOptions("/w", func(k string) string { return env[k] }); o.ConfigDir != "/c" {
		t.Errorf("config dir %q", o.ConfigDir)
	}
	if ManagedPathFor("linux") != "/etc/claude-code/CLAUDE.md" ||
		ManagedPathFor("darwin") != "/Library/Application Support/ClaudeCode/CLAUDE.md" {
		t.Error("managed paths")
	}
}

// BenchmarkLoad measures a start in a cwd 8 levels deep with a little
// memory: a user CLAUDE.md, a project CLAUDE.md with one import, a local
// file and one rule.
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	home := filepath.Join(root, "home")
	write(b, home, ".claude/CLAUDE.md", "User prefs.\n")
	write(b, root, "home/p/CLAUDE.md", "Project.\n@docs/style.md\n")
	write(b, root, "home/p/docs/style.md", "Style.\n")
	write(b, root, "home/p/CLAUDE.local.md", "Local.\n")
	write(b, root, "home/p/.claude/rules/r.md", "Rule.\n")
	cwd := filepath.Join(home, "p", "a", "b", "c", "d", "e")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		b.Fatal(err)
	}
	opts := Options{Cwd: cwd, Home: home, ConfigDir: filepath.Join(home, ".claude"),
		ManagedPath: filepath.Join(root, "etc/claude-code/CLAUDE.md")}
	b.ReportAllocs()
	for b.Loop() {
		set, err := Load(opts)
		if err != nil || len(set.Blocks()) < 5 {
			b.Fatal(err, len(set.Files))
		}
	}
}

// TestLoadReasons: each file says why it was loaded and, when a read
// brought it, which file that was — at start, for an import, for a
// directory below the cwd, for a path-scoped rule, and after a reload.
func TestLoadReasons(t *testing.T) {
	root, opts := fixture(t)
	write(t, opts.Cwd, "sub/CLAUDE.md", "Sub memory.\n@sub-notes.md\n")
	write(t, opts.Cwd, "sub/sub-notes.md", "Sub notes.\n")
	type why struct {
		rel     string
		reason  Reason
		trigger string
	}
	got := func(files []File) []why {
		var out []why
		for _, f := range within(root, files) {
			rel, _ := filepath.Rel(root, f.Path)
			trigger := ""
			if f.Trigger != "" {
				trigger, _ = filepath.Rel(root, f.Trigger)
			}
			out = append(out, why{filepath.ToSlash(rel), f.Reason, filepath.ToSlash(trigger)})
		}
		return out
	}
	set, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	start := got(set.Files)
	for _, w := range start {
		want := AtStart
		switch w.rel {
		case "home/notes/style.md", "shared/abs.md", "home/work/repo/docs/a.md", "home/work/repo/docs/b.md",
			"home/work/repo/chain/c1.md", "home/work/repo/chain/c2.md", "home/work/repo/chain/c3.md",
			"home/work/repo/chain/c4.md", "home/work/repo/chain/c5.md":
			want = Included
		}
		if w.reason != want || w.trigger != "" {
			t.Errorf("at start %s: %s (trigger %q), want %s", w.rel, w.reason, w.trigger, want)
		}
	}
	read := "home/work/repo/svc/app/sub/x.go"
	lazy := got(set.Tracker().OnRead("sub/x.go"))
	wantLazy := []why{
		{"home/work/repo/.claude/rules/go.md", GlobMatch, read},
		{"home/work/repo/svc/app/sub/CLAUDE.md", Nested, read},
		{"home/work/repo/svc/app/sub/sub-notes.md", Included, read},
	}
	if !reflect.DeepEqual(lazy, wantLazy) {
		t.Errorf("on a read:\n got %+v\nwant %+v", lazy, wantLazy)
	}
	again, err := set.Reload()
	if err != nil {
		t.Fatal(err)
	}
	reloaded := got(again.Files)
	if len(reloaded) != len(start) {
		t.Fatalf("%d files reloaded, %d at start", len(reloaded), len(start))
	}
	for i, w := range reloaded {
		if w.reason != Reloaded || w.rel != start[i].rel {
			t.Errorf("reloaded %d: %+v, want %s %s", i, w, start[i].rel, Reloaded)
		}
	}
	for _, f := range within(root, again.Files) {
		if strings.HasSuffix(f.Path, filepath.Join("notes", "style.md")) && f.ImportedBy != filepath.Join(root, "home", ".claude", "CLAUDE.md") {
			t.Errorf("a reloaded import forgot its importer: %+v", f)
		}
	}
}
