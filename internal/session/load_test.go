package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

func TestLoadRoundTrip(t *testing.T) {
	s, path := standard(t, t.TempDir())
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	if got, want := jsonOf(t, tr.Messages), jsonOf(t, s.msgs); got != want {
		t.Errorf("messages differ:\n got %s\nwant %s", got, want)
	}
	if tr.Leaf != "a-0007" || tr.Leaf != s.w.Leaf() {
		t.Errorf("leaf %q (writer %q)", tr.Leaf, s.w.Leaf())
	}
	if len(tr.Chain()) != 7 || tr.Chain()[0].ParentUUID != "" || tr.Chain()[1].MessageID != "msg_1" || tr.Chain()[2].Line != 3 {
		t.Errorf("chain %+v", tr.Chain())
	}
	want := Metadata{FirstPrompt: "List the files", LastPrompt: "Now count them", Cwd: "/work/proj", GitBranch: "main",
		Model: "claude-test-1", Created: time.Date(2026, 1, 2, 3, 4, 1, 0, time.UTC)}
	if tr.Meta != want {
		t.Errorf("meta %+v\nwant %+v", tr.Meta, want)
	}
	if tr.SessionID != sid1 || tr.Skipped != 0 || len(tr.Unknown) != 0 || len(tr.Warnings) != 0 {
		t.Errorf("transcript %+v", tr)
	}
	// The writer added a last-prompt record after each turn.
	data, _ := os.ReadFile(path)
	if n := strings.Count(string(data), `{"type":"last-prompt","lastPrompt":`); n != 2 {
		t.Errorf("%d last-prompt records:\n%s", n, data)
	}
}

func TestLoadSkipsTornLastLine(t *testing.T) {
	s, path := standard(t, t.TempDir())
	appendFile(t, path, `{"parentUuid":"a-0007","isSidechain":false,"type":"assistant","message":{"id":"msg_4","content":[{"type":"te`)
	tr := mustLoad(t, path)
	if tr.Skipped != 1 || tr.Leaf != "a-0007" || jsonOf(t, tr.Messages) != jsonOf(t, s.msgs) {
		t.Errorf("skipped %d leaf %s messages %s", tr.Skipped, tr.Leaf, jsonOf(t, tr.Messages))
	}
}

func TestLoadSkipsJunkAndKeepsUnknownRecords(t *testing.T) {
	s, path := standard(t, t.TempDir())
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	junk := []string{"garbage\n", "[1,2]\n", "\n", "   \n", `{"type":"user","uuid":"bad" "x"}` + "\n",
		`{"type":"file-history-snapshot","messageId":"m","snapshot":{}}` + "\n"}
	// Junk between records: none of it is in the chain, which stays whole.
	var out []string
	out = append(out, lines[:3]...)
	out = append(out, junk...)
	out = append(out, lines[3:]...)
	if err := os.WriteFile(path, []byte(strings.Join(out, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := mustLoad(t, path)
	if jsonOf(t, tr.Messages) != jsonOf(t, s.msgs) {
		t.Errorf("messages %s", jsonOf(t, tr.Messages))
	}
	if tr.Skipped != 3 {
		t.Errorf("skipped %d, want 3", tr.Skipped)
	}
	if len(tr.Unknown) != 1 || tr.Unknown[0].Type != "file-history-snapshot" || tr.Unknown[0].Line != 9 ||
		!strings.HasPrefix(string(tr.Unknown[0].JSON), `{"type":"file-history-snapshot"`) {
		t.Errorf("unknown %+v", tr.Unknown)
	}
}

func TestLoadTornChainRecordCutsTheChain(t *testing.T) {
	_, path := standard(t, t.TempDir())
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	lines[3] = lines[3][:40] + "\n" // the tool result record, torn
	os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	// As in the SDK: only what follows the broken link comes back; the
	// assistant message that would come first is dropped, the API wants a
	// user message first.
	if len(tr.Messages) != 2 || llm.TextOf(tr.Messages[0].Content) != "Now count them" {
		t.Errorf("messages %s", jsonOf(t, tr.Messages))
	}
	if tr.Chain()[0].UUID != "a-0005" {
		t.Errorf("chain starts at %s", tr.Chain()[0].UUID)
	}
}

func TestLoadAcceptsRecordsTheSDKAppends(t *testing.T) {
	_, path := standard(t, t.TempDir())
	appendFile(t, path, `{"type":"custom-title","customTitle":"files","sessionId":"`+sid1+`"}`+"\n")
	appendFile(t, path, `{"type":"tag","tag":"wip","sessionId":"`+sid1+`"}`+"\n")
	tr := mustLoad(t, path)
	if tr.Meta.Name != "files" || tr.Meta.Tag != "wip" || len(tr.Unknown) != 0 || tr.Skipped != 0 || tr.Leaf != "a-0007" {
		t.Errorf("%+v", tr)
	}
}

func TestWriterKeepsAWholeLastRecordWithoutNewline(t *testing.T) {
	// A tool that appends its record without a newline (the SDK writes one,
	// other tools may not): the record is whole, so it is kept.
	s, path := standard(t, t.TempDir())
	appendFile(t, path, `{"type":"custom-title","customTitle":"files","sessionId":"`+sid1+`"}`)
	w := NewWriter(path, s.w.meta, "a-0007")
	w.now = clock()
	s.w = w
	s.user(llm.Text("and sort them"))
	s.assistant("msg_4", llm.Text("a.txt b.txt"))
	s.close()
	tr := mustLoad(t, path)
	if tr.Meta.Name != "files" || tr.Skipped != 0 || jsonOf(t, tr.Messages) != jsonOf(t, s.msgs) {
		t.Errorf("name %q skipped %d messages %s", tr.Meta.Name, tr.Skipped, jsonOf(t, tr.Messages))
	}
}

func TestWriterCutsATornLastLine(t *testing.T) {
	// A crash tore the last record; the SDK's renameSession then appended its
	// line right after the fragment, and that line is lost (the SDK's
	// doing). Another crash tore the next record. The resumed writer cuts
	// the new fragment and the chain goes on whole.
	s, path := standard(t, t.TempDir())
	appendFile(t, path, `{"parentUuid":"a-0007","type":"user","message":{"role":"user","content":"and so`)
	appendFile(t, path, `{"type":"custom-title","customTitle":"lost","sessionId":"`+sid1+`"}`+"\n")
	appendFile(t, path, `{"parentUuid":"a-0007","type":"user","mess`)
	w := NewWriter(path, s.w.meta, mustLoad(t, path).Leaf)
	w.now = clock()
	s.w = w
	s.user(llm.Text("and sort them"))
	s.assistant("msg_4", llm.Text("a.txt b.txt"))
	s.close()
	data, _ := os.ReadFile(path)
	if strings.Count(string(data), `{"parentUuid":"a-0007","type":"user","mess`) != 1 {
		t.Errorf("fragment kept:\n%s", data)
	}
	tr := mustLoad(t, path)
	if tr.Skipped != 1 || jsonOf(t, tr.Messages) != jsonOf(t, s.msgs) {
		t.Errorf("skipped %d messages %s", tr.Skipped, jsonOf(t, tr.Messages))
	}
	// A file holding nothing but a fragment is emptied.
	only := filepath.Join(t.TempDir(), sid2+".jsonl")
	os.WriteFile(only, []byte(`{"type":"us`), 0o600)
	w2 := NewWriter(only, Meta{SessionID: sid2}, "")
	if err := w2.SetTitle("x"); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	if data, _ := os.ReadFile(only); string(data) != `{"type":"custom-title","customTitle":"x","sessionId":"`+sid2+`"}`+"\n" {
		t.Errorf("file %q", data)
	}
}

// forked writes u1 → a1, then two branches from a1: u2 → a2 (written
// first) and u3 → a3 (written last).
func forked(t *testing.T) string {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("start"))
	a1 := s.assistant("msg_1", llm.Text("ok"))
	s.user(llm.Text("branch one"))
	s.assistant("msg_2", llm.Text("one"))
	s.close()
	w := NewWriter(path, s.w.meta, a1)
	w.now = clock()
	s.w = w
	s.user(llm.Text("branch two"))
	s.assistant("msg_3", llm.Text("two"))
	s.close()
	return path
}

func TestLoadLatestBranchWins(t *testing.T) {
	tr := mustLoad(t, forked(t))
	checkConversation(t, tr.Messages)
	var texts []string
	for _, m := range tr.Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if strings.Join(texts, "|") != "start|ok|branch two|two" || tr.Leaf != "a-0006" {
		t.Errorf("conversation %q leaf %s", texts, tr.Leaf)
	}
	// The abandoned branch is still reachable by uuid.
	other, err := tr.At("a-0004")
	if err != nil {
		t.Fatal(err)
	}
	texts = texts[:0]
	for _, m := range other.Messages {
		texts = append(texts, llm.TextOf(m.Content))
	}
	if strings.Join(texts, "|") != "start|ok|branch one|one" || other.Leaf != "a-0004" {
		t.Errorf("other branch %q leaf %s", texts, other.Leaf)
	}
}

func TestLoadCompactBoundaryStartsANewChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("first prompt"))
	s.assistant("msg_1", llm.Text("first answer"))
	if err := s.w.WriteCompactBoundary("Summary: the user asked things.", CompactMetadata{Trigger: "auto", PreTokens: 150000}); err != nil {
		t.Fatal(err)
	}
	s.user(llm.Text("after compaction"))
	s.assistant("msg_2", llm.Text("fine"))
	s.close()
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	if len(tr.Messages) != 2 {
		t.Fatalf("messages %s", jsonOf(t, tr.Messages))
	}
	if got := tr.Messages[0].Content; len(got) != 2 || got[0].Text != "Summary: the user asked things." || got[1].Text != "after compaction" {
		t.Errorf("first message %s", jsonOf(t, got))
	}
	if tr.Chain()[0].Type != TypeSystem || tr.Chain()[0].Subtype != "compact_boundary" || tr.Chain()[0].ParentUUID != "" ||
		!tr.Chain()[1].IsCompactSummary || tr.Chain()[1].ParentUUID != tr.Chain()[0].UUID {
		t.Errorf("chain %+v", tr.Chain()[:2])
	}
	// The summary is not a prompt; the first prompt is still the first one.
	if tr.Meta.FirstPrompt != "first prompt" || tr.Meta.LastPrompt != "after compaction" {
		t.Errorf("meta %+v", tr.Meta)
	}
	// The boundary line starts with type and subtype (the SDK looks for
	// "compact_boundary" in a line's first 256 bytes).
	data, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "compact_boundary") && !strings.HasPrefix(l, `{"type":"system","subtype":"compact_boundary",`) {
			t.Errorf("boundary line %s", l)
		}
	}
}

const parallelFile = `{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-02T03:04:01.000Z","message":{"role":"user","content":"read both"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-02T03:04:02.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}}]}}
{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"S","timestamp":"2026-01-02T03:04:03.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/b"}}]}}
{"type":"user","uuid":"r2","parentUuid":"a2","sessionId":"S","timestamp":"2026-01-02T03:04:04.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"B"}]}}
{"type":"user","uuid":"r1","parentUuid":"a2","sessionId":"S","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"A"}]}}
{"type":"assistant","uuid":"a3","parentUuid":"r1","sessionId":"S","timestamp":"2026-01-02T03:04:06.000Z","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"A and B"}]}}
`

func TestLoadPullsInParallelToolResults(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	os.WriteFile(path, []byte(parallelFile), 0o600)
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	var order []string
	for _, e := range tr.Chain() {
		order = append(order, e.UUID)
	}
	// r2 is off the chain (a3 follows r1): it comes back after the last
	// piece of its assistant message.
	if strings.Join(order, ",") != "u1,a1,a2,r2,r1,a3" {
		t.Errorf("chain %v", order)
	}
	// In the conversation, results follow the tool_use order.
	want := `[{"role":"user","content":[{"type":"text","text":"read both"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a"}},{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/b"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"A"},{"type":"tool_result","tool_use_id":"t2","content":"B"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"A and B"}]}]`
	if got := jsonOf(t, tr.Messages); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
}

func TestLoadPullsInPiecesOfOneResponse(t *testing.T) {
	// Two pieces of msg_1 both hang off u1 (a streaming writer chained both
	// to the prompt); the leaf's branch has a2, a1 comes back beside it.
	file := `{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-02T03:04:01.000Z","message":{"role":"user","content":"go"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2026-01-02T03:04:02.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"}]}}
{"type":"assistant","uuid":"a2","parentUuid":"u1","timestamp":"2026-01-02T03:04:03.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"done"}]}}
`
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	os.WriteFile(path, []byte(file), 0o600)
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	if got := jsonOf(t, tr.Messages[1]); got != `{"role":"assistant","content":[{"type":"text","text":"done"},{"type":"thinking","thinking":"hmm","signature":"sig"}]}` {
		t.Errorf("assistant %s", got)
	}
}

func TestLoadAnswersUnansweredToolUses(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("run it"))
	s.assistant("msg_1", toolUse("toolu_1", "Bash", `{"command":"make"}`))
	// Interrupted: the next prompt came without a result.
	s.user(llm.Text("[Request interrupted by user for tool use]"), llm.Text("try again"))
	last := s.assistant("msg_2", llm.Text("ok"), toolUse("toolu_2", "Bash", `{"command":"make -j"}`), toolUse("toolu_3", "Bash", `{"command":"true"}`))
	s.close()
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	if len(tr.Messages) != 5 || tr.Leaf != last {
		t.Fatalf("leaf %s messages %s", tr.Leaf, jsonOf(t, tr.Messages))
	}
	synthetic := func(id string) llm.Block { return llm.ToolResult(id, InterruptedResult, true) }
	if got, want := jsonOf(t, tr.Messages[2].Content[0]), jsonOf(t, synthetic("toolu_1")); got != want {
		t.Errorf("mid result %s", got)
	}
	if got, want := jsonOf(t, tr.Messages[4].Content), jsonOf(t, []llm.Block{synthetic("toolu_2"), synthetic("toolu_3")}); got != want {
		t.Errorf("trailing results %s", got)
	}
	if tr.Meta.LastPrompt != "try again" {
		t.Errorf("last prompt %q", tr.Meta.LastPrompt)
	}
}

func TestLoadDropsWhatTheAPIRefuses(t *testing.T) {
	file := `{"type":"assistant","uuid":"a0","parentUuid":null,"message":{"id":"m0","role":"assistant","content":[{"type":"text","text":"orphan answer"}]}}
{"type":"user","uuid":"u1","parentUuid":"a0","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"gone","content":"x"},{"type":"text","text":"hello","cache_control":{"type":"ephemeral"}}]}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","message":{"id":"m1","role":"assistant","content":[{"type":"thinking","thinking":"only thinking","signature":"s"}]}}
{"type":"user","uuid":"u2","parentUuid":"a1","message":{"role":"user","content":"  "}}
{"type":"assistant","uuid":"a2","parentUuid":"u2","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":""},{"type":"tool_use","id":"","name":"X","input":{}},{"type":"text","text":"hi"}]}}
{"type":"user","uuid":"u3","parentUuid":"a2","isMeta":true,"message":{"role":"user","content":"meta context"}}
`
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	os.WriteFile(path, []byte(file), 0o600)
	tr := mustLoad(t, path)
	checkConversation(t, tr.Messages)
	want := `[{"role":"user","content":[{"type":"text","text":"hello"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"hi"}]},` +
		`{"role":"user","content":[{"type":"text","text":"meta context"}]}]`
	if got := jsonOf(t, tr.Messages); got != want {
		t.Errorf("messages\n got %s\nwant %s", got, want)
	}
	// As in the SDK, a record holding a tool_result is no prompt, even an
	// orphan one, and meta records are for the model, not the listing.
	if tr.Meta.FirstPrompt != "" || tr.Meta.LastPrompt != "" {
		t.Errorf("meta %+v", tr.Meta)
	}
}

func TestRecordMetaIsSentButNotAPrompt(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("real prompt"))
	s.assistant("msg_1", llm.Text("ok"))
	if err := s.w.RecordMeta("", llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("skill body")}}); err != nil {
		t.Fatal(err)
	}
	s.sync()
	s.close()
	tr := mustLoad(t, path)
	if len(tr.Messages) != 3 || llm.TextOf(tr.Messages[2].Content) != "skill body" || !tr.Chain()[2].IsMeta {
		t.Errorf("messages %s", jsonOf(t, tr.Messages))
	}
	if tr.Meta.LastPrompt != "real prompt" {
		t.Errorf("last prompt %q", tr.Meta.LastPrompt)
	}
}

func TestAt(t *testing.T) {
	_, path := standard(t, t.TempDir())
	tr := mustLoad(t, path)
	at, err := tr.At("a-0005")
	if err != nil {
		t.Fatal(err)
	}
	checkConversation(t, at.Messages)
	if len(at.Messages) != 4 || at.Leaf != "a-0005" || len(at.Chain()) != 5 || llm.TextOf(at.Messages[3].Content) != "There are two files." {
		t.Errorf("at a-0005: leaf %s messages %s", at.Leaf, jsonOf(t, at.Messages))
	}
	// At the tool_use piece: its call was made but, from there, never run.
	at, err = tr.At("a-0003")
	if err != nil {
		t.Fatal(err)
	}
	checkConversation(t, at.Messages)
	if len(at.Messages) != 3 || at.Messages[2].Content[0].Content[0].Text != InterruptedResult {
		t.Errorf("at a-0003: %s", jsonOf(t, at.Messages))
	}
	if _, err := tr.At("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown uuid: %v", err)
	}
	// The original is untouched.
	if len(tr.Messages) != 6 || tr.Leaf != "a-0007" {
		t.Errorf("At changed the transcript")
	}
}

func TestLoadEmptyAndMissing(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, sid1+".jsonl")
	os.WriteFile(empty, nil, 0o600)
	tr := mustLoad(t, empty)
	if len(tr.Messages) != 0 || tr.Leaf != "" || len(tr.Chain()) != 0 {
		t.Errorf("%+v", tr)
	}
	_, err := LoadSession(dir, sid2)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), sid2) {
		t.Errorf("missing: %v", err)
	}
}

func TestLoadLongLine(t *testing.T) {
	// A record longer than the read buffer.
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	big := strings.Repeat("x", 3*batchSize+17)
	s.user(llm.Text("read"))
	s.assistant("msg_1", toolUse("t", "Read", `{}`))
	s.user(llm.ToolResult("t", big, false))
	s.close()
	tr := mustLoad(t, path)
	if len(tr.Messages) != 3 || tr.Messages[2].Content[0].Content[0].Text != big {
		t.Errorf("long line lost")
	}
}

func TestLoadWorkflowCost(t *testing.T) {
	dir := t.TempDir()
	_, path := standard(t, dir)
	if err := SaveLaunch(dir, sid1, Launch{CostUSD: 0.25, Model: "opus"}); err != nil {
		t.Fatal(err)
	}
	tr := mustLoad(t, path)
	if tr.Meta.CostUSD != 0.25 || tr.Meta.Model != "claude-test-1" {
		t.Errorf("meta %+v", tr.Meta)
	}
	os.WriteFile(launchPath(dir, sid1), []byte("{"), 0o600)
	tr = mustLoad(t, path)
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0].Error(), "launch.json") {
		t.Errorf("warnings %v", tr.Warnings)
	}
}

func TestLoadLineNumbersAcrossBatches(t *testing.T) {
	path := bigTranscript(t, t.TempDir(), 2500) // about 3 MB: several batches
	data, _ := os.ReadFile(path)
	if len(data) < 2*batchSize {
		t.Fatalf("only %d bytes", len(data))
	}
	lines := strings.Split(string(data), "\n")
	tr := mustLoad(t, path)
	if len(tr.Chain()) != 2500 {
		t.Fatalf("%d records", len(tr.Chain()))
	}
	for _, e := range tr.Chain() {
		if !strings.Contains(lines[e.Line-1], `"uuid":"`+e.UUID+`"`) {
			t.Fatalf("record %s is not on line %d", e.UUID, e.Line)
		}
	}
	checkConversation(t, tr.Messages)
}

// Records share the strings of the members that repeat from one to the
// next (the session, the folder, the branch, the model, the role); a value
// that changes midway is each record's own.
func TestLoadKeepsEachRecordsRepeatedMembers(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	rec := func(typ, id, parent, cwd, branch, model string) string {
		msg := `{"role":"user","content":"q ` + id + `"}`
		if typ == "assistant" {
			msg = `{"id":"m` + id + `","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"a ` + id + `"}]}`
		}
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"` + typ + `","uuid":"` + id + `","parentUuid":` + p + `,"sessionId":"` + sid1 + `","cwd":"` + cwd + `","gitBranch":"` + branch + `","timestamp":"2026-12-04T00:00:00.000Z","message":` + msg + "}\n"
	}
	data := rec("user", "u1", "", "/a", "main", "") +
		rec("assistant", "a1", "u1", "/a", "main", "claude-opus-5-5") +
		rec("user", "u2", "a1", "/b", "fix", "") +
		rec("assistant", "a2", "u2", "/b", "fix", "claude-haiku-4-5")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	chain := tr.Chain()
	if len(chain) != 4 || chain[1].Model != "claude-opus-5-5" || chain[3].Model != "claude-haiku-4-5" {
		t.Fatalf("chain %+v", chain)
	}
	if tr.Meta.Cwd != "/a" || tr.Meta.GitBranch != "fix" || tr.Meta.Model != "claude-haiku-4-5" {
		t.Errorf("meta %+v: the first record's folder, the last one's branch and model", tr.Meta)
	}
	if len(tr.Messages) != 4 || tr.Messages[2].Role != llm.RoleUser || tr.Messages[3].Role != llm.RoleAssistant {
		t.Errorf("messages %+v", tr.Messages)
	}
}

// A walk up that meets a record again (a file whose parents loop) stops
// before it, as the SDK's does, and so does one that covers every record.
func TestLoadChainStopsAtALoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	rec := func(typ, id, parent string) string {
		msg := `{"role":"user","content":"q ` + id + `"}`
		if typ == "assistant" {
			msg = `{"id":"m` + id + `","role":"assistant","content":[{"type":"text","text":"a ` + id + `"}]}`
		}
		return `{"type":"` + typ + `","uuid":"` + id + `","parentUuid":"` + parent + `","sessionId":"` + sid1 + `","message":` + msg + "}\n"
	}
	data := rec("user", "u1", "a2") + rec("assistant", "a2", "u1") + rec("user", "u3", "a2")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range tr.Chain() {
		ids = append(ids, e.UUID)
	}
	if got := strings.Join(ids, " "); got != "u1 a2 u3" || tr.Leaf != "u3" {
		t.Errorf("chain %q, leaf %q; want u1 a2 u3, u3", got, tr.Leaf)
	}
}

// A transcript of many batches, whose buffers are read into again once
// taken, loads as it does when every buffer is kept: the same messages,
// and every record tack does not know kept as its exact line (one longer
// than a batch among them); a fork, which keeps each record's line,
// copies them all.
func TestLoadAcrossReusedBatches(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, sid1+".jsonl")
	s := newScript(t, path, sid1)
	code := strings.Repeat("func f(x int) string {\n\treturn fmt.Sprintf(\"%d é\", x)\n}\n", 30)
	for i := 0; s.n < 4000; i++ {
		if i%8 == 0 {
			s.user(llm.Text(fmt.Sprintf("Please refactor module %d.", i)))
		}
		id := fmt.Sprintf("toolu_%06d", i)
		s.assistant(fmt.Sprintf("msg_%06d", i), llm.Text(fmt.Sprintf("Reading file %d.", i)),
			toolUse(id, "Read", fmt.Sprintf(`{"file_path":"/p/file%d.go"}`, i)))
		s.user(llm.ToolResult(id, code[:len(code)-i%500], false))
	}
	s.close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	var unknown []RawRecord
	for i, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n") {
		out = append(out, line...)
		if i%97 == 5 {
			pad := strings.Repeat("z", i%13)
			if i == 1205 {
				pad = strings.Repeat("long ", 2*batchSize/5)
			}
			rec := fmt.Sprintf(`{"type":"x-future","n":%d,"pad":%q}`, i, pad)
			out = append(out, rec+"\n"...)
			unknown = append(unknown, RawRecord{Type: "x-future", JSON: []byte(rec)})
		}
	}
	if len(out) < 3*batchSize {
		t.Fatalf("only %d bytes: too few batches", len(out))
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(out), "\n")

	// Kept raw lines keep every buffer: that load is the reference.
	ref, err := loadFrom(bytes.NewReader(out), path, true)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, ref.Messages)
	checkConversation(t, ref.Messages)
	if len(ref.Messages) < 2000 || !strings.Contains(want, "Reading file 1204.") {
		t.Fatalf("the reference has %d messages", len(ref.Messages))
	}
	tr := mustLoad(t, path)
	if got := jsonOf(t, tr.Messages); got != want {
		t.Fatalf("messages differ from those read without reuse (%d against %d)", len(tr.Messages), len(ref.Messages))
	}
	if len(tr.Unknown) != len(unknown) {
		t.Fatalf("%d unknown records, want %d", len(tr.Unknown), len(unknown))
	}
	for i, u := range tr.Unknown {
		if u.Type != unknown[i].Type || !bytes.Equal(u.JSON, unknown[i].JSON) || lines[u.Line-1] != string(u.JSON) {
			t.Fatalf("unknown record %d at line %d: %.80s, want %.80s", i, u.Line, u.JSON, unknown[i].JSON)
		}
	}
	fork, err := Fork(dir, sid1, sid2, "")
	if err != nil {
		t.Fatal(err)
	}
	if jsonOf(t, fork.Messages) != want {
		t.Errorf("the fork's messages differ from those read")
	}
	if back := mustLoad(t, fork.Path); jsonOf(t, back.Messages) != want {
		t.Errorf("the forked file's messages differ from those read")
	}
}
