package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

const (
	sid1 = "11111111-2222-4333-8444-555555555555"
	sid2 = "22222222-3333-4444-8555-666666666666"
	sid3 = "33333333-4444-4555-8666-777777777777"
)

// clock is a deterministic time source: each call is one second later.
func clock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// script builds a transcript through the Writer the way the engine records
// a session: one assistant record per content block, one user record per
// prompt or tool-result message.
type script struct {
	t    testing.TB
	w    *Writer
	n    int
	msgs []llm.Message // what the model saw, merged per API message
}

func newScript(t testing.TB, path, sessionID string) *script {
	w := NewWriter(path, Meta{SessionID: sessionID, Cwd: "/work/proj", Version: "0.1.0", GitBranch: "main", Entrypoint: "cli"}, "")
	w.now = clock()
	return &script{t: t, w: w}
}

func (s *script) uuid(prefix string) string {
	s.n++
	return fmt.Sprintf("%s-%04d", prefix, s.n)
}

// user records one user message.
func (s *script) user(blocks ...llm.Block) string {
	s.t.Helper()
	id := s.uuid("u")
	m := llm.Message{Role: llm.RoleUser, Content: blocks}
	if err := s.w.Record(&protocol.User{Type: "user", UUID: id, Message: m}); err != nil {
		s.t.Fatal(err)
	}
	s.msgs = append(s.msgs, m)
	return id
}

// assistant records one response, one record per block; it returns the
// uuid of the last piece.
func (s *script) assistant(msgID string, blocks ...llm.Block) string {
	s.t.Helper()
	var id string
	stop := "end_turn"
	for i, b := range blocks {
		id = s.uuid("a")
		am := protocol.APIMessage{ID: msgID, Type: "message", Role: llm.RoleAssistant, Model: "claude-test-1", Content: []llm.Block{b}}
		if i == len(blocks)-1 {
			am.StopReason = &stop
		}
		if err := s.w.Record(&protocol.Assistant{Type: "assistant", UUID: id, Message: am}); err != nil {
			s.t.Fatal(err)
		}
	}
	s.msgs = append(s.msgs, llm.Message{Role: llm.RoleAssistant, Content: blocks})
	return id
}

func (s *script) sync() {
	s.t.Helper()
	if err := s.w.Sync(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *script) close() {
	s.t.Helper()
	if err := s.w.Close(); err != nil {
		s.t.Fatal(err)
	}
}

func toolUse(id, name, input string) llm.Block {
	return llm.Block{Type: llm.TypeToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
}

// standard writes a two-turn session with a tool call and returns the
// script (closed) and the transcript path.
func standard(t testing.TB, dir string) (*script, string) {
	path := filepath.Join(dir, sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("<system-reminder>\nContents of /work/proj/CLAUDE.md\n</system-reminder>"), llm.Text("List the files"))
	s.assistant("msg_1", llm.Text("I'll list them."), toolUse("toolu_1", "Bash", `{"command":"ls"}`))
	s.user(llm.ToolResult("toolu_1", "a.txt\nb.txt", false))
	s.assistant("msg_2", llm.Text("There are two files."))
	s.sync()
	s.user(llm.Text("Now count them"))
	s.assistant("msg_3", llm.Text("2"))
	s.sync()
	s.close()
	return s, path
}

func mustLoad(t testing.TB, path string) *Transcript {
	t.Helper()
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkConversation fails unless msgs is what the Messages API accepts:
// user first, roles alternating, no empty message, every tool_use answered
// by exactly one tool_result in the next message and every tool_result
// answering a tool_use of the previous one.
func checkConversation(t testing.TB, msgs []llm.Message) {
	t.Helper()
	if err := validConversation(msgs); err != nil {
		t.Fatalf("%v\n%s", err, jsonOf(t, msgs))
	}
}

func validConversation(msgs []llm.Message) error {
	seen := map[string]bool{}
	for i, m := range msgs {
		want := llm.RoleUser
		if i%2 == 1 {
			want = llm.RoleAssistant
		}
		if m.Role != want {
			return fmt.Errorf("message %d has role %s, want %s", i, m.Role, want)
		}
		if len(m.Content) == 0 {
			return fmt.Errorf("message %d is empty", i)
		}
		var uses []string
		for _, b := range m.Content {
			if b.Type == llm.TypeText && b.Raw == nil && strings.TrimSpace(b.Text) == "" {
				return fmt.Errorf("message %d has an empty text block", i)
			}
			if b.CacheControl != nil {
				return fmt.Errorf("message %d keeps a cache breakpoint", i)
			}
			if b.Type == llm.TypeToolUse {
				if m.Role != llm.RoleAssistant || b.ID == "" || seen[b.ID] {
					return fmt.Errorf("message %d: bad or repeated tool_use %q", i, b.ID)
				}
				seen[b.ID] = true
				uses = append(uses, b.ID)
			}
			if b.Type == llm.TypeToolResult && m.Role != llm.RoleUser {
				return fmt.Errorf("message %d: tool_result in an assistant message", i)
			}
		}
		var prevUses []string
		if i > 0 {
			for _, b := range msgs[i-1].Content {
				if b.Type == llm.TypeToolUse {
					prevUses = append(prevUses, b.ID)
				}
			}
		}
		if m.Role == llm.RoleUser {
			var results []string
			for _, b := range m.Content {
				if b.Type == llm.TypeToolResult {
					results = append(results, b.ToolUseID)
				}
			}
			if strings.Join(results, ",") != strings.Join(prevUses, ",") {
				return fmt.Errorf("message %d answers %v, want %v", i, results, prevUses)
			}
			// Results come first.
			for j, b := range m.Content {
				if b.Type == llm.TypeToolResult && j >= len(results) {
					return fmt.Errorf("message %d: tool_result after other blocks", i)
				}
			}
		}
		if i == len(msgs)-1 && len(uses) > 0 {
			return fmt.Errorf("last message has unanswered tool_use %v", uses)
		}
	}
	return nil
}
