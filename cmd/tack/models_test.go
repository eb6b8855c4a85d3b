package main

// End-to-end tests of model choice: names that are no model, models
// outside availableModels (also on resume), and ids tack has no price for.

import (
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func TestUnknownModelIsRefusedBeforeAnyRequest(t *testing.T) {
	e := newEnv(t)
	_, errOut := e.run("-p", "hi", "--model", "sonet")
	if e.status != 1 || !strings.Contains(errOut, `unknown model "sonet" (did you mean "sonnet"?)`) || !strings.Contains(errOut, "opus, sonnet, haiku") {
		t.Errorf("exit %d: %s", e.status, errOut)
	}
	e.extra = []string{"ANTHROPIC_MODEL=mistral-large"}
	_, errOut = e.run("-p", "hi")
	if e.status != 1 || !strings.Contains(errOut, `ANTHROPIC_MODEL: unknown model "mistral-large"`) {
		t.Errorf("exit %d: %s", e.status, errOut)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d requests were made", n)
	}
}

func TestUnpricedModelIdRunsWithAWarning(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("ok")))
	out, errOut := e.run("-p", "hi", "--model", "claude-future-9")
	if e.status != 0 || strings.TrimSpace(out) != "ok" || !strings.Contains(errOut, "model claude-future-9 is not in tack's catalogue: its cost is unknown") {
		t.Errorf("exit %d: %s %s", e.status, out, errOut)
	}
	if reqs := e.srv.Requests(); len(reqs) != 1 || reqs[0].Model != "claude-future-9" {
		t.Errorf("requests %+v", reqs)
	}
	e.srv = llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	if _, errOut := e.run("-p", "hi", "--model", "claude-opus-4-7"); e.status != 0 || strings.Contains(errOut, "cost is unknown") {
		t.Errorf("claude-opus-4-7 is priced: exit %d: %s", e.status, errOut)
	}
}

func TestAvailableModels(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	// A session is recorded with sonnet, then the administrator's list
	// (here the project settings) leaves sonnet out.
	if _, errOut := e.run("-p", "hi", "--model", "sonnet", "-n", "work"); e.status != 0 {
		t.Fatalf("exit %d: %s", e.status, errOut)
	}
	e.settings("settings.json", `{"availableModels": ["haiku"]}`)
	_, errOut := e.run("-p", "hi", "--model", "sonnet")
	if e.status != 1 || !strings.Contains(errOut, "--model: model claude-sonnet-5-5 is not allowed by the availableModels setting (allowed: haiku, or the default)") {
		t.Errorf("exit %d: %s", e.status, errOut)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("the refused model was asked: %d requests", n)
	}
	// The resumed session does not get its blocked model back: the default
	// runs, with a warning.
	out, errOut := e.run("-p", "again", "-r", "work")
	if e.status != 0 || strings.TrimSpace(out) != "two" || !strings.Contains(errOut, "the resumed session's model claude-sonnet-5-5 is not in availableModels: claude-opus-5-5 is used instead") {
		t.Errorf("exit %d: %s %s", e.status, out, errOut)
	}
	if reqs := e.srv.Requests(); reqs[1].Model != "claude-opus-5-5" {
		t.Errorf("the resumed session asked %s", reqs[1].Model)
	}
}

// A subagent whose definition names a model availableModels leaves out runs
// on its parent's model, with a notice, instead of failing.
func TestSubagentModelOutsideAvailableModels(t *testing.T) {
	e := newEnv(t,
		llmtest.Turn{When: llmtest.FirstUserContains("delegate"), Content: []llm.Block{
			llmtest.ToolUse("Agent", map[string]any{"subagent_type": "rev", "description": "a task", "prompt": "CHILD: look"})}},
		llmtest.Turn{When: llmtest.FirstUserContains("CHILD:"), Content: []llm.Block{llmtest.Text("child done")}},
		llmtest.Turn{When: llmtest.FirstUserContains("delegate"), Content: []llm.Block{llmtest.Text("all done")}},
	)
	e.settings("settings.json", `{"availableModels": ["haiku"]}`)
	e.write(".claude/agents/rev.md", "---\nname: rev\ndescription: Reviews\nmodel: sonnet\n---\nYou review.\n")
	out, errOut := e.run("-p", "delegate", "--model", "haiku")
	if e.status != 0 || strings.TrimSpace(out) != "all done" {
		t.Fatalf("exit %d: %s %s", e.status, out, errOut)
	}
	if !strings.Contains(errOut, "agent rev asks for model claude-sonnet-5-5, which availableModels does not allow: it runs on claude-haiku-4-5") {
		t.Errorf("no notice: %s", errOut)
	}
	for _, r := range e.srv.Requests() {
		if r.Model != "claude-haiku-4-5" {
			t.Errorf("a request asked %s", r.Model)
		}
	}
}
