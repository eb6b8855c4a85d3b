package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/cmd/tack-worker/internal/gittest"
	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/cmd/tack-worker/task"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// dyingTerminal runs commands for real, and cuts off the attempt (as the
// death of its worker would) once the command numbered dieAt has run.
type dyingTerminal struct {
	mu     sync.Mutex
	n      int
	dieAt  int
	cancel context.CancelFunc
}

func (d *dyingTerminal) Run(ctx context.Context, args []string, dir string, env []string) (string, int, error) {
	out, code, err := processTerminal{}.Run(ctx, args, dir, env)
	d.mu.Lock()
	d.n++
	die := d.n == d.dieAt
	d.mu.Unlock()
	if die {
		d.cancel()
		<-ctx.Done()
	}
	return out, code, err
}

func toolUse(id, name string, input any) llm.Block {
	data, _ := json.Marshal(input)
	return llm.Block{Type: "tool_use", ID: id, Name: name, Input: data}
}

// A worker that dies while a Bash command runs, after the model asked for
// it: the next worker restores the workspace from the snapshot, resumes
// the session, tells the model the call was interrupted, and does not run
// it again; the change lands on the task's branch.
func TestTakeOverAfterDeathMidTool(t *testing.T) {
	dir := t.TempDir()
	url, repo := gittest.Repo(t, dir, "app", map[string]string{"README": "app\n"})
	counter := filepath.Join(dir, "counter")
	st, err := store.Open(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	var resumeText string
	srv := llmtest.New(t,
		llmtest.Turn{Content: []llm.Block{toolUse("toolu_write1", "Write", map[string]string{"file_path": "FIRST", "content": "one\n"})}},
		llmtest.Turn{Content: []llm.Block{toolUse("toolu_bash1", "Bash", map[string]string{"command": "echo ran >> " + counter})}},
		llmtest.Turn{Build: func(r *llmtest.Request) []llm.Block {
			resumeText = r.LastUserText()
			return []llm.Block{toolUse("toolu_write2", "Write", map[string]string{"file_path": "SECOND", "content": "two\n"})}
		}},
		llmtest.Turn{Content: []llm.Block{llm.Text("all done")}},
	)
	env := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_MODEL": ""}
	in := RunInput{RunID: "fleet-x/task-1", Task: task.Task{ID: "task-1", Repo: url, Prompt: "make the files",
		PermissionMode: "bypassPermissions", Branch: "tack/x/task-1"}}

	ctx, cancel := context.WithCancel(context.Background())
	first := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w1"), WorkerID: "w1", Env: env,
		Terminal: &dyingTerminal{dieAt: 1, cancel: cancel}}
	if _, err := first.RunAgent(ctx, in); err == nil {
		t.Fatal("the first attempt ended without error though its worker died")
	}
	run, _ := st.Run(in.RunID)
	calls, err := run.Tools()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, c := range calls {
		states[c.ID] = c.State
	}
	if states["toolu_write1"] != store.ToolFinished || states["toolu_bash1"] != store.ToolStarted {
		t.Fatalf("tool records after the death: %v", states)
	}
	// The dead attempt's two model responses were paid for.
	dead, _, err := run.State()
	if err != nil || dead.AttemptCostUSD <= 0 {
		t.Fatalf("state after the death: %+v, %v: no cost of the dead attempt", dead, err)
	}

	second := &Runner{Store: st, WorkRoot: filepath.Join(dir, "w2"), WorkerID: "w2", Env: env}
	res, err := second.RunAgent(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(counter); string(data) != "ran\n" {
		t.Fatalf("the Bash command ran %q times (counter file), want once", data)
	}
	if !strings.Contains(resumeText, "toolu_bash1") || !strings.Contains(resumeText, "interrupted") {
		t.Fatalf("the resumed session's prompt does not report the interrupted call:\n%s", resumeText)
	}
	if res.Text != "all done" || res.Attempts != 2 || res.Branch != "tack/x/task-1" {
		t.Fatalf("result %+v", res)
	}
	final, _, _ := run.State()
	if res.CostUSD <= dead.AttemptCostUSD || final.CostUSD != res.CostUSD || final.AttemptCostUSD != 0 {
		t.Fatalf("cost %v after a dead attempt that spent %v (state %+v): both attempts count", res.CostUSD, dead.AttemptCostUSD, final)
	}
	// The first worker's Write came back from the snapshot, the second's
	// was made on top of it.
	if got := gittest.Show(t, repo, "tack/x/task-1", "FIRST"); got != "one" {
		t.Fatalf("FIRST on the branch: %q", got)
	}
	if got := gittest.Show(t, repo, "tack/x/task-1", "SECOND"); got != "two" {
		t.Fatalf("SECOND on the branch: %q", got)
	}
	if res.WorkflowRecord == "" {
		t.Fatal("no workflow record in the result")
	}
	if _, err := os.Stat(res.Transcript); err != nil {
		t.Fatalf("transcript in the store: %v", err)
	}
	// Done runs are not run again.
	again, err := second.RunAgent(context.Background(), in)
	if err != nil || again.Commit != res.Commit {
		t.Fatalf("a finished run ran again: %+v, %v", again, err)
	}
}

var _ agent.Terminal = processTerminal{}
