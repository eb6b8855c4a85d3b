package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// runPrompts sends each prompt with its id and waits for its result.
func runPrompts(t *testing.T, c *agent.Client, prompts ...agent.Prompt) {
	t.Helper()
	for _, p := range prompts {
		if err := c.SendPrompt(p); err != nil {
			t.Fatal(err)
		}
		for _, err := range c.ReceiveResponse() {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestRewindFilesPutsFilesBack(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "a.txt", "content": "one\n"})),
		llmtest.Reply(llmtest.Text("wrote a")),
		llmtest.Reply(llmtest.ToolUse("Edit", map[string]string{"file_path": "a.txt", "old_string": "one", "new_string": "two\nthree"})),
		llmtest.Reply(llmtest.ToolUse("Write", map[string]string{"file_path": "b.txt", "content": "bee\n"})),
		llmtest.Reply(llmtest.Text("changed")),
	)
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionAcceptEdits
	opts.FileCheckpointing = true
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const first, second = "5f1b8a55-55a6-4b1e-9c0e-1a2b3c4d5e6f", "6a2c9b66-66b7-4c2f-8d1f-2b3c4d5e6f70"
	runPrompts(t, c, agent.Prompt{Text: "write a", ID: first}, agent.Prompt{Text: "change things", ID: second})
	a, b := filepath.Join(opts.Cwd, "a.txt"), filepath.Join(opts.Cwd, "b.txt")
	read := func(p string) string {
		data, err := os.ReadFile(p)
		if err != nil {
			return "(absent)"
		}
		return string(data)
	}
	if read(a) != "two\nthree\n" || read(b) != "bee\n" {
		t.Fatalf("files before rewinding: %q %q", read(a), read(b))
	}

	dry := c.RewindFiles(second, true)
	if !dry.CanRewind || !slices.Equal(dry.FilesChanged, []string{a, b}) || dry.Insertions != 1 || dry.Deletions != 3 {
		t.Errorf("dry run %+v", dry)
	}
	if read(a) != "two\nthree\n" || read(b) != "bee\n" {
		t.Error("a dry run changed files")
	}
	if r := c.RewindFiles(second, false); !r.CanRewind || len(r.FilesChanged) != 2 {
		t.Errorf("rewind %+v", r)
	}
	if read(a) != "one\n" || read(b) != "(absent)" {
		t.Errorf("after rewinding the second prompt: %q %q", read(a), read(b))
	}
	if r := c.RewindFiles(first, false); !r.CanRewind || read(a) != "(absent)" {
		t.Errorf("rewind to the first prompt %+v: a.txt %q", r, read(a))
	}
	if r := c.RewindFiles("no-such-message", false); r.CanRewind || !strings.Contains(r.Error, "no-such-message") {
		t.Errorf("unknown message %+v", r)
	}

	// The prompts' user messages are recorded under the ids given.
	dir, err := agent.SessionsDir(opts)
	if err != nil {
		t.Fatal(err)
	}
	transcript, err := os.ReadFile(filepath.Join(dir, c.SessionID()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.Lines(string(transcript)) {
		var rec struct {
			Type    string `json:"type"`
			UUID    string `json:"uuid"`
			Message struct {
				Role string `json:"role"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == "user" && rec.Message.Role == agent.RoleUser {
			ids = append(ids, rec.UUID)
		}
	}
	if !slices.Contains(ids, first) || !slices.Contains(ids, second) {
		t.Errorf("user message uuids %v", ids)
	}
}

func TestRewindFilesNeedsCheckpointing(t *testing.T) {
	srv := llmtest.New(t)
	c, err := agent.NewClient(context.Background(), testOptions(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := c.RewindFiles("x", false); r.CanRewind || !strings.Contains(r.Error, "not enabled") {
		t.Errorf("%+v", r)
	}
}
