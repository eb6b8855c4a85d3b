package compact

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// session drives a conversation the way the engine does: each request sends
// the whole history through the real provider, the scripted model answers,
// and tool calls get results of a few kilobytes.
type session struct {
	t    *testing.T
	p    llm.Provider
	msgs []llm.Message
	n    int
}

// send adds a user message — results for the pending tool calls first, then
// blocks — and, unless hold, asks the model for its next turn.
func (s *session) send(hold bool, blocks ...llm.Block) {
	s.t.Helper()
	var content []llm.Block
	if last := len(s.msgs) - 1; last >= 0 && s.msgs[last].Role == llm.RoleAssistant {
		for _, u := range toolUses(s.msgs[last].Content) {
			s.n++
			content = append(content, result(u.ID, fmt.Sprintf("output %d of %s\n", s.n, u.Input)+strings.Repeat("ok  \tpkg/module\t0.01s\n", 150)))
		}
	}
	s.msgs = append(s.msgs, user(append(content, blocks...)...))
	if hold {
		return
	}
	resp, err := s.p.Stream(context.Background(), &llm.Request{Model: "claude-haiku-4-5", MaxTokens: 1000, Messages: s.msgs}, llm.Observer{})
	if err != nil {
		s.t.Fatalf("turn %d: %v", len(s.msgs), err)
	}
	s.msgs = append(s.msgs, resp.Message())
}

// The ten instructions: different shapes, some with characters that could
// confuse a wrapper.
var probeInstructions = [10]string{
	"Rename `Config.Timeout` to `Config.RequestTimeout` everywhere, including the YAML key `timeout_ms`.",
	"Do not touch anything under `vendor/` or `third_party/`.",
	"Use table-driven tests; no testify.",
	"Keep the public API of package `store` backward compatible until v3.0.0.",
	"Log with `slog` at Debug level, never fmt.Println.\nAnd keep lines under 100 columns.",
	"If `make lint` fails on generated files, add them to `.golangci.yml` exclusions rather than editing them.",
	"Réponds-moi en français dans les messages de commit, s'il te plaît.",
	"The retry budget is exactly 7 attempts with 250ms base backoff — not 5, not 10.",
	"Literal tags must survive: </user-instruction> <user-instructions> </summary>",
	"Before finishing, run `go test -race ./...` and paste the last 5 lines.",
}

// TestTenInstructionProbe gives ten instructions spread among forty tool
// turns, with reminders, hook feedback and an interruption in between, then
// compacts with a summary that mentions none of them. Every instruction must
// be in the new history verbatim, exactly once; the noise must not; the new
// history must be accepted by the fake API; and a second compaction, after
// two more instructions, must keep all twelve.
func TestTenInstructionProbe(t *testing.T) {
	const turns = 40
	script := make([]llmtest.Turn, 0, turns+4)
	endTurn := map[int]bool{3: true, 7: true, 11: true, 15: true, 19: true}
	for i := range turns {
		if endTurn[i] {
			script = append(script, llmtest.Reply(llmtest.Text(fmt.Sprintf("Finished part %d.", i))))
			continue
		}
		script = append(script, llmtest.Reply(llmtest.Text(fmt.Sprintf("Step %d.", i)),
			llmtest.ToolUse("Bash", map[string]string{"command": fmt.Sprintf("go test ./pkg%d/...", i)})))
	}
	const summary = "<summary>\n1. Goal — improve the repository.\n6. Current state — tests pass.\n7. Next step — run the linter.\n</summary>"
	script = append(script,
		llmtest.Turn{Content: []llm.Block{llmtest.Text(summary)}, Usage: &llm.Usage{InputTokens: 9000, OutputTokens: 300}},
		llmtest.Reply(llmtest.Text("Carrying on."), llmtest.ToolUse("Bash", map[string]string{"command": "make lint"})),
		llmtest.Reply(llmtest.Text("Lint is clean.")),
		llmtest.Reply(llmtest.Text("<summary>Second summary, also silent about the instructions.</summary>")),
		llmtest.Reply(llmtest.Text("ok")),
	)
	srv, p := fakeAPI(t, script...)
	s := &session{t: t, p: p}

	// Where each instruction is given: a new prompt after the model ended
	// its turn, or typed while tools ran (beside their results).
	at := map[int]string{0: probeInstructions[0], 2: probeInstructions[1], 4: probeInstructions[2],
		8: probeInstructions[3], 10: probeInstructions[4], 12: probeInstructions[5], 16: probeInstructions[6],
		23: probeInstructions[7], 29: probeInstructions[8], 35: probeInstructions[9]}
	noise := []string{
		"Contents of /repo/CLAUDE.md (project instructions):\n\nRun gofmt.",
		"PostToolUse hook additional context: coverage is 71%",
		"Stop hook feedback: 2 lint warnings remain",
		"[Request interrupted by user for tool use]",
	}
	for i := range turns {
		var blocks []llm.Block
		switch i {
		case 0:
			blocks = append(blocks, reminder(noise[0]))
		case 5:
			blocks = append(blocks, reminder(noise[1]))
		case 20:
			blocks = append(blocks, text(noise[2])) // after "Finished part 19"
		case 26:
			blocks = append(blocks, text(noise[3]))
		}
		if instr, ok := at[i]; ok {
			blocks = append(blocks, text(instr))
		}
		if len(blocks) == 0 && endTurn[i-1] {
			t.Fatalf("script error: nothing to say after the end of turn %d", i-1)
		}
		s.send(false, blocks...)
	}
	s.send(true) // the results of the last calls, as the engine appends them before compacting
	if EstimateTokens(s.msgs) < 25_000 {
		t.Fatalf("the conversation (%d tokens) is too short to need trimming", EstimateTokens(s.msgs))
	}

	memory := reminder("Contents of /repo/CLAUDE.md (project instructions):\n\nRun gofmt.")
	compactOnce := func(msgs []llm.Message) Compacted {
		t.Helper()
		out, err := Compact(context.Background(), p, CompactRequest{
			SummaryRequest: SummaryRequest{Model: "claude-haiku-4-5", Messages: msgs, ContextWindow: 20_000, MaxTokens: 3000},
			Memory:         []llm.Block{memory},
			KeepMessages:   4,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(out.Messages); err != nil {
			t.Fatalf("rebuilt history: %v", err)
		}
		if out.Messages[0].Content[0].Text != memory.Text {
			t.Error("the rebuilt history does not open with the memory")
		}
		if occurrences(out.Messages, memory.Text) != 1 {
			t.Error("the memory appears more than once")
		}
		return out
	}

	first := compactOnce(s.msgs)
	if !first.Trim.Trimmed() || first.Usage.InputTokens != 9000 || first.Kept != 4 || first.TokensAfter >= first.TokensBefore {
		t.Errorf("compaction %+v", first.Result)
	}
	for i, instr := range probeInstructions {
		if strings.Contains(summary, instr) {
			t.Fatalf("the scripted summary must not help: it contains instruction %d", i)
		}
		if n := occurrences(first.Messages, instr); n != 1 {
			t.Errorf("instruction %d appears %d times in the new history, want 1: %q", i, n, instr)
		}
	}
	for _, s := range noise[1:] {
		if occurrences(first.Messages, s) != 0 {
			t.Errorf("noise %q was carried over", s)
		}
	}
	if len(first.Instructions) != len(probeInstructions) {
		t.Errorf("%d instructions carried: %q", len(first.Instructions), first.Instructions)
	}

	// The new history goes on: the fake API checks the request.
	s.msgs = first.Messages
	s.send(false, text("Now also update the CHANGELOG."))
	s.send(false, text("And bump the version to 2.4.1."))

	second := compactOnce(s.msgs)
	all := append(probeInstructions[:], "Now also update the CHANGELOG.", "And bump the version to 2.4.1.")
	for i, instr := range all {
		if n := occurrences(second.Messages, instr); n != 1 {
			t.Errorf("after two compactions, instruction %d appears %d times: %q", i, n, instr)
		}
	}
	if occurrences(second.Messages, "Second summary") != 1 || occurrences(second.Messages, "improve the repository") != 0 {
		t.Error("the second history should hold the second summary only (the first one is summarised in it)")
	}
	s.msgs = second.Messages
	s.send(false, text("Thanks."))
	if srv.Remaining() != 0 {
		t.Errorf("%d scripted turns left", srv.Remaining())
	}
}
