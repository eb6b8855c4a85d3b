package main

// End-to-end tests of the hook events of tool calls and turns —
// PermissionDenied, PostToolBatch, StopFailure, PostToolUseFailure,
// SubagentStop — and of a PreToolUse defer carried over a resume, with the
// real binary, real command hooks logging their payloads (each validated
// against its schema by hooktest.ReadLog) and the fake API.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/hook/hooktest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/session"
)

// hookSettings writes the project settings: a logging hook on every event
// (log in a directory of its own), plus the extra command hooks per event,
// after the logging one. It returns the log's path.
func (e *env) hookSettings(extra map[hook.Event][]string, more map[string]any) string {
	e.t.Helper()
	log := filepath.Join(e.t.TempDir(), "hooks.jsonl")
	hooks := hooktest.LoggingHooks(log)
	for ev, cmds := range extra {
		for _, cmd := range cmds {
			hooks[string(ev)] = append(hooks[string(ev)].([]any), map[string]any{
				"matcher": "", "hooks": []any{map[string]any{"type": "command", "command": cmd}}})
		}
	}
	settings := map[string]any{"hooks": hooks}
	for k, v := range more {
		settings[k] = v
	}
	data, err := json.Marshal(settings)
	if err != nil {
		e.t.Fatal(err)
	}
	e.settings("settings.json", string(data))
	return log
}

// jsonOf is v as compact JSON, for comparing decoded values.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// PostToolBatch after a turn of two parallel Reads: once, after both
// PostToolUse and before the next request, with both calls in order and the
// responses PostToolUse got; a second hook's additionalContext is in the
// next request.
func TestPostToolBatchAfterTwoParallelReads(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "alpha\n")
	e.write("b.txt", "beta\n")
	readA := map[string]any{"file_path": filepath.Join(e.dir, "a.txt")}
	readB := map[string]any{"file_path": filepath.Join(e.dir, "b.txt")}
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", readA), llmtest.ToolUse("Read", readB)),
		llmtest.Reply(llmtest.Text("read both")),
	)
	addContext := `echo '{"hookSpecificOutput":{"hookEventName":"PostToolBatch","additionalContext":"BATCH-CONTEXT: compare the two files"}}'`
	log := e.hookSettings(map[hook.Event][]string{hook.PostToolBatch: {addContext}}, nil)
	out, errOut := e.run("-p", "read a and b", "--output-format", "json")
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	got := hooktest.ReadLog(t, log)
	var order []hook.Event
	for _, ev := range hooktest.Events(got) {
		if ev == hook.PostToolUse || ev == hook.PostToolBatch || ev == hook.Stop {
			order = append(order, ev)
		}
	}
	if want := []hook.Event{hook.PostToolUse, hook.PostToolUse, hook.PostToolBatch, hook.Stop}; !slices.Equal(order, want) {
		t.Fatalf("events %v, want %v", order, want)
	}
	batch := hooktest.Only(got, hook.PostToolBatch)[0]
	calls, _ := batch.Fields["tool_calls"].([]any)
	ids := e.srv.Requests()[0].ToolUseIDs()
	if len(calls) != 2 {
		t.Fatalf("tool_calls %s", batch.Raw)
	}
	for i, c := range calls {
		c := c.(map[string]any)
		input := []map[string]any{readA, readB}[i]
		if c["tool_name"] != "Read" || c["tool_use_id"] != ids[i] || jsonOf(c["tool_input"]) != jsonOf(input) {
			t.Errorf("call %d: %v, want Read %s %v", i, c, ids[i], input)
		}
		// The result as the model read it, as Claude Code sends it.
		res, _ := e.srv.Requests()[1].ToolResult(ids[i])
		if resp, _ := c["tool_response"].(string); resp != llm.TextOf(res.Content) || !strings.Contains(resp, []string{"alpha", "beta"}[i]) {
			t.Errorf("call %d tool_response %q, the model read %q", i, c["tool_response"], llm.TextOf(res.Content))
		}
	}
	next := e.srv.Requests()[1]
	if !strings.Contains(llm.TextOf(next.LastMessage().Content), "BATCH-CONTEXT: compare the two files") {
		t.Errorf("the next request's last message lacks the batch's context: %+v", next.LastMessage())
	}
	if n := len(next.ToolResults()); n != 2 {
		t.Errorf("%d tool results in the next request, want 2", n)
	}
}

// StopFailure after an injected API 400, in place of Stop: the error type,
// the API's message, and the last assistant text.
func TestStopFailureAfterAPI400(t *testing.T) {
	e := newEnv(t)
	e.write("a.txt", "alpha\n")
	e.srv.Append(
		llmtest.Reply(llmtest.Text("Reading the note."), llmtest.ToolUse("Read", map[string]any{"file_path": filepath.Join(e.dir, "a.txt")})),
		llmtest.Turn{Content: []llm.Block{llmtest.Text("never")}, Faults: []llmtest.Fault{{Status: 400, Message: "messages.1: something is malformed"}}},
	)
	log := e.hookSettings(nil, nil)
	out, errOut := e.run("-p", "read it", "--output-format", "json")
	if e.status != 1 {
		t.Fatalf("exit %d, want 1: %s\n%s", e.status, out, errOut)
	}
	if res := resultOf(t, out); res["terminal_reason"] != "api_error" {
		t.Errorf("result %v", res)
	}
	got := hooktest.ReadLog(t, log)
	if n := len(hooktest.Only(got, hook.Stop)); n != 0 {
		t.Errorf("Stop fired %d times on an API error", n)
	}
	failures := hooktest.Only(got, hook.StopFailure)
	if len(failures) != 1 {
		t.Fatalf("StopFailure fired %d times, want once (events %v)", len(failures), hooktest.Events(got))
	}
	f := failures[0]
	if f.String("error") != "invalid_request" || !strings.Contains(f.String("error_details"), "messages.1: something is malformed") ||
		f.String("last_assistant_message") != "Reading the note." {
		t.Errorf("StopFailure %s", f.Raw)
	}
	if evs := hooktest.Events(got); evs[len(evs)-2] != hook.StopFailure || evs[len(evs)-1] != hook.SessionEnd {
		t.Errorf("events %v: want StopFailure to end the turn, before SessionEnd", evs)
	}
}

// PermissionDenied for a deny rule, a hook's deny and a dontAsk denial,
// each with the reason the model reads; retry:true says so in the result.
func TestPermissionDeniedForRuleHookAndMode(t *testing.T) {
	e := newEnv(t)
	write := map[string]any{"file_path": filepath.Join(e.dir, "w.txt"), "content": "w\n"}
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "rm -f keep.txt"})),
		llmtest.Reply(llmtest.ToolUse("Write", write)),
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch made.txt"})),
		llmtest.Reply(llmtest.Text("nothing was allowed")),
	)
	e.write("keep.txt", "keep\n")
	denyWrite := `grep -q '"tool_name":"Write"' && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"writes are frozen"}}'; true`
	retry := `grep -q '"tool_name":"Write"' && echo '{"hookSpecificOutput":{"hookEventName":"PermissionDenied","retry":true}}'; true`
	log := e.hookSettings(map[hook.Event][]string{hook.PreToolUse: {denyWrite}, hook.PermissionDenied: {retry}},
		map[string]any{"permissions": map[string]any{"deny": []string{"Bash(rm *)"}}})
	out, errOut := e.run("-p", "try things", "--output-format", "json", "--permission-mode", "dontAsk")
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "keep.txt")); err != nil {
		t.Error("the denied rm ran")
	}
	for _, name := range []string{"w.txt", "made.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, name)); err == nil {
			t.Errorf("%s exists: a denied call ran", name)
		}
	}
	if denials, _ := resultOf(t, out)["permission_denials"].([]any); len(denials) != 3 {
		t.Errorf("permission_denials %v, want 3", denials)
	}
	denied := hooktest.Only(hooktest.ReadLog(t, log), hook.PermissionDenied)
	if len(denied) != 3 {
		t.Fatalf("PermissionDenied fired %d times, want 3", len(denied))
	}
	reqs := e.srv.Requests()
	for i, c := range []struct{ tool, reason string }{{"Bash", "rm"}, {"Write", "writes are frozen"}, {"Bash", "dontAsk"}} {
		p := denied[i]
		id := reqs[i].ToolUseIDs()[0]
		r, _ := reqs[i+1].ToolResult(id)
		text := llm.TextOf(r.Content)
		if p.String("tool_name") != c.tool || p.String("tool_use_id") != id || !strings.Contains(p.String("reason"), c.reason) ||
			!strings.HasPrefix(text, p.String("reason")) {
			t.Errorf("denial %d: %s\nthe model read %q", i, p.Raw, text)
		}
		if retried := strings.Contains(text, "may try this call again"); retried != (c.tool == "Write") {
			t.Errorf("denial %d: retry note %v in %q, want it only where the hook said retry", i, retried, text)
		}
	}
}

// deferUnlessApproved is a PreToolUse hook deferring Write calls until the
// file approved exists.
func deferUnlessApproved(approved string) string {
	return fmt.Sprintf(`grep -q '"tool_name":"Write"' && [ ! -e %q ] && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}'; true`, approved)
}

// deferred is a session whose run ended on a deferred Write.
type deferred struct {
	e                *env
	log              string
	approved, target string
	id, sessionID    string
	write            map[string]any
}

// startDeferred runs a prompt whose Write call a PreToolUse hook defers
// (until the file d.approved exists) and checks the run's end: the result
// is a success with tool_deferred and the deferred call, which did not run
// and is no denial, and the transcript keeps its tool_use without a result.
// after are the turns the resumed session is answered with.
func startDeferred(t *testing.T, after ...llmtest.Turn) *deferred {
	t.Helper()
	e := newEnv(t)
	d := &deferred{e: e, approved: filepath.Join(t.TempDir(), "approved"), target: filepath.Join(e.dir, "deploy.txt")}
	d.write = map[string]any{"file_path": d.target, "content": "shipped\n"}
	e.srv.Append(llmtest.Reply(llmtest.Text("Writing the deploy note."), llmtest.ToolUse("Write", d.write)))
	e.srv.Append(after...)
	d.log = e.hookSettings(map[hook.Event][]string{hook.PreToolUse: {deferUnlessApproved(d.approved)}}, nil)
	out, errOut := e.run("-p", "write the deploy note", "--output-format", "json", "--permission-mode", "acceptEdits")
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	res := resultOf(t, out)
	d.id = e.srv.Requests()[0].ToolUseIDs()[0]
	d.sessionID, _ = res["session_id"].(string)
	d.checkDeferred(t, res, 1)
	got := hooktest.ReadLog(t, d.log)
	if n := len(hooktest.Only(got, hook.PermissionDenied)); n != 0 {
		t.Errorf("PermissionDenied fired %d times for a deferral", n)
	}
	if n := len(hooktest.Only(got, hook.PostToolUse)); n != 0 {
		t.Errorf("PostToolUse fired %d times for a call that did not run", n)
	}
	real, _ := filepath.EvalSymlinks(e.dir)
	data, err := os.ReadFile(filepath.Join(e.home, ".claude", "projects", session.Slug(real), d.sessionID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs := conversation(lines(t, string(data)))
	last := jsonOf(recs[len(recs)-1])
	if recs[len(recs)-1]["type"] != "assistant" || !strings.Contains(last, `"tool_use"`) || !strings.Contains(last, d.id) ||
		strings.Contains(string(data), `"tool_use_id":"`+d.id+`"`) {
		t.Errorf("the transcript must end with the tool_use, unanswered: %s", last)
	}
	return d
}

// checkDeferred checks a result that ends on the deferred call, requests
// being the number of requests the model got so far.
func (d *deferred) checkDeferred(t *testing.T, res map[string]any, requests int) {
	t.Helper()
	want := jsonOf(map[string]any{"id": d.id, "name": "Write", "input": d.write})
	if res["subtype"] != "success" || res["is_error"] != false || res["stop_reason"] != "tool_deferred" ||
		res["terminal_reason"] != "tool_deferred" || jsonOf(res["deferred_tool_use"]) != want {
		t.Fatalf("result %s, want tool_deferred with %s", jsonOf(res), want)
	}
	if denials, _ := res["permission_denials"].([]any); len(denials) != 0 {
		t.Errorf("permission_denials %v: a deferral is no denial", denials)
	}
	if _, err := os.Stat(d.target); err == nil {
		t.Fatal("the deferred write happened")
	}
	if n := len(d.e.srv.Requests()); n != requests {
		t.Errorf("%d requests, want %d: the run ends at the deferral", n, requests)
	}
}

// resume resumes the session with a prompt and the extra flags.
func (d *deferred) resume(t *testing.T, prompt string, flags ...string) map[string]any {
	t.Helper()
	args := append([]string{"-p", "--resume", d.sessionID, prompt, "--output-format", "json"}, flags...)
	out, errOut := d.e.run(args...)
	if d.e.status != 0 {
		t.Fatalf("resume: exit %d: %s\n%s", d.e.status, out, errOut)
	}
	return resultOf(t, out)
}

// A PreToolUse defer ends the run with tool_deferred; resuming the session
// offers the call to the hooks again: still deferred, the run ends again
// on it without asking the model; approved, it runs, its result reaches
// the model with the new prompt and the conversation goes on.
func TestDeferThenResumeDecidesTheCall(t *testing.T) {
	d := startDeferred(t, llmtest.Reply(llmtest.Text("Wrote it.")))
	d.checkDeferred(t, d.resume(t, "still waiting?", "--permission-mode", "acceptEdits"), 1)

	// The host decides: approved.
	if err := os.WriteFile(d.approved, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := d.resume(t, "approved: go on", "--permission-mode", "acceptEdits")
	if res["subtype"] != "success" || res["result"] != "Wrote it." || res["deferred_tool_use"] != nil || res["terminal_reason"] != "completed" {
		t.Errorf("resumed result %s", jsonOf(res))
	}
	if got, err := os.ReadFile(d.target); err != nil || string(got) != "shipped\n" {
		t.Errorf("the approved write: %q %v", got, err)
	}
	req := d.e.srv.Requests()[1]
	if r, ok := req.ToolResult(d.id); !ok || r.IsError {
		t.Errorf("the resumed request's result for the call: %+v (found %v)", r, ok)
	}
	if text := req.LastUserText(); !strings.Contains(text, "approved: go on") || !strings.Contains(text, "still waiting?") {
		t.Errorf("the prompts of the resumes are not in the request: %q", text)
	}
	got := hooktest.ReadLog(t, d.log)
	var pre []string
	for _, p := range hooktest.Only(got, hook.PreToolUse) {
		pre = append(pre, p.String("tool_use_id"))
	}
	if !slices.Equal(pre, []string{d.id, d.id, d.id}) {
		t.Errorf("PreToolUse fired for %v, want the deferred call at each run", pre)
	}
	if post := hooktest.Only(got, hook.PostToolUse); len(post) != 1 || post[0].String("tool_use_id") != d.id {
		t.Errorf("PostToolUse %v", hooktest.Events(got))
	}
}

// Resumed, the deferred call meets the permission check too: in print mode
// without acceptEdits nobody can approve the write, so it is denied — a
// denial, with PermissionDenied — and the conversation goes on.
func TestResumedDeferredCallMeetsThePermissionCheck(t *testing.T) {
	d := startDeferred(t, llmtest.Reply(llmtest.Text("Could not write it.")))
	if err := os.WriteFile(d.approved, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := d.resume(t, "go on", "--permission-mode", "default")
	if res["result"] != "Could not write it." || res["deferred_tool_use"] != nil {
		t.Errorf("resumed result %s", jsonOf(res))
	}
	if denials, _ := res["permission_denials"].([]any); len(denials) != 1 || denials[0].(map[string]any)["tool_use_id"] != d.id {
		t.Errorf("permission_denials %v, want the deferred call", denials)
	}
	if _, err := os.Stat(d.target); err == nil {
		t.Error("the denied write happened")
	}
	if r, ok := d.e.srv.Requests()[1].ToolResult(d.id); !ok || !r.IsError {
		t.Errorf("the resumed request's result for the call: %+v (found %v)", r, ok)
	}
	if denied := hooktest.Only(hooktest.ReadLog(t, d.log), hook.PermissionDenied); len(denied) != 1 || denied[0].String("tool_use_id") != d.id {
		t.Errorf("PermissionDenied %v", denied)
	}
}

// A deny and a defer on the same call deny it, whichever hook answers
// first: the call does not run, it is a denial, and the run goes on.
func TestDenyOutranksDeferInEitherOrder(t *testing.T) {
	deny := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"DENIED-BY-POLICY"}}'`
	deferIt := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}'`
	for _, c := range []struct {
		name        string
		first, last string
	}{
		{"deny answers first", deny, "sleep 0.5; " + deferIt},
		{"defer answers first", deferIt, "sleep 0.5; " + deny},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			target := filepath.Join(e.dir, "x.txt")
			e.srv.Append(
				llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "x"})),
				llmtest.Reply(llmtest.Text("it was denied")),
			)
			e.hookSettings(map[hook.Event][]string{hook.PreToolUse: {c.first, c.last}}, nil)
			out, errOut := e.run("-p", "write x", "--output-format", "json", "--permission-mode", "acceptEdits")
			if e.status != 0 {
				t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
			}
			res := resultOf(t, out)
			if res["terminal_reason"] != "completed" || res["deferred_tool_use"] != nil || res["result"] != "it was denied" {
				t.Errorf("result %s", out)
			}
			if denials, _ := res["permission_denials"].([]any); len(denials) != 1 {
				t.Errorf("permission_denials %v, want the call", denials)
			}
			if _, err := os.Stat(target); err == nil {
				t.Error("the denied write happened")
			}
			r := e.srv.Requests()[1].ToolResults()[0]
			if !r.IsError || !strings.Contains(llm.TextOf(r.Content), "DENIED-BY-POLICY") {
				t.Errorf("result %+v", r)
			}
		})
	}
}

// PostToolUseFailure of a Bash call the user interrupts carries the error
// and is_interrupt: true.
func TestPostToolUseFailureOfAnInterruptedBash(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo started > started; sleep 300"})))
	log := e.hookSettings(nil, nil)
	cmd := exec.Command(tackBin, "-p", "wait", "--allowedTools", "Bash", "--output-format", "json")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + e.srv.URL(), "SHELL=/bin/bash"}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !started; time.Sleep(20 * time.Millisecond) {
		_, err := os.Stat(filepath.Join(e.dir, "started"))
		started = err == nil
	}
	if !started {
		cmd.Process.Kill()
		t.Fatal("the command never started")
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("tack did not stop after Ctrl-C")
	}
	if res := resultOf(t, stdout.String()); res["terminal_reason"] != "aborted_tools" {
		t.Errorf("result %v", res)
	}
	got := hooktest.ReadLog(t, log)
	failures := hooktest.Only(got, hook.PostToolUseFailure)
	if len(failures) != 1 {
		t.Fatalf("PostToolUseFailure fired %d times (events %v)", len(failures), hooktest.Events(got))
	}
	f := failures[0]
	if f.Fields["is_interrupt"] != true || f.String("error") == "" || f.String("tool_name") != "Bash" {
		t.Errorf("PostToolUseFailure %s", f.Raw)
	}
}

// SubagentStop carries agent_transcript_path: the subagent's own
// transcript, which exists and holds its conversation.
func TestSubagentStopTranscriptPathExists(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("Agent", map[string]any{"subagent_type": "worker", "description": "a task", "prompt": "SUB-JOB"})),
		llmtest.Reply(llmtest.Text("SUB-ANSWER")),
		llmtest.Reply(llmtest.Text("done")),
	)
	log := e.hookSettings(nil, nil)
	out, errOut := e.run("-p", "delegate", "--output-format", "json",
		"--agents", `{"worker": {"description": "Works", "prompt": "You work."}}`)
	if e.status != 0 {
		t.Fatalf("exit %d: %s\n%s", e.status, out, errOut)
	}
	got := hooktest.ReadLog(t, log)
	stops := hooktest.Only(got, hook.SubagentStop)
	if len(stops) != 1 {
		t.Fatalf("SubagentStop fired %d times (events %v)", len(stops), hooktest.Events(got))
	}
	s := stops[0]
	path := s.String("agent_transcript_path")
	if s.String("agent_type") != "worker" || s.String("agent_id") == "" || s.String("last_assistant_message") != "SUB-ANSWER" {
		t.Errorf("SubagentStop %s", s.Raw)
	}
	if path == s.String("transcript_path") || !strings.Contains(path, s.String("agent_id")) {
		t.Errorf("agent_transcript_path %q: want the subagent's own file (session's is %q)", path, s.String("transcript_path"))
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), "SUB-JOB") || !strings.Contains(string(data), "SUB-ANSWER") {
		t.Errorf("agent_transcript_path %q: %v\n%s", path, err, data)
	}
}

// TestStopHookSeesRunningBackgroundTasks: a background Bash command still
// running when the model stops is in Stop's background_tasks (id, type
// shell, status, description, command), so that a hook can keep the model
// from stopping before it ends; a session without one sends none.
func TestStopHookSeesRunningBackgroundTasks(t *testing.T) {
	e := newEnv(t)
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "sleep 30", "description": "wait for the build", "run_in_background": true})),
		llmtest.Reply(llmtest.Text("started it")),
	)
	log := e.hookSettings(nil, nil)
	_, errOut := e.run("-p", "start the build", "--allowedTools", "Bash(sleep *)")
	if e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	stops := hooktest.Only(hooktest.ReadLog(t, log), hook.Stop)
	if len(stops) != 1 {
		t.Fatalf("Stop fired %d times", len(stops))
	}
	tasks, _ := stops[0].Fields["background_tasks"].([]any)
	if len(tasks) != 1 {
		t.Fatalf("background_tasks %v, want the running sleep: %s", stops[0].Fields["background_tasks"], stops[0].Raw)
	}
	task := tasks[0].(map[string]any)
	if task["id"] != "bash_1" || task["type"] != "shell" || task["status"] != "running" ||
		task["description"] != "wait for the build" || task["command"] != "sleep 30" {
		t.Errorf("background task %v", task)
	}

	// No background command: no list.
	e.srv.Append(llmtest.Reply(llmtest.Text("nothing to run")))
	log = e.hookSettings(nil, nil)
	if _, errOut := e.run("-p", "say hi"); e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	if stop := hooktest.Only(hooktest.ReadLog(t, log), hook.Stop); len(stop) != 1 || stop[0].Has("background_tasks") {
		t.Errorf("Stop without background tasks: %v", stop)
	}
}
