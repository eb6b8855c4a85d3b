package compact

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func TestRebuildShape(t *testing.T) {
	memory := []llm.Block{
		reminder("Contents of /repo/CLAUDE.md:\n\nUse tabs."),
		text("Contents of /home/me/.claude/CLAUDE.md:\n\nBe brief."), // not yet wrapped
		text("  "), // dropped
	}
	tail := []llm.Message{
		assistant(text("Running the tests."), toolUse("t9", "Bash", `{"command":"go test ./..."}`)),
		user(result("t9", "ok")),
	}
	tail[1].Content[0].CacheControl = &llm.CacheControl{Type: "ephemeral"}
	out := Rebuild(Rebuilt{
		Memory:       memory,
		Attachments:  []llm.Block{text("Skill /deploy body")},
		Summary:      "  Migrated the users table.  ",
		Instructions: []string{"Migrate the users table.", "  ", "Keep the old column until Friday."},
		Tail:         tail,
	})
	if err := Validate(out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d messages, want the rebuilt one and the tail of 2", len(out))
	}
	head := out[0].Content
	var got []string
	for _, b := range head {
		got = append(got, b.Text)
	}
	want := []string{
		"<system-reminder>\nContents of /repo/CLAUDE.md:\n\nUse tabs.\n</system-reminder>",
		"<system-reminder>\nContents of /home/me/.claude/CLAUDE.md:\n\nBe brief.\n</system-reminder>",
		"<system-reminder>\nSkill /deploy body\n</system-reminder>",
	}
	if !slices.Equal(got[:3], want) {
		t.Errorf("memory and attachments:\n got %q\nwant %q", got[:3], want)
	}
	summary := got[3]
	for _, s := range []string{summaryOpen, "<summary>\nMigrated the users table.\n</summary>", "do not ask the user",
		"follow this one unchanged", summaryClose} {
		if !strings.Contains(summary, s) {
			t.Errorf("summary block lacks %q:\n%s", s, summary)
		}
	}
	if !strings.HasPrefix(got[4], instructionsOpen) || !strings.Contains(got[4], "(2 messages)") ||
		got[5] != "<user-instruction index=\"1\">\nMigrate the users table.\n</user-instruction>" ||
		got[6] != "<user-instruction index=\"2\">\nKeep the old column until Friday.\n</user-instruction>" ||
		got[7] != instructionsClose || len(got) != 8 {
		t.Errorf("instructions section: %q", got[4:])
	}
	if out[2].Content[0].CacheControl != nil || tail[1].Content[0].CacheControl == nil {
		t.Error("cache breakpoints must be removed from the result, on a copy")
	}

	// Without instructions or tail: no section, no mention of a tail.
	out = Rebuild(Rebuilt{Summary: ""})
	if len(out) != 1 || len(out[0].Content) != 1 || !strings.Contains(out[0].Content[0].Text, "(no summary was produced)") ||
		strings.Contains(out[0].Content[0].Text, "follow this one unchanged") {
		t.Errorf("bare rebuild: %+v", out)
	}
}

func TestRebuildRepairsTail(t *testing.T) {
	tail := []llm.Message{
		// Starts with a user message whose result answers nothing kept.
		user(result("gone", "old output"), text("Please hurry.")),
		assistant(text("Checking."), toolUse("a", "Read", `{}`), toolUse("b", "Grep", `{}`)),
		user(result("b", "grep out"), text("note"), result("a", "read out"), result("zzz", "orphan")),
		assistant(text("Next."), toolUse("c", "Bash", `{}`)), // never answered
	}
	out := Rebuild(Rebuilt{Summary: "s", Tail: tail})
	if err := Validate(out); err != nil {
		t.Fatal(err)
	}
	if last := out[0].Content[len(out[0].Content)-1]; last.Text != "Please hurry." {
		t.Errorf("the leading user text should join the rebuilt message, got %q", last.Text)
	}
	r := out[2].Content
	if r[0].ToolUseID != "a" || r[1].ToolUseID != "b" || r[2].Text != "note" || len(r) != 3 {
		t.Errorf("results not reordered / orphan kept: %+v", r)
	}
	final := out[len(out)-1]
	if final.Role != llm.RoleUser || final.Content[0].ToolUseID != "c" || !final.Content[0].IsError ||
		!strings.Contains(llm.TextOf(final.Content[0].Content), "did not run") {
		t.Errorf("unanswered call: %+v", final)
	}
}

func TestRebuildRepairsThinking(t *testing.T) {
	think := llm.Block{Type: llm.TypeThinking, Thinking: "hmm", Signature: "sig"}
	tail := []llm.Message{
		assistant(think, text("A.")),              // fine: kept as is
		user(text("go")),                          //
		assistant(think),                          // thinking only: dropped
		user(text(" ")),                           // blank: dropped, so the next two merge
		assistant(text("B."), think),              // thinking last: thinking dropped
		assistant(think, toolUse("x", "R", "{}")), // merged after B: its thinking dropped
	}
	out := Rebuild(Rebuilt{Summary: "s", Tail: tail})
	if err := Validate(out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 5 || out[1].Content[0].Type != llm.TypeThinking || len(out[3].Content) != 2 ||
		out[3].Content[0].Text != "B." || out[3].Content[1].ID != "x" {
		t.Errorf("history %s", mustJSON(t, out))
	}
}

func TestSplitTail(t *testing.T) {
	msgs := []llm.Message{
		user(text("u0")),
		assistant(toolUse("1", "Read", `{}`)), user(result("1", strings.Repeat("x", 4000))),
		assistant(toolUse("2", "Read", `{}`)), user(result("2", "small")),
		assistant(text("done")),
		user(text("u6")),
		assistant(text("a7")),
	}
	tests := []struct {
		keep, tokens, wantStart int
	}{
		{0, 0, 8},       // keep nothing
		{1, 0, 7},       // the last assistant message
		{2, 0, 7},       // would start with a user message: moves forward
		{3, 0, 5},       // starts at "done"
		{4, 0, 5},       // would start with the results of call 2
		{5, 0, 3},       // call 2 and its result together
		{100, 0, 1},     // everything but the first message
		{100, 500, 3},   // the 4 KB result does not fit 500 tokens
		{100, 5, 8},     // nothing fits
		{100, 10000, 1}, // all fits
	}
	for _, tt := range tests {
		older, tail := SplitTail(msgs, tt.keep, tt.tokens)
		if len(older) != tt.wantStart || len(older)+len(tail) != len(msgs) {
			t.Errorf("keep %d / %d tokens: tail starts at %d, want %d", tt.keep, tt.tokens, len(older), tt.wantStart)
		}
		if len(tail) > 0 && tail[0].Role != llm.RoleAssistant {
			t.Errorf("keep %d: tail starts with %s", tt.keep, tail[0].Role)
		}
	}
}

func TestValidateCatchesBrokenHistories(t *testing.T) {
	broken := map[string][]llm.Message{
		"empty":             nil,
		"assistant first":   {assistant(text("a"))},
		"two users":         {user(text("a")), user(text("b"))},
		"blank text":        {user(text(" "))},
		"empty content":     {user()},
		"unanswered call":   {user(text("a")), assistant(toolUse("1", "R", `{}`))},
		"missing result":    {user(text("a")), assistant(toolUse("1", "R", `{}`), toolUse("2", "R", `{}`)), user(result("1", "x"))},
		"orphan result":     {user(result("1", "x"))},
		"results reordered": {user(text("a")), assistant(toolUse("1", "R", `{}`), toolUse("2", "R", `{}`)), user(result("2", "x"), result("1", "y"))},
		"result after text": {user(text("a")), assistant(toolUse("1", "R", `{}`)), user(text("t"), result("1", "x"))},
		"repeated id": {user(text("a")), assistant(toolUse("1", "R", `{}`)), user(result("1", "x")),
			assistant(toolUse("1", "R", `{}`)), user(result("1", "x"))},
	}
	for name, msgs := range broken {
		if Validate(msgs) == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
	}
}

// genConversation returns a conversation as the engine builds it: prompts,
// assistant turns with text, thinking and parallel tool calls, results in
// order, reminders, interruption notes. It returns the user's instructions
// in it too.
func genConversation(r *rand.Rand, ids *int) (msgs []llm.Message, instructions []string) {
	prompt := func() []llm.Block {
		s := fmt.Sprintf("instruction %d: %s", *ids, strings.Repeat("do it ", r.IntN(30)))
		*ids++
		instructions = append(instructions, s)
		blocks := []llm.Block{text(s)}
		if r.IntN(3) == 0 {
			blocks = append([]llm.Block{reminder("hook context")}, blocks...)
		}
		return blocks
	}
	msgs = append(msgs, user(prompt()...))
	for range r.IntN(14) {
		var blocks []llm.Block
		if r.IntN(3) == 0 {
			blocks = append(blocks, llm.Block{Type: llm.TypeThinking, Thinking: "hmm", Signature: "sig"})
		}
		calls := r.IntN(4)
		if calls == 0 || r.IntN(2) == 0 {
			blocks = append(blocks, text("working on it"))
		}
		var uses []string
		for range calls {
			id := fmt.Sprintf("toolu_%d", *ids)
			*ids++
			uses = append(uses, id)
			blocks = append(blocks, toolUse(id, "Read", fmt.Sprintf(`{"file_path":"/f%d"}`, *ids)))
		}
		msgs = append(msgs, assistant(blocks...))
		if calls == 0 {
			if r.IntN(4) == 0 {
				break // the conversation ends on the model's answer
			}
			msgs = append(msgs, user(prompt()...))
			continue
		}
		var res []llm.Block
		for _, id := range uses {
			res = append(res, result(id, strings.Repeat("output ", 1+r.IntN(50))))
		}
		switch r.IntN(6) {
		case 0:
			res = append(res, prompt()...) // typed while the tools ran
		case 1:
			res = append(res, text("[Request interrupted by user for tool use]"))
		case 2:
			res = append(res, reminder("PostToolUse hook additional context: x"))
		}
		msgs = append(msgs, user(res...))
	}
	return msgs, instructions
}

// genChaos returns messages of any shape: wrong roles, blank texts, repeated
// and unanswered calls, orphan and misplaced results.
func genChaos(r *rand.Rand) []llm.Message {
	var msgs []llm.Message
	for range r.IntN(12) {
		role := []llm.Role{llm.RoleUser, llm.RoleAssistant}[r.IntN(2)]
		var blocks []llm.Block
		for range r.IntN(5) {
			id := fmt.Sprintf("t%d", r.IntN(6))
			blocks = append(blocks, []llm.Block{
				text("some text"), text(""), text(" \n"),
				toolUse(id, "Bash", `{}`), toolUse("", "Bash", `{}`),
				result(id, "out"),
				{Type: llm.TypeThinking, Thinking: "t", Signature: "s"},
				{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}},
				text(fmt.Sprintf("chaos instruction %d", r.IntN(1000))),
			}[r.IntN(9)])
		}
		msgs = append(msgs, llm.Message{Role: role, Content: blocks})
	}
	return msgs
}

// TestRebuildProperties rebuilds many random conversations and checks that
// the result is a valid history that opens with the memory, carries every
// instruction verbatim, and keeps a valid tail unchanged. Some are also sent
// to the fake API, whose own checks must pass.
func TestRebuildProperties(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("ok"))}, Loop: true})
	p := newProviderFor(srv)
	r := rand.New(rand.NewPCG(7, 11))
	memory := reminder("MEMORY: use tabs")
	ids := 0
	for iter := range 600 {
		chaos := iter%3 == 2
		var msgs []llm.Message
		var want []string
		if chaos {
			msgs = genChaos(r)
		} else {
			msgs, want = genConversation(r, &ids)
		}
		keep := r.IntN(8)
		older, tail := SplitTail(msgs, keep, 0)
		instr := UserInstructions(older, 0)
		if !chaos {
			var inTail []string
			for _, m := range tail {
				inTail = append(inTail, messageInstructions(m)...)
			}
			if all := append(slices.Clone(instr), inTail...); !slices.Equal(all, want) {
				t.Fatalf("iter %d: instructions %q, want %q", iter, all, want)
			}
		}
		out := Rebuild(Rebuilt{Memory: []llm.Block{memory}, Summary: "summary", Instructions: instr, Tail: tail})
		if err := Validate(out); err != nil {
			t.Fatalf("iter %d (chaos %v): invalid history: %v\n%s", iter, chaos, err, mustJSON(t, out))
		}
		if out[0].Content[0].Text != memory.Text {
			t.Fatalf("iter %d: the rebuilt history does not open with the memory", iter)
		}
		// A chaotic tail may start with user text, which joins the rebuilt
		// message after the carried instructions.
		if got, want := UserInstructions(out[:1], 0), nonBlank(instr); len(got) < len(want) || !slices.Equal(got[:len(want)], want) ||
			!chaos && len(got) != len(want) {
			t.Fatalf("iter %d: carried instructions %q, want %q", iter, got, instr)
		}
		if !chaos {
			if len(tail) > keep || (len(tail) > 0 && tail[0].Role != llm.RoleAssistant) {
				t.Fatalf("iter %d: tail of %d messages for keep %d", iter, len(tail), keep)
			}
			if len(tail) > 0 && mustJSON(t, out[1:]) != mustJSON(t, tail) || len(out) != 1+len(tail) {
				t.Fatalf("iter %d: valid tail changed:\n got %s\nwant %s", iter, mustJSON(t, out[1:]), mustJSON(t, tail))
			}
		}
		if iter%20 == 0 {
			send := out
			if send[len(send)-1].Role == llm.RoleAssistant {
				send = append(send, user(text("go on")))
			}
			if _, err := p.Stream(context.Background(), &llm.Request{Model: "m", MaxTokens: 10, Messages: send}, llm.Observer{}); err != nil {
				t.Fatalf("iter %d: the fake API refused the rebuilt history: %v", iter, err)
			}
		}
	}
}

func nonBlank(ss []string) []string {
	var out []string
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

func TestNormalizeLeavesInputAlone(t *testing.T) {
	in := []llm.Message{user(text("a"), text(" ")), assistant(toolUse("1", "R", `{}`))}
	before := mustJSON(t, in)
	_ = normalize(in)
	_ = Rebuild(Rebuilt{Summary: "s", Tail: in})
	if mustJSON(t, in) != before {
		t.Error("the input was modified")
	}
}
