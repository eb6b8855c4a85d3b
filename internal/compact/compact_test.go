package compact

import (
	"context"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func TestCompactBoundsTailAndInstructions(t *testing.T) {
	huge := strings.Repeat("x", 200_000)
	conv := []llm.Message{
		user(text("Start.")),
		assistant(toolUse("a", "Read", `{}`)), user(result("a", "small"), text(strings.Repeat("long instruction ", 1000))),
		assistant(toolUse("b", "Read", `{}`)), user(result("b", huge)),
		assistant(text("Read it.")),
	}
	run := func(keepTokens, instrTokens int) Compacted {
		_, p := fakeAPI(t, llmtest.Reply(llmtest.Text("S.")))
		out, err := Compact(context.Background(), p, CompactRequest{
			SummaryRequest: SummaryRequest{Model: "m", Messages: conv, ContextWindow: 100_000, MaxTokens: 1000},
			KeepMessages:   3, KeepTokens: keepTokens, InstructionTokens: instrTokens,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := Validate(out.Messages); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Defaults: the 200 KB result does not fit a tenth of the window, so
	// only the last message is kept; the 17 KB instruction fits 10k tokens.
	out := run(0, 0)
	if out.Kept != 1 || len(out.Instructions) != 2 || strings.Contains(out.Instructions[1], "cut here") {
		t.Errorf("defaults: kept %d, instructions %d", out.Kept, len(out.Instructions))
	}
	// No limits.
	out = run(-1, -1)
	if out.Kept != 3 || out.TokensAfter < 50_000 {
		t.Errorf("no limits: kept %d, %d tokens", out.Kept, out.TokensAfter)
	}
	// Explicit budgets.
	out = run(100, 500)
	if out.Kept != 1 || !strings.Contains(out.Instructions[1], "cut here") || out.Instructions[0] != "Start." {
		t.Errorf("budgets: kept %d, instructions %q", out.Kept, out.Instructions)
	}
}
