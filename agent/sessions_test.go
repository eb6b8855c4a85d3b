package agent_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// A session that ran is listed, and its conversation reads back as the
// model saw it, from the folder SessionsDir names.
func TestStoredSessions(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Forty-two.")))
	opts := testOptions(t, srv)
	var id string
	for _, m := range collect(t, context.Background(), "what is the answer?", opts) {
		if r, ok := m.(*agent.ResultMessage); ok {
			id = r.SessionID
		}
	}
	dir, err := agent.SessionsDir(opts)
	if err != nil || !strings.HasPrefix(dir, filepath.Join(opts.Env["CLAUDE_CONFIG_DIR"], "projects")+string(filepath.Separator)) {
		t.Fatalf("sessions dir %q %v", dir, err)
	}
	list, err := agent.ListSessions(opts)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Summary != "what is the answer?" || list[0].Path != filepath.Join(dir, id+".jsonl") {
		t.Fatalf("list %+v %v", list, err)
	}
	msgs, err := agent.SessionMessages(opts, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Role != agent.RoleUser || !strings.Contains(agent.TextOf(msgs[0].Content), "what is the answer?") ||
		msgs[1].Role != agent.RoleAssistant || agent.TextOf(msgs[1].Content) != "Forty-two." {
		t.Errorf("messages %+v", msgs)
	}
	if _, err := agent.SessionMessages(opts, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a session never written: %v", err)
	}
}

func TestModels(t *testing.T) {
	models := agent.Models()
	var sonnet bool
	for _, m := range models {
		if m.ID == "" || m.DisplayName == "" || m.ContextWindow <= 0 || m.MaxOutputTokens <= 0 {
			t.Errorf("model %+v", m)
		}
		for _, a := range m.Aliases {
			sonnet = sonnet || a == "sonnet"
		}
	}
	if !sonnet {
		t.Errorf("no model is called sonnet: %+v", models)
	}
}
