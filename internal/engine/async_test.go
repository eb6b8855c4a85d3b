package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/tool"
)

// TestAsyncHookIsHeardOnTheNextTurn runs an async PostToolUse hook that
// cannot finish before the model's next request (it waits for a file the
// next tool call makes): the run goes on without it, and the request after
// it ended carries its system message and additional context, once, while
// the user is shown the system message.
func TestAsyncHookIsHeardOnTheNextTurn(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	async := hook.Handler{Type: hook.TypeCommand, Async: true, Timeout: 30, Command: `while [ ! -f '` + release + `' ]; do sleep 0.01; done
echo '{"systemMessage":"lint: 2 warnings","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"run the linter on main.go"}}'`}
	ended := make(chan struct{})
	var once sync.Once
	log := &HookLog{}
	r, err := hook.New(hook.Options{Hooks: hook.Config{hook.PostToolUse: {{Matcher: "Echo", Hooks: []hook.Handler{async}}}},
		Observer: func(rec hook.Record) {
			log.Observe(rec)
			if rec.Phase == hook.PhaseResponse && rec.Result.Async {
				once.Do(func() { close(ended) })
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	// Wait lets the hook finish, and returns once the runner holds its
	// result.
	wait := &testTool{name: "Wait", run: func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		if err := os.WriteFile(release, nil, 0o600); err != nil {
			return tool.Result{}, err
		}
		select {
		case <-ended:
			return tool.TextResult("the hook ended", nil), nil
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}}
	var notes []string
	h := newHarness(t, []tool.Tool{echoTool("Echo", false), wait}, []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Echo", map[string]string{"text": "edit main.go"})),
		llmtest.Reply(llmtest.ToolUse("Wait", nil)),
		llmtest.Reply(llmtest.Text("done")),
	}, func(c *Config) {
		c.Hooks, c.HookLog = r, log
		c.Notify = func(m string) { notes = append(notes, m) }
	})
	if res := h.run(context.Background(), "go"); res.IsError {
		t.Fatalf("result %+v", res)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	const heard = "<system-reminder>\nAsync hook additional context: lint: 2 warnings\nrun the linter on main.go\n</system-reminder>"
	count := func(i int) int {
		n := 0
		for _, m := range reqs[i].Messages {
			for _, b := range m.Content {
				if b.Type == llm.TypeText && strings.Contains(b.Text, "run the linter on main.go") {
					n++
					if b.Text != heard {
						t.Errorf("request %d: %q", i, b.Text)
					}
				}
			}
		}
		return n
	}
	if n := count(1); n != 0 {
		t.Errorf("the request sent while the hook ran carries its output")
	}
	if n := count(2); n != 1 {
		t.Errorf("the next request carries the async output %d times, want once", n)
	}
	if len(notes) != 1 || notes[0] != "lint: 2 warnings" {
		t.Errorf("the user was shown %q", notes)
	}
}
