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
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
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

func TestWriterEndsATornLineBeforeAppending(t *testing.T) {
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
	if len(lines) != 3 || lines[1] != `{"type":"assist` {
		t.Fatalf("lines %q", lines)
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &last); err != nil || last["uuid"] != "y" || last["parentUuid"] != "x" {
		t.Errorf("appended record %v (%v)", last, err)
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
