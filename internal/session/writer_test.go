package session

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

func TestWriterChainsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p", "sid.jsonl")
	w := NewWriter(path, Meta{SessionID: "sid", Cwd: "/work", Version: "v", Entrypoint: "cli"}, "")
	stop := "end_turn"
	msgs := []protocol.Message{
		&protocol.User{UUID: "u1", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hi <b>")}}},
		&protocol.System{Subtype: "init"}, // not part of the conversation: skipped
		&protocol.Assistant{UUID: "a1", Message: protocol.APIMessage{ID: "msg_1", Type: "message", Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("yo")}, StopReason: &stop}},
		&protocol.User{UUID: "u2", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("t", "ok", false)}}, ToolUseResult: map[string]any{"stdout": "ok"}},
	}
	for _, m := range msgs {
		if err := w.Record(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readLines(t, path)
	if len(recs) != 4 || recs[3]["type"] != "last-prompt" || recs[3]["lastPrompt"] != "hi <b>" {
		t.Fatalf("records %v", recs)
	}
	recs = recs[:3]
	parents := []any{nil, "u1", "a1"}
	for i, r := range recs {
		if r["parentUuid"] != parents[i] || r["sessionId"] != "sid" || r["cwd"] != "/work" || r["entrypoint"] != "cli" {
			t.Errorf("record %d: %v", i, r)
		}
		if ts, _ := r["timestamp"].(string); !strings.HasSuffix(ts, "Z") || len(ts) != 24 {
			t.Errorf("timestamp %q", ts)
		}
	}
	if recs[1]["type"] != "assistant" || recs[1]["message"].(map[string]any)["id"] != "msg_1" {
		t.Errorf("assistant record %v", recs[1])
	}
	if recs[2]["toolUseResult"] == nil {
		t.Error("tool result record lacks toolUseResult")
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "hi <b>") {
		t.Error("HTML was escaped in the transcript")
	}
}

func TestWriterCutsATornLineBeforeAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	torn := `{"type":"user","uuid":"x","parentUuid":null,"message":{"role":"user","content":"a"}}` + "\n" + `{"type":"assist`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	w := NewWriter(path, Meta{SessionID: "s"}, "x")
	if err := w.Record(&protocol.User{UUID: "y", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("b")}}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[0], `"content":"a"}}`) || lines[2] != `{"type":"last-prompt","lastPrompt":"b","sessionId":"s"}` {
		t.Fatalf("lines %q", lines)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil || rec["uuid"] != "y" || rec["parentUuid"] != "x" {
		t.Errorf("appended record %v (%v)", rec, err)
	}
}

func TestProjectDirResolvesSymlinks(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	env := func(k string) string { return "" }
	resolved, _ := filepath.EvalSymlinks(real)
	if got := ProjectDir("/cfg", link, env); got != filepath.Join("/cfg", "projects", Slug(resolved)) {
		t.Errorf("ProjectDir = %s", got)
	}
	named := func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": "/cfg", "CLAUDE_CODE_PROJECT_DIR_NAME": "my_proj-1"}[k]
	}
	if got := ProjectDir("/cfg", link, named); got != "/cfg/projects/my_proj-1" {
		t.Errorf("named ProjectDir = %s", got)
	}
	if ConfigDir(named) != "/cfg" || ConfigDir(func(k string) string { return map[string]string{"HOME": "/h"}[k] }) != "/h/.claude" {
		t.Error("ConfigDir")
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestWriterRecordCompaction(t *testing.T) {
	// What the engine calls (engine.CompactRecorder).
	var _ interface {
		RecordCompaction(trigger string, preTokens int, first protocol.Message) error
	} = (*Writer)(nil)
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("long work"))
	s.assistant("msg_1", llm.Text("done"))
	first := &protocol.User{UUID: "sum-1", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("Summary."), llm.Text("<system-reminder>memory</system-reminder>")}}}
	if err := s.w.RecordCompaction("auto", 1234, first); err != nil {
		t.Fatal(err)
	}
	if err := s.w.RecordCompaction("auto", 1, &protocol.Assistant{}); err == nil {
		t.Error("compaction opening with an assistant message accepted")
	}
	s.assistant("msg_2", llm.Text("continuing"))
	s.close()
	recs := readLines(t, path)
	var boundary, summary map[string]any
	for i, r := range recs {
		if r["subtype"] == "compact_boundary" {
			boundary, summary = r, recs[i+1]
		}
	}
	if boundary == nil || boundary["parentUuid"] != nil || boundary["logicalParentUuid"] != "a-0002" ||
		boundary["compactMetadata"].(map[string]any)["preTokens"] != 1234.0 || boundary["compactMetadata"].(map[string]any)["trigger"] != "auto" {
		t.Fatalf("boundary %v", boundary)
	}
	if summary["uuid"] != "sum-1" || summary["parentUuid"] != boundary["uuid"] || summary["isCompactSummary"] != true {
		t.Errorf("summary %v", summary)
	}
	tr := mustLoad(t, path)
	if len(tr.Messages) != 2 || llm.TextOf(tr.Messages[1].Content) != "continuing" || tr.Meta.FirstPrompt != "long work" {
		t.Errorf("after compaction: %s %+v", jsonOf(t, tr.Messages), tr.Meta)
	}
}

// Flush writes the pending last-prompt record at once, and the turn's
// Sync then writes it no second time.
func TestWriterFlushWritesTheLastPrompt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p", "sid.jsonl")
	w := NewWriter(path, Meta{SessionID: "sid", Cwd: "/work", Version: "v"}, "")
	if err := w.Record(&protocol.User{UUID: "u1", Message: llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hello")}}}); err != nil {
		t.Fatal(err)
	}
	if recs := readLines(t, path); len(recs) != 1 {
		t.Fatalf("before Flush: %v", recs)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if recs := readLines(t, path); len(recs) != 2 || recs[1]["type"] != "last-prompt" || recs[1]["lastPrompt"] != "hello" {
		t.Fatalf("after Flush: %v", recs)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := readLines(t, path); len(recs) != 2 {
		t.Errorf("the last-prompt record was written again: %v", recs)
	}
}
