package skilltool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

func skills() []*extension.Skill {
	return []*extension.Skill{
		{Name: "summarize-changes", Kind: extension.KindSkill, Description: "Summarizes uncommitted changes and flags risks.", Body: "Summarize: $ARGUMENTS", UserInvocable: true, AllowedTools: []string{"Bash(git *)"}, Model: "haiku"},
		{Name: "deploy", Kind: extension.KindCommand, Description: "Deploy to production", Body: "deploy", DisableModelInvocation: true, UserInvocable: true},
		{Name: "my-first-plugin:hello", Kind: extension.KindSkill, Description: "Greet the user", WhenToUse: "when they say hi", Body: "Say hello to $ARGUMENTS.", UserInvocable: true},
		{Name: "research", Kind: extension.KindSkill, Description: "Deep research in a subagent", Body: "Research $ARGUMENTS thoroughly.", Context: "fork", Agent: "Explore", Model: "opus", UserInvocable: true},
	}
}

func TestSchemaMatchesClaudeCode(t *testing.T) {
	tooltest.Check(t, []tool.Tool{New(Options{Runtime: skill.New(skill.Options{Skills: skills()})})})
}

func TestDescriptionListsModelInvocableSkills(t *testing.T) {
	tl := New(Options{Runtime: skill.New(skill.Options{Skills: skills()})})
	d := tl.Description()
	want := "- my-first-plugin:hello: Greet the user - when they say hi\n- research: Deep research in a subagent\n- summarize-changes: Summarizes uncommitted changes and flags risks.\n"
	if !strings.HasSuffix(d, "Available skills:\n"+want) {
		t.Errorf("description ends:\n%s", d[max(0, len(d)-400):])
	}
	if strings.Contains(d, "deploy") {
		t.Error("a disable-model-invocation skill is listed")
	}
	// Deterministic: the same skills in another order give the same text.
	s := skills()
	s[0], s[2] = s[2], s[0]
	if d2 := New(Options{Runtime: skill.New(skill.Options{Skills: s})}).Description(); d2 != d {
		t.Error("description depends on the order skills were found")
	}
}

func TestListingBudget(t *testing.T) {
	var many []*extension.Skill
	for i := range 300 {
		many = append(many, &extension.Skill{Name: fmt.Sprintf("skill-%03d", i), Description: strings.Repeat("word ", 300)})
	}
	l := Listing(many, DefaultListingBudget)
	if len(l) > DefaultListingBudget {
		t.Errorf("listing is %d bytes, over the %d budget", len(l), DefaultListingBudget)
	}
	if !strings.Contains(l, "- skill-000: word") || !strings.HasSuffix(l, "- skill-299\n") {
		t.Errorf("listing head/tail wrong:\n%s…%s", l[:200], l[len(l)-100:])
	}
	few := many[:20]
	l = Listing(few, DefaultListingBudget)
	if len(l) > DefaultListingBudget || strings.Count(l, "…") != 20 {
		t.Errorf("descriptions should be cut evenly: %d bytes, %d cut", len(l), strings.Count(l, "…"))
	}
	if Listing(few, DefaultListingBudget) != l {
		t.Error("not deterministic")
	}
}

type fakeForker struct{ agent, prompt, model string }

func (f *fakeForker) Fork(_ context.Context, agent, prompt, model string) (string, error) {
	f.agent, f.prompt, f.model = agent, prompt, model
	return "the subagent's report", nil
}

func run(t *testing.T, tl tool.Tool, input string) (tool.Result, error) {
	t.Helper()
	return tl.Run(context.Background(), &tool.Env{}, json.RawMessage(input))
}

func text(r tool.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func TestInvoke(t *testing.T) {
	fk := &fakeForker{}
	tl := New(Options{Runtime: skill.New(skill.Options{Skills: skills()}), Forker: fk})

	res, err := run(t, tl, `{"skill": "summarize-changes", "args": "the parser"}`)
	if err != nil {
		t.Fatal(err)
	}
	if text(res) != "Summarize: the parser" {
		t.Errorf("content %q", text(res))
	}
	out := res.Structured.(*Output)
	if !out.Success || out.CommandName != "summarize-changes" || out.Model != "haiku" || out.Status != "" || fmt.Sprint(out.AllowedTools) != "[Bash(git *)]" || out.Invocation == nil {
		t.Errorf("output %+v", out)
	}
	if b, err := json.Marshal(out); err != nil || !strings.Contains(string(b), `"commandName":"summarize-changes"`) {
		t.Errorf("structured result does not marshal: %s %v", b, err)
	}

	res, err = run(t, tl, `{"skill": "/my-first-plugin:hello", "args": "Ada"}`)
	if err != nil || text(res) != "Say hello to Ada." {
		t.Errorf("plugin skill: %q %v", text(res), err)
	}

	res, err = run(t, tl, `{"skill": "research", "args": "caching"}`)
	if err != nil {
		t.Fatal(err)
	}
	if text(res) != "the subagent's report" || fk.agent != "Explore" || fk.prompt != "Research caching thoroughly." || fk.model != "opus" {
		t.Errorf("fork: %q %+v", text(res), fk)
	}
	if out := res.Structured.(*Output); out.Status != "forked" || out.Result != "the subagent's report" {
		t.Errorf("fork output %+v", out)
	}

	for in, want := range map[string]string{
		`{"skill": "deploy"}`:  "can only be run by the user",
		`{"skill": "hello"}`:   "Unknown skill: hello (did you mean my-first-plugin:hello?)",
		`{"skill": "  "}`:      "skill is empty",
		`{"skill": "nothing"}`: "Unknown skill: nothing",
	} {
		_, err := run(t, tl, in)
		if err == nil || !tool.IsInputError(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", in, err)
		}
	}
}
