package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

func TestEveryWrittenRecordMatchesTheTranscriptSchema(t *testing.T) {
	schema := compileSchemas(t)["transcript-record.schema.json"]
	dir := t.TempDir()
	path := filepath.Join(dir, sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("<system-reminder>ctx</system-reminder>"), llm.Text("Read the file"))
	s.assistant("msg_1", llm.Block{Type: llm.TypeThinking, Thinking: "plan", Signature: "sig"}, llm.Text("Reading."),
		toolUse("toolu_1", "Read", `{"file_path":"/a"}`))
	if err := s.w.Record(&protocol.User{UUID: "u-r", Message: llm.Message{Role: llm.RoleUser,
		Content: []llm.Block{llm.ToolResult("toolu_1", "1\tline", false)}}, ToolUseResult: map[string]any{"file": map[string]any{"filePath": "/a"}}}); err != nil {
		t.Fatal(err)
	}
	s.assistant("msg_2", llm.Text("Done."))
	if err := s.w.RecordMeta("", llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("skill body")}}); err != nil {
		t.Fatal(err)
	}
	s.sync()
	if err := s.w.SetTitle("reader"); err != nil {
		t.Fatal(err)
	}
	if err := s.w.WriteCompactBoundary("Summary.", CompactMetadata{PreTokens: 1234}); err != nil {
		t.Fatal(err)
	}
	s.user(llm.Text("go on"))
	s.assistant("msg_3", llm.Text("ok"))
	s.close()
	if _, err := Fork(dir, sid1, sid2, ""); err != nil {
		t.Fatal(err)
	}
	// What the SDK's tagSession appends is documented too.
	appendFile(t, path, `{"type":"tag","tag":"wip","sessionId":"`+sid1+`"}`+"\n")

	kinds := map[string]int{}
	for _, p := range []string{path, filepath.Join(dir, sid2+".jsonl")} {
		data, _ := os.ReadFile(p)
		for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if err := validateWith(schema, []byte(line)); err != nil {
				t.Errorf("%s line %d: %v\n%s", filepath.Base(p), i+1, err, line)
			}
			ln, _ := decodeLine([]byte(line))
			kinds[ln.typ+"/"+ln.subtype]++
		}
	}
	for _, k := range []string{"user/", "assistant/", "system/compact_boundary", "last-prompt/", "custom-title/", "tag/"} {
		if kinds[k] == 0 {
			t.Errorf("no %s record was checked (%v)", k, kinds)
		}
	}
	// The schema does refuse what tack must not write.
	for _, bad := range []string{
		`{"type":"last-prompt","lastPrompt":"x"}`,
		`{"type":"custom-title","customTitle":"","sessionId":"` + sid1 + `"}`,
		`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"` + sid1 + `","version":"1","type":"user","message":{"role":"user","content":"x"},"timestamp":"2026-01-02T03:04:01.000Z"}`,
		`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/w","sessionId":"` + sid1 + `","version":"1","type":"user","message":{"role":"assistant","content":"x"},"uuid":"u","timestamp":"2026-01-02T03:04:01.000Z"}`,
		`{"type":"system","subtype":"compact_boundary","parentUuid":"p","isSidechain":false,"userType":"external","cwd":"/w","sessionId":"` + sid1 + `","version":"1","content":"c","isMeta":false,"level":"info","compactMetadata":{"trigger":"auto","preTokens":1},"uuid":"b","timestamp":"2026-01-02T03:04:01.000Z"}`,
		`{"type":"relocated","relocatedCwd":"/x"}`,
	} {
		if validateWith(schema, []byte(bad)) == nil {
			t.Errorf("schema accepts %s", bad)
		}
	}
}
