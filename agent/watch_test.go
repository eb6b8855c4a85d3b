package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// A rule the session saves to a settings file is its own write: it fires
// no ConfigChange, while an edit by someone else does. The session's write
// comes first, so its change would be reported first.
func TestSavedRuleFiresNoConfigChange(t *testing.T) {
	opts := testOptions(t, llmtest.New(t))
	local := filepath.Join(opts.Cwd, ".claude", "settings.local.json")
	project := filepath.Join(opts.Cwd, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{local, project} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changed := make(chan string, 10)
	opts.SettingSources = []string{"project", "local"}
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookConfigChange: {{Hooks: []agent.HookCallback{
		func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
			changed <- in.(*agent.ConfigChangeHookInput).FilePath
			return nil, nil
		}}}}}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.UpdatePermissions(allowLS); err != nil {
		t.Fatal(err)
	}
	tmp := project + ".new"
	if err := os.WriteFile(tmp, []byte(`{"permissions": {"deny": ["Bash(rm *)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, project); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-changed:
		if got != project {
			t.Fatalf("ConfigChange for %s first, want %s (the session's own write of %s fired it)", got, project, local)
		}
	case <-time.After(time.Minute):
		t.Fatal("no ConfigChange for the edit of the project settings")
	}
}
