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
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// smallModel is the model tack uses for small tasks, auto mode's
// classifier among them.
const smallModel = "claude-haiku-4-5"

// mainTurn answers the session's own requests, classifierTurn the
// classifier's: each request goes to its own turns whatever the order.
func mainTurn(blocks ...llm.Block) llmtest.Turn {
	t := llmtest.Reply(blocks...)
	t.When = func(r *llmtest.Request) bool { return r.Model != smallModel }
	return t
}

func classifierTurn(blocks ...llm.Block) llmtest.Turn {
	t := llmtest.Reply(blocks...)
	t.When = func(r *llmtest.Request) bool { return r.Model == smallModel }
	return t
}

func decide(decision, reason string) llm.Block {
	return llmtest.ToolUse("decide", map[string]string{"decision": decision, "reason": reason})
}

// classifierRequests are the requests made to the small model.
func classifierRequests(srv *llmtest.Server) []llmtest.Request {
	var out []llmtest.Request
	for _, r := range srv.Requests() {
		if r.Model == smallModel {
			out = append(out, r)
		}
	}
	return out
}

// lastToolResult is the tool_result the model was sent last.
func lastToolResult(t *testing.T, srv *llmtest.Server) llm.Block {
	t.Helper()
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if rs := reqs[i].ToolResults(); reqs[i].Model != smallModel && len(rs) > 0 {
			return rs[len(rs)-1]
		}
	}
	t.Fatal("no tool_result was sent to the model")
	return llm.Block{}
}

func TestAutoModeClassifierAllows(t *testing.T) {
	srv := llmtest.New(t,
		mainTurn(llmtest.ToolUse("Bash", map[string]string{"command": "touch made.txt"})),
		classifierTurn(decide("allow", "creating a file in the project is what the user asked for")),
		mainTurn(llmtest.Text("done")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionAuto
	opts.AllowedTools = []string{"Bash(npm test *)"}
	opts.DisallowedTools = []string{"WebFetch"}
	if err := os.WriteFile(filepath.Join(opts.Cwd, "CLAUDE.md"), []byte("Never push to main."), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs := collect(t, context.Background(), "please create made.txt", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if _, err := os.Stat(filepath.Join(opts.Cwd, "made.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v (result %+v)", err, res)
	}
	if len(res.PermissionDenials) != 0 {
		t.Errorf("denials %+v", res.PermissionDenials)
	}
	reqs := classifierRequests(srv)
	if len(reqs) != 1 {
		t.Fatalf("%d classifier requests, want 1", len(reqs))
	}
	in := reqs[0].LastUserText()
	for _, want := range []string{"please create made.txt", "Tool: Bash", `"command":"touch made.txt"`, "Bash(npm test *)", "WebFetch", "Never push to main."} {
		if !strings.Contains(in, want) {
			t.Errorf("the classifier request lacks %q:\n%s", want, in)
		}
	}
	if !strings.Contains(reqs[0].SystemText(), "decide") || reqs[0].Tool("decide") == nil ||
		!strings.Contains(string(reqs[0].ToolChoice), `"name":"decide"`) {
		t.Errorf("the classifier is not made to answer through decide: system %q, tool_choice %s", reqs[0].SystemText(), reqs[0].ToolChoice)
	}
	if _, ok := res.ModelUsage[smallModel]; !ok {
		t.Errorf("the classifier's usage is not counted: %+v", res.ModelUsage)
	}
}

func TestAutoModeClassifierBlocks(t *testing.T) {
	srv := llmtest.New(t,
		mainTurn(llmtest.ToolUse("Bash", map[string]string{"command": "rm -rf keep"})),
		classifierTurn(decide("block", "it deletes a directory the user did not mention")),
		mainTurn(llmtest.Text("I will leave it")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionAuto
	if err := os.Mkdir(filepath.Join(opts.Cwd, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	var deniedReasons []string
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{
		agent.HookPermissionDenied: {{Hooks: []agent.HookCallback{func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
			deniedReasons = append(deniedReasons, in.(*agent.PermissionDeniedHookInput).Reason)
			return nil, nil
		}}}},
	}
	msgs := collect(t, context.Background(), "tidy up", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if _, err := os.Stat(filepath.Join(opts.Cwd, "keep")); err != nil {
		t.Fatalf("the blocked command ran: %v", err)
	}
	const reason = "it deletes a directory the user did not mention"
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" {
		t.Fatalf("denials %+v", res.PermissionDenials)
	}
	if r := lastToolResult(t, srv); !r.IsError || !strings.Contains(llm.TextOf(r.Content), reason) {
		t.Errorf("the model was told %+v", r)
	}
	if len(deniedReasons) != 1 || !strings.Contains(deniedReasons[0], reason) {
		t.Errorf("PermissionDenied hooks heard %q", deniedReasons)
	}
	shown := slices.ContainsFunc(msgs, func(m agent.Message) bool {
		s, ok := m.(*agent.SystemMessage)
		return ok && s.Subtype == agent.SubtypePermissionDenied && strings.Contains(s.Reason, reason)
	})
	if !shown {
		t.Errorf("no permission_denied message with the reason")
	}
}

// Rules and the mode decide first: a deny rule, an allow rule and an edit
// inside the project never reach the classifier.
func TestAutoModeRulesComeBeforeTheClassifier(t *testing.T) {
	cases := []struct {
		name    string
		call    llm.Block
		allow   []string
		deny    []string
		allowed bool
	}{
		{"deny rule", llmtest.ToolUse("Bash", map[string]string{"command": "touch x.txt"}), nil, []string{"Bash(touch *)"}, false},
		{"allow rule", llmtest.ToolUse("Bash", map[string]string{"command": "touch x.txt"}), []string{"Bash(touch *)"}, nil, true},
		{"edit inside", llmtest.ToolUse("Write", map[string]string{"file_path": "x.txt", "content": "x"}), nil, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, mainTurn(c.call), mainTurn(llmtest.Text("ok")))
			opts := testOptions(t, srv)
			opts.PermissionMode = agent.PermissionAuto
			opts.AllowedTools, opts.DisallowedTools = c.allow, c.deny
			msgs := collect(t, context.Background(), "make x.txt", opts)
			res := msgs[len(msgs)-1].(*agent.ResultMessage)
			_, err := os.Stat(filepath.Join(opts.Cwd, "x.txt"))
			if (err == nil) != c.allowed {
				t.Errorf("ran=%v, want %v (denials %+v)", err == nil, c.allowed, res.PermissionDenials)
			}
			if n := len(classifierRequests(srv)); n != 0 {
				t.Errorf("%d classifier requests, want none", n)
			}
		})
	}
}

// An answer that is not a decision blocks the call: auto mode fails
// closed.
func TestAutoModeMalformedAnswerBlocks(t *testing.T) {
	answers := map[string]llm.Block{
		"prose":          llmtest.Text("Sure, that looks fine to me."),
		"other decision": decide("maybe", "unsure"),
		"block, no why":  decide("block", " "),
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(t,
				mainTurn(llmtest.ToolUse("Bash", map[string]string{"command": "touch x.txt"})),
				classifierTurn(answer),
				mainTurn(llmtest.Text("ok")))
			opts := testOptions(t, srv)
			opts.PermissionMode = agent.PermissionAuto
			msgs := collect(t, context.Background(), "make x.txt", opts)
			res := msgs[len(msgs)-1].(*agent.ResultMessage)
			if _, err := os.Stat(filepath.Join(opts.Cwd, "x.txt")); err == nil {
				t.Fatal("the call ran on a malformed answer")
			}
			if len(res.PermissionDenials) != 1 {
				t.Errorf("denials %+v", res.PermissionDenials)
			}
			if got := llm.TextOf(lastToolResult(t, srv).Content); !strings.Contains(got, "classifier failed") {
				t.Errorf("the model was told %q", got)
			}
		})
	}
}

// The classifier accepts a bare JSON object from a model that answers in
// text instead of through the tool.
func TestAutoModeAnswerInText(t *testing.T) {
	srv := llmtest.New(t,
		mainTurn(llmtest.ToolUse("Bash", map[string]string{"command": "touch x.txt"})),
		classifierTurn(llmtest.Text("```json\n{\"decision\": \"allow\", \"reason\": \"asked for\"}\n```")),
		mainTurn(llmtest.Text("ok")))
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionAuto
	collect(t, context.Background(), "make x.txt", opts)
	if _, err := os.Stat(filepath.Join(opts.Cwd, "x.txt")); err != nil {
		t.Fatalf("the allowed call did not run: %v", err)
	}
}

// A classifier request that fails blocks the call, saying so.
func TestAutoModeFailedClassifierBlocks(t *testing.T) {
	// The classifier's request gets the fault; the session's next request
	// gets the turn behind it.
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]string{"command": "touch x.txt"})),
		llmtest.Turn{Faults: []llmtest.Fault{{Status: 400, Message: "bad classifier request"}}, Content: []llm.Block{llmtest.Text("ok")}})
	opts := testOptions(t, srv)
	opts.PermissionMode = agent.PermissionAuto
	msgs := collect(t, context.Background(), "make x.txt", opts)
	res := msgs[len(msgs)-1].(*agent.ResultMessage)
	if _, err := os.Stat(filepath.Join(opts.Cwd, "x.txt")); err == nil {
		t.Fatal("the call ran though the classifier failed")
	}
	if reqs := srv.Requests(); len(reqs) != 3 || reqs[1].Model != smallModel {
		t.Fatalf("requests: %d, the second to %q", len(reqs), reqs[1].Model)
	}
	if len(res.PermissionDenials) != 1 {
		t.Errorf("denials %+v", res.PermissionDenials)
	}
	if got := llm.TextOf(lastToolResult(t, srv).Content); !strings.Contains(got, "classifier failed") || !strings.Contains(got, "bad classifier request") {
		t.Errorf("the model was told %q", got)
	}
}
