package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// parentTurn and childTurn script the two sides of a session with
// subagents; requests are told apart by the prompt that began them.
func turnFor(first string, blocks ...llm.Block) llmtest.Turn {
	return llmtest.Turn{Content: blocks, When: llmtest.FirstUserContains(first)}
}

func agentCall(typ, prompt string) llm.Block {
	return llmtest.ToolUse("Agent", map[string]any{"subagent_type": typ, "description": "a task", "prompt": prompt})
}

func requestsFor(srv *llmtest.Server, first string) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if llmtest.FirstUserContains(first)(&r) {
			out = append(out, r)
		}
	}
	return out
}

func TestSubagentHasItsOwnPromptToolsAndContext(t *testing.T) {
	turns := []llmtest.Turn{
		turnFor("please review", agentCall("reviewer", "CHILD: review a.txt")),
		turnFor("CHILD:", llmtest.ToolUse("Read", map[string]string{"file_path": "a.txt"})),
		turnFor("CHILD:", llmtest.ToolUse("Agent", map[string]any{"description": "nest", "prompt": "go deeper"})),
		turnFor("CHILD:", llmtest.Text("REPORT: a.txt looks fine")),
		turnFor("please review", llmtest.Text("done")),
	}
	// The subagent's spending shows in the session's modelUsage and cost,
	// not in its usage.
	for i := range turns {
		turns[i].Usage = &llm.Usage{InputTokens: 1, OutputTokens: 1}
		if i >= 1 && i <= 3 {
			turns[i].Usage = &llm.Usage{InputTokens: 1000, OutputTokens: 100}
		}
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: turns})
	opts := testOptions(t, srv)
	os.WriteFile(filepath.Join(opts.Cwd, "a.txt"), []byte("alpha\n"), 0o644)
	opts.Agents = map[string]agent.AgentDefinition{"reviewer": {
		Description: "Reviews code", Prompt: "You are the REVIEWER agent.", Tools: []string{"Read", "Grep"}}}
	var mu sync.Mutex
	var hookAgents []string
	record := func(_ context.Context, in agent.HookInput, payload json.RawMessage) (*agent.HookOutput, error) {
		var p struct {
			Event     string `json:"hook_event_name"`
			AgentID   string `json:"agent_id"`
			AgentType string `json:"agent_type"`
			Tool      string `json:"tool_name"`
		}
		json.Unmarshal(payload, &p)
		mu.Lock()
		hookAgents = append(hookAgents, p.Event+" "+p.Tool+" "+p.AgentType+" "+strings.Split(p.AgentID, "_")[0])
		mu.Unlock()
		return nil, nil
	}
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{
		agent.HookPreToolUse:    {{Hooks: []agent.HookCallback{record}}},
		agent.HookSubagentStart: {{Hooks: []agent.HookCallback{record}}},
		agent.HookSubagentStop:  {{Hooks: []agent.HookCallback{record}}},
	}
	msgs := collect(t, context.Background(), "please review", opts)

	child := requestsFor(srv, "CHILD:")
	if len(child) != 3 {
		t.Fatalf("%d child requests", len(child))
	}
	if sys := child[0].SystemText(); !strings.Contains(sys, "You are the REVIEWER agent.") {
		t.Errorf("child system prompt lacks the agent's prompt:\n%s", sys)
	}
	if got := child[0].ToolNames(); !slices.Equal(got, []string{"Grep", "Read"}) && !slices.Equal(got, []string{"Read", "Grep"}) {
		t.Errorf("child tools %v, want Read and Grep only", got)
	}
	for _, r := range child {
		if strings.Contains(string(r.Body), "please review") {
			t.Error("the parent's conversation leaked into the subagent's")
		}
	}
	if res := child[1].ToolResults(); len(res) != 1 || res[0].IsError || !strings.Contains(llm.TextOf(res[0].Content), "alpha") {
		t.Errorf("child Read result %+v", res)
	}
	if res := child[2].ToolResults(); len(res) != 1 || !res[0].IsError {
		t.Errorf("a subagent could start a subagent: %+v", res)
	}
	parent := requestsFor(srv, "please review")
	if len(parent) != 2 {
		t.Fatalf("%d parent requests", len(parent))
	}
	if res := parent[1].ToolResults(); len(res) != 1 || !strings.Contains(llm.TextOf(res[0].Content), "REPORT: a.txt looks fine") {
		t.Errorf("parent did not get the report: %+v", res)
	}
	if slices.Contains(parent[0].ToolNames(), "Agent") == false {
		t.Error("the parent was not offered Agent")
	}

	// The subagent's messages stream with the Agent call as their parent.
	agentUse := parent[1].Messages[1].Content[0].ID
	var nested, started, notified int
	for _, m := range msgs {
		switch m := m.(type) {
		case *agent.AssistantMessage:
			if m.ParentToolUseID != nil && *m.ParentToolUseID == agentUse {
				nested++
			}
		case *agent.SystemMessage:
			switch m.Subtype {
			case "task_started":
				started++
			case "task_notification":
				notified++
				if m.Fields["status"] != "completed" {
					t.Errorf("task_notification %v", m.Fields)
				}
			}
		}
	}
	if nested != 3 || started != 1 || notified != 1 {
		t.Errorf("nested assistant messages %d, task_started %d, task_notification %d", nested, started, notified)
	}

	want := []string{
		"PreToolUse Agent  ",
		"SubagentStart  reviewer agent",
		"PreToolUse Read reviewer agent",
		"SubagentStop  reviewer agent",
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(hookAgents, want) {
		t.Errorf("hooks saw\n%q\nwant\n%q", hookAgents, want)
	}

	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if res.Usage.InputTokens != 2 || res.Usage.OutputTokens != 2 {
		t.Errorf("result usage %+v, want the main agent's 2/2 only", res.Usage)
	}
	var in, out int64
	var cost float64
	for _, mu := range res.ModelUsage {
		in, out, cost = in+mu.InputTokens, out+mu.OutputTokens, cost+mu.CostUSD
	}
	if in != 3002 || out != 302 {
		t.Errorf("modelUsage %+v, want the subagent's 3000/300 included", res.ModelUsage)
	}
	if cost <= 0 || res.TotalCostUSD != cost {
		t.Errorf("total cost %v, modelUsage costs %v", res.TotalCostUSD, cost)
	}

	// The subagent's transcript is its own file beside the session's.
	files, _ := filepath.Glob(filepath.Join(opts.Env["CLAUDE_CONFIG_DIR"], "projects", "*", res.SessionID, "subagents", "agent-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("subagent transcripts %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), `"isSidechain":true`) || !strings.Contains(string(data), "REPORT: a.txt looks fine") {
		t.Errorf("subagent transcript:\n%s", data)
	}
}

// Two Agent calls in one response run at the same time: each subagent's
// Bash command waits for the other's to have started, so run one after the
// other the first would give up and fail.
func TestSubagentsRunInParallel(t *testing.T) {
	dir := t.TempDir()
	wait := func(me, other string) string {
		return "touch " + filepath.Join(dir, me) + "; for i in $(seq 200); do [ -e " + filepath.Join(dir, other) +
			" ] && echo met-" + me + " && exit 0; sleep 0.05; done; echo alone-" + me + "; exit 1"
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("fan out", agentCall("general-purpose", "JOB-A"), agentCall("general-purpose", "JOB-B")),
		turnFor("JOB-A", llmtest.ToolUse("Bash", map[string]string{"command": wait("a", "b")})),
		turnFor("JOB-B", llmtest.ToolUse("Bash", map[string]string{"command": wait("b", "a")})),
		turnFor("JOB-A", llmtest.Text("A finished")),
		turnFor("JOB-B", llmtest.Text("B finished")),
		turnFor("fan out", llmtest.Text("both done")),
	}})
	opts := testOptions(t, srv)
	opts.AllowedTools = []string{"Bash"}
	collect(t, context.Background(), "fan out", opts)
	for _, job := range []string{"JOB-A", "JOB-B"} {
		reqs := requestsFor(srv, job)
		if len(reqs) != 2 {
			t.Fatalf("%s: %d requests", job, len(reqs))
		}
		out := llm.TextOf(reqs[1].ToolResults()[0].Content)
		if !strings.Contains(out, "met-") {
			t.Errorf("%s ran alone: %q", job, out)
		}
	}
	parent := requestsFor(srv, "fan out")
	results := parent[len(parent)-1].ToolResults()
	if len(results) != 2 || !strings.Contains(llm.TextOf(results[0].Content), "A finished") || !strings.Contains(llm.TextOf(results[1].Content), "B finished") {
		t.Errorf("reports %+v", results)
	}
}

func TestBackgroundSubagentReportThroughTaskOutput(t *testing.T) {
	idIn := func(r *llmtest.Request) string {
		res := r.ToolResults()
		if len(res) == 0 {
			return ""
		}
		_, rest, _ := strings.Cut(llm.TextOf(res[0].Content), "(id ")
		id, _, _ := strings.Cut(rest, ")")
		return id
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("start it", llmtest.ToolUse("Agent", map[string]any{"description": "bg", "prompt": "BG-JOB", "run_in_background": true})),
		turnFor("BG-JOB", llmtest.Text("background report")),
		{When: llmtest.FirstUserContains("start it"), Build: func(r *llmtest.Request) []llm.Block {
			return []llm.Block{llmtest.ToolUse("TaskOutput", map[string]any{"task_id": idIn(r), "block": true, "timeout": 30000})}
		}},
		turnFor("start it", llmtest.Text("done")),
	}})
	collect(t, context.Background(), "start it", testOptions(t, srv))
	parent := requestsFor(srv, "start it")
	if len(parent) != 3 {
		t.Fatalf("%d parent requests", len(parent))
	}
	if id := idIn(&parent[1]); !strings.HasPrefix(id, "agent_") {
		t.Fatalf("Agent result has no id: %q", llm.TextOf(parent[1].ToolResults()[0].Content))
	}
	if got := llm.TextOf(parent[2].ToolResults()[0].Content); !strings.Contains(got, "background report") {
		t.Errorf("TaskOutput gave %q", got)
	}
}

func TestWorktreeSubagentLeavesTheMainTreeAlone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("isolate", llmtest.ToolUse("Agent", map[string]any{"description": "edit", "prompt": "WT-JOB", "isolation": "worktree"})),
		turnFor("WT-JOB", llmtest.ToolUse("Write", map[string]string{"file_path": "new.txt", "content": "from the worktree\n"})),
		turnFor("WT-JOB", llmtest.Text("wrote new.txt")),
		turnFor("isolate", llmtest.Text("ok")),
	}})
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionAcceptEdits
	opts.Env["XDG_CACHE_HOME"] = t.TempDir()
	repo := opts.Cwd
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	collect(t, context.Background(), "isolate", opts)
	if _, err := os.Stat(filepath.Join(repo, "new.txt")); err == nil {
		t.Error("the worktree agent's file appeared in the main tree")
	}
	parent := requestsFor(srv, "isolate")
	report := llm.TextOf(parent[len(parent)-1].ToolResults()[0].Content)
	_, rest, ok := strings.Cut(report, "git worktree ")
	if !ok {
		t.Fatalf("report does not name the kept worktree: %q", report)
	}
	path, _, _ := strings.Cut(rest, " on branch")
	data, err := os.ReadFile(filepath.Join(path, "new.txt"))
	if err != nil || string(data) != "from the worktree\n" {
		t.Errorf("worktree file: %q %v", data, err)
	}
	if !strings.HasPrefix(path, opts.Env["XDG_CACHE_HOME"]) {
		t.Errorf("worktree %s is not under XDG_CACHE_HOME", path)
	}
	exec.Command("git", "-C", repo, "worktree", "remove", "--force", path).Run()
}

func TestSessionRunsAsACoordinatorAgent(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{
		turnFor("coordinate", agentCall("researcher", "RESEARCH")),
		turnFor("coordinate", agentCall("worker", "WORK")),
		turnFor("WORK", llmtest.Text("work done")),
		turnFor("coordinate", llmtest.Text("all done")),
	}})
	opts := testOptions(t, srv)
	opts.Agents = map[string]agent.AgentDefinition{
		"coordinator": {Description: "Coordinates", Prompt: "You are the COORDINATOR.", Tools: []string{"Read", "Agent(worker)"}, Model: "haiku"},
		"worker":      {Description: "Works", Prompt: "You are a worker."},
		"researcher":  {Description: "Researches", Prompt: "You are a researcher."},
	}
	opts.Agent = "coordinator"
	var agentTypes []string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{agent.HookPreToolUse: {{Hooks: []agent.HookCallback{func(_ context.Context, _ agent.HookInput, payload json.RawMessage) (*agent.HookOutput, error) {
		var p struct {
			AgentID   *string `json:"agent_id"`
			AgentType string  `json:"agent_type"`
		}
		json.Unmarshal(payload, &p)
		if p.AgentID == nil {
			agentTypes = append(agentTypes, p.AgentType)
		}
		return nil, nil
	}}}}}
	msgs := collect(t, context.Background(), "coordinate", opts)
	parent := requestsFor(srv, "coordinate")
	if len(parent) != 3 {
		t.Fatalf("%d requests", len(parent))
	}
	first := parent[0]
	if !strings.Contains(first.SystemText(), "You are the COORDINATOR.") {
		t.Errorf("system prompt:\n%s", first.SystemText())
	}
	if got := first.ToolNames(); !slices.Equal(got, []string{"Agent", "Read"}) && !slices.Equal(got, []string{"Read", "Agent"}) {
		t.Errorf("tools %v", got)
	}
	if !strings.Contains(first.Model, "haiku") {
		t.Errorf("model %s, want the agent's haiku", first.Model)
	}
	desc := string(first.Tool("Agent"))
	if !strings.Contains(desc, "worker") || strings.Contains(desc, "researcher") {
		t.Errorf("the Agent tool offers agents the coordinator may not start: %s", desc)
	}
	if res := parent[1].ToolResults(); len(res) != 1 || !res[0].IsError {
		t.Errorf("starting a researcher was not refused: %+v", res)
	}
	if res := parent[2].ToolResults(); len(res) != 1 || !strings.Contains(llm.TextOf(res[0].Content), "work done") {
		t.Errorf("worker report %+v", res)
	}
	if !slices.Equal(agentTypes, []string{"coordinator", "coordinator"}) {
		t.Errorf("main-thread hooks saw agent_type %q", agentTypes)
	}
	init := msgs[0].(*agent.SystemMessage)
	if !slices.Contains(init.Init.Agents, "worker") {
		t.Errorf("init agents %v", init.Init.Agents)
	}

	opts.Agent = "nobody"
	for _, err := range agent.Query(context.Background(), "x", opts) {
		if err == nil || !strings.Contains(err.Error(), "nobody") {
			t.Errorf("unknown --agent: %v", err)
		}
		break
	}
}
