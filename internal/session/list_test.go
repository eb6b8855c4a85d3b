package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// session writes a one-turn session with the given prompt and mtime.
func writeSession(t testing.TB, dir, id, prompt string, mtime time.Time, opts ...func(*script)) string {
	t.Helper()
	path := filepath.Join(dir, id+".jsonl")
	s := newScript(t, path, id)
	s.user(llm.Text(prompt))
	s.assistant("msg_"+id[:4], llm.Text("answer to "+prompt))
	for _, o := range opts {
		o(s)
	}
	s.close()
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

func titled(title string) func(*script) {
	return func(s *script) {
		if err := s.w.SetTitle(title); err != nil {
			s.t.Fatal(err)
		}
	}
}

func ids(infos []Info) []string {
	var out []string
	for _, in := range infos {
		out = append(out, in.ID)
	}
	return out
}

func TestListOrderAndFields(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	writeSession(t, dir, sid1, "oldest prompt", base)
	writeSession(t, dir, sid2, "newest prompt", base.Add(2*time.Hour), titled("my-task"))
	writeSession(t, dir, sid3, "middle prompt", base.Add(time.Hour))
	if err := SaveLaunch(dir, sid2, Launch{CostUSD: 1.5, Model: "opus"}); err != nil {
		t.Fatal(err)
	}
	// Hidden: a sidechain, an empty file; ignored: names that are no UUID.
	side := "44444444-5555-4666-8777-888888888888"
	os.WriteFile(filepath.Join(dir, side+".jsonl"), []byte(`{"type":"user","isSidechain":true,"uuid":"x","parentUuid":null,"message":{"role":"user","content":"sub"}}`+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "55555555-6666-4777-8888-999999999999.jsonl"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte(`{"type":"user"}`+"\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "memory"), 0o700)

	got, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids(got), ",") != strings.Join([]string{sid2, sid3, sid1}, ",") {
		t.Fatalf("order %v", ids(got))
	}
	in := got[0]
	want := Info{ID: sid2, Path: filepath.Join(dir, sid2+".jsonl"), Name: "my-task", Summary: "my-task", Cwd: "/work/proj",
		GitBranch: "main", FirstPrompt: "newest prompt", LastPrompt: "newest prompt",
		Created: time.Date(2026, 1, 2, 3, 4, 1, 0, time.UTC), Modified: in.Modified, Size: in.Size, Messages: 2,
		CostUSD: 1.5, Model: "opus"}
	if in != want {
		t.Errorf("info\n got %+v\nwant %+v", in, want)
	}
	if !in.Modified.Equal(base.Add(2*time.Hour)) || in.Size == 0 {
		t.Errorf("modified %v size %d", in.Modified, in.Size)
	}
	if got[1].Summary != "middle prompt" || got[1].Name != "" {
		t.Errorf("untitled session %+v", got[1])
	}
	// An empty project directory, or none, lists nothing.
	if l, err := List(filepath.Join(dir, "none")); err != nil || len(l) != 0 {
		t.Errorf("missing dir: %v %v", l, err)
	}
}

func TestListReadsOnlyHeadAndTailOfBigFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("first of many"))
	s.assistant("msg_0", llm.Text("ok"))
	for i := 1; i < 200; i++ {
		s.user(llm.Text(fmt.Sprintf("prompt %d %s", i, strings.Repeat("z", 900))))
		s.assistant(fmt.Sprintf("msg_%d", i), llm.Text("ok"))
		s.sync()
	}
	s.user(llm.Text("the very last"))
	s.assistant("msg_x", llm.Text("done"))
	s.close()
	got, err := List(dir)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	in := got[0]
	if in.FirstPrompt != "first of many" || in.LastPrompt != "the very last" || in.Summary != "the very last" || !in.MessagesEstimated {
		t.Errorf("%+v", in)
	}
	if in.Messages < 300 || in.Messages > 500 { // 402 records
		t.Errorf("estimated %d messages, want about 402", in.Messages)
	}
	if in.Size < 4*listWindow {
		t.Errorf("file too small for the test: %d", in.Size)
	}
}

func TestLatest(t *testing.T) {
	dir := t.TempDir()
	if _, err := Latest(dir); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty project: %v", err)
	}
	base := time.Now().Add(-time.Hour)
	writeSession(t, dir, sid1, "older", base)
	writeSession(t, dir, sid2, "newer", base.Add(time.Minute))
	// Newer still, but empty or a sidechain: skipped.
	empty := filepath.Join(dir, sid3+".jsonl")
	os.WriteFile(empty, nil, 0o600)
	side := filepath.Join(dir, "44444444-5555-4666-8777-888888888888.jsonl")
	os.WriteFile(side, []byte(`{"type":"user","isSidechain":true,"uuid":"x","parentUuid":null,"message":{"role":"user","content":"sub"}}`+"\n"), 0o600)
	in, err := Latest(dir)
	if err != nil || in.ID != sid2 {
		t.Errorf("latest %v %v", in.ID, err)
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-time.Hour)
	writeSession(t, dir, sid1, "one", base, titled("task"))
	writeSession(t, dir, sid2, "two", base.Add(time.Minute), titled("task"))
	writeSession(t, dir, sid3, "three", base.Add(2*time.Minute), titled("other"))
	const empty = "77777777-7777-4888-8999-aaaaaaaaaaaa"
	if err := os.WriteFile(filepath.Join(dir, empty+".jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ arg, want string }{{sid1, sid1}, {"task", sid2}, {"other", sid3}} {
		in, err := Resolve(dir, c.arg)
		if err != nil || in.ID != c.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", c.arg, in.ID, err, c.want)
		}
		if id, err := ResolveID(dir, c.arg); err != nil || id != c.want {
			t.Errorf("ResolveID(%q) = %s, %v; want %s", c.arg, id, err, c.want)
		}
	}
	for _, arg := range []string{"nothing", "", "66666666-7777-4888-8999-aaaaaaaaaaaa", empty} {
		if _, err := Resolve(dir, arg); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q): %v", arg, err)
		}
		if _, err := ResolveID(dir, arg); !errors.Is(err, ErrNotFound) {
			t.Errorf("ResolveID(%q): %v", arg, err)
		}
	}
	// A rename wins over the older title.
	if err := SetName(dir, sid1, "renamed"); err != nil {
		t.Fatal(err)
	}
	if in, err := Resolve(dir, "renamed"); err != nil || in.ID != sid1 {
		t.Errorf("renamed: %v %v", in.ID, err)
	}
}

func TestSetName(t *testing.T) {
	dir := t.TempDir()
	path := writeSession(t, dir, sid1, "p", time.Now())
	if err := SaveWorkflow(dir, sid1, Workflow{Cwd: "/w", PermissionMode: "default"}); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, `{"type":"assist`) // torn: cut before the title
	if err := SetName(dir, sid1, `a "quoted" <name>`); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(data), "\n"+`{"type":"custom-title","customTitle":"a \"quoted\" <name>","sessionId":"`+sid1+`"}`+"\n") {
		t.Errorf("file ends %q", data[max(0, len(data)-120):])
	}
	wf, err := LoadWorkflow(dir, sid1)
	if err != nil || wf.Name != `a "quoted" <name>` || !slices.Equal(wf.Resume, []string{"--resume", `a "quoted" <name>`}) {
		t.Errorf("workflow %+v %v", wf, err)
	}
	if err := SetName(dir, sid2, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing session: %v", err)
	}
	if err := SetName(dir, sid1, " "); err == nil {
		t.Error("empty name accepted")
	}
	if err := SetName(dir, "../x", "x"); err == nil {
		t.Error("bad id accepted")
	}
}

func TestFork(t *testing.T) {
	dir := t.TempDir()
	s, _ := standard(t, dir)
	if err := SetName(dir, sid1, "files"); err != nil {
		t.Fatal(err)
	}
	if err := SaveWorkflow(dir, sid1, Workflow{Name: "files", Cwd: "/work/proj", PermissionMode: "acceptEdits", MCPConfig: "mcp.json"}); err != nil {
		t.Fatal(err)
	}
	if err := SaveLaunch(dir, sid1, Launch{Model: "opus", MCPConfig: []string{"mcp.json"}}); err != nil {
		t.Fatal(err)
	}
	src := mustLoad(t, filepath.Join(dir, sid1+".jsonl"))
	fork, err := Fork(dir, sid1, sid2, "")
	if err != nil {
		t.Fatal(err)
	}
	checkConversation(t, fork.Messages)
	if jsonOf(t, fork.Messages) != jsonOf(t, s.msgs) {
		t.Errorf("fork messages %s", jsonOf(t, fork.Messages))
	}
	if fork.Meta.Name != "files (fork)" || fork.SessionID != sid2 || len(fork.Chain()) != len(src.Chain()) {
		t.Errorf("fork %+v", fork.Meta)
	}
	for i, e := range fork.Chain() {
		if e.UUID == src.Chain()[i].UUID || e.SessionID != sid2 || (i > 0 && e.ParentUUID != fork.Chain()[i-1].UUID) {
			t.Errorf("record %d: %+v", i, e)
		}
	}
	recs := readLines(t, fork.Path)
	if ff, _ := recs[0]["forkedFrom"].(map[string]any); ff["sessionId"] != sid1 || ff["messageUuid"] != "u-0001" {
		t.Errorf("forkedFrom %v", recs[0]["forkedFrom"])
	}
	wf, err := LoadWorkflow(dir, sid2)
	if err != nil || wf.Name != "files (fork)" || wf.PermissionMode != "acceptEdits" || wf.MCPConfig != "mcp.json" ||
		!slices.Equal(wf.Resume, []string{"--resume", "files (fork)"}) {
		t.Errorf("fork workflow %+v %v", wf, err)
	}
	if l, err := LoadLaunch(dir, sid2); err != nil || l.SessionID != sid2 || l.Model != "opus" {
		t.Errorf("fork launch %+v %v", l, err)
	}
	// --resume NAME finds the original, not the fork.
	if in, err := Resolve(dir, "files"); err != nil || in.ID != sid1 {
		t.Errorf("resolve files: %v %v", in.ID, err)
	}
	// The source is unchanged.
	if again := mustLoad(t, src.Path); jsonOf(t, again.Chain()) != jsonOf(t, src.Chain()) {
		t.Error("source changed")
	}
	// A fork at a message.
	at, err := Fork(dir, sid1, sid3, "a-0005")
	if err != nil {
		t.Fatal(err)
	}
	if len(at.Messages) != 4 || llm.TextOf(at.Messages[3].Content) != "There are two files." {
		t.Errorf("fork at: %s", jsonOf(t, at.Messages))
	}
	// An existing id is never overwritten.
	if _, err := Fork(dir, sid1, sid2, ""); err == nil {
		t.Error("fork over an existing session")
	}
	if _, err := Fork(dir, sid1, "66666666-7777-4888-8999-aaaaaaaaaaaa", "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown uuid: %v", err)
	}
}

func TestPurge(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	writeSession(t, dir, sid1, "old", now.Add(-48*time.Hour))
	writeSession(t, dir, sid2, "new", now, titled("keep-me"))
	SaveWorkflow(dir, sid1, Workflow{Cwd: "/w", PermissionMode: "default"})
	// A sidecar directory whose transcript was never written.
	orphan := "66666666-7777-4888-8999-aaaaaaaaaaaa"
	SaveWorkflow(dir, orphan, Workflow{Cwd: "/w", PermissionMode: "default"})
	var seen []string
	removed, err := Purge(dir, func(in Info) bool {
		seen = append(seen, in.ID)
		return in.Name == "keep-me"
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(removed)
	if strings.Join(removed, ",") != sid1+","+orphan || len(seen) != 3 {
		t.Errorf("removed %v seen %v", removed, seen)
	}
	for _, p := range []string{sid1 + ".jsonl", sid1, orphan} {
		if _, err := os.Stat(filepath.Join(dir, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there", p)
		}
	}
	if l, _ := List(dir); len(l) != 1 || l[0].ID != sid2 {
		t.Errorf("left %v", ids(l))
	}
	if removed, err := Purge(dir, nil); err != nil || len(removed) != 1 {
		t.Errorf("purge all: %v %v", removed, err)
	}
}
