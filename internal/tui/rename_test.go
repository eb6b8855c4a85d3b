package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// /rename in a real terminal names the session in its workflow record at
// once, and the record still validates against the seed's schema.
func TestTerminalRenameWritesTheWorkflowRecord(t *testing.T) {
	requireTmux(t)
	bin := buildTack(t)
	proj, home := t.TempDir(), t.TempDir()
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("Hello there.")))
	trustFolder(t, proj, home)
	s := startTmux(t, proj, terminalEnv(home, srv), bin+"; sleep 600")
	s.waitFor("/help for commands")
	s.text("hi")
	s.keys("Enter")
	s.waitFor("Hello there.")
	// The answer shows before the turn has ended; /rename typed in between
	// is refused with "wait until the model has finished", so try again.
	for tries := 0; !strings.Contains(s.capture(), "Named this conversation auth-refactor"); tries++ {
		if tries == 50 {
			t.Fatalf("/rename never taken:\n%s", s.capture())
		}
		busy := strings.Count(s.capture(), "wait until the model has finished")
		s.text("/rename auth-refactor")
		s.keys("Enter")
		deadline := time.Now().Add(30 * time.Second)
		for screen := s.capture(); !strings.Contains(screen, "Named this conversation auth-refactor") &&
			strings.Count(screen, "wait until the model has finished") == busy; screen = s.capture() {
			if time.Now().After(deadline) {
				t.Fatalf("/rename got no answer:\n%s", screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	opts := agent.Options{Cwd: proj, Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}}
	list, err := agent.ListSessions(opts)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v %v", list, err)
	}
	dir, err := agent.SessionsDir(opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, list[0].ID, "workflow.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sch jsonschema.Schema
	if err := json.Unmarshal(agent.WorkflowSchema(), &sch); err != nil {
		t.Fatal(err)
	}
	res, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if err := res.Validate(doc); err != nil {
		t.Fatalf("the record does not match the seed's schema: %v\n%s", err, data)
	}
	if doc["name"] != "auth-refactor" || len(doc["resume"].([]any)) != 2 || doc["resume"].([]any)[1] != "auth-refactor" {
		t.Errorf("record after /rename:\n%s", data)
	}
	if shown, err := agent.SessionWorkflow(opts, "auth-refactor"); err != nil || len(shown) == 0 {
		t.Errorf("SessionWorkflow by the new name: %v", err)
	}
}
