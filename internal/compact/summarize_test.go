package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// conversation is a short session with one tool call, ending on its result.
func conversation() []llm.Message {
	return []llm.Message{
		user(reminder("Contents of CLAUDE.md: use tabs"), text("Migrate the `users` table to add `email_verified`.")),
		assistant(text("Reading the schema."), toolUse("toolu_1", "Read", `{"file_path":"db/schema.sql"}`)),
		user(result("toolu_1", "CREATE TABLE users (id int);")),
	}
}

func TestSummarizeSendsConversationAndPrompt(t *testing.T) {
	usage := &llm.Usage{InputTokens: 1234, OutputTokens: 56, CacheReadInputTokens: 7}
	srv, p := fakeAPI(t, llmtest.Turn{
		Content: []llm.Block{llmtest.Text("<analysis>\nscratch notes\n</analysis>\n\n<summary>\n1. Goal — migrate `users`.\n</summary>")},
		Usage:   usage,
	})
	conv := conversation()
	before := mustJSON(t, conv)
	res, err := Summarize(context.Background(), p, SummaryRequest{
		Model: "claude-haiku-4-5", Messages: conv, Instructions: "focus on the DB migration",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary != "1. Goal — migrate `users`." {
		t.Errorf("summary %q: want the inside of <summary>, without the analysis", res.Summary)
	}
	if res.Usage.InputTokens != 1234 || res.Usage.OutputTokens != 56 || res.Usage.CacheReadInputTokens != 7 ||
		res.Model != "claude-haiku-4-5" || res.StopReason != "end_turn" || res.Attempts != 1 || res.Trim.Trimmed() || res.Truncated() {
		t.Errorf("result %+v", res)
	}
	if mustJSON(t, conv) != before {
		t.Error("Summarize changed the caller's messages")
	}

	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	req := reqs[0]
	if req.Model != "claude-haiku-4-5" || req.MaxTokens != DefaultSummaryMaxTokens || len(req.System) != 0 {
		t.Errorf("model %q, max_tokens %d, system %v", req.Model, req.MaxTokens, req.System)
	}
	// The conversation as it was, the prompt added at the end of the last
	// user message.
	if len(req.Messages) != len(conv) || mustJSON(t, req.Messages[:2]) != mustJSON(t, conv[:2]) {
		t.Fatalf("conversation not sent as is:\n%s", mustJSON(t, req.Messages))
	}
	last := req.Messages[2].Content
	if mustJSON(t, last[0]) != mustJSON(t, conv[2].Content[0]) || len(last) != 2 {
		t.Fatalf("last message %s", mustJSON(t, last))
	}
	prompt := last[1].Text
	for _, s := range []string{"<summary>", "Next step", "Files", "exactly", "Do not call any tool",
		"directions for this summary", "focus on the DB migration"} {
		if !strings.Contains(prompt, s) {
			t.Errorf("prompt lacks %q", s)
		}
	}
	// The API refuses tool blocks without tools: a placeholder for Read.
	if names := req.ToolNames(); len(names) != 1 || names[0] != "Read" {
		t.Errorf("tools %v, want a placeholder for Read", names)
	}
	if req.CacheBreakpoints() != 0 {
		t.Errorf("%d cache breakpoints without Cache", req.CacheBreakpoints())
	}
}

func TestSummarizeReusesSessionPrefix(t *testing.T) {
	srv, p := fakeAPI(t, llmtest.Reply(llmtest.Text("Summary.")))
	tools := []llm.ToolSpec{
		{Name: "Read", Description: "Reads a file", InputSchema: []byte(`{"type":"object","properties":{"file_path":{"type":"string"}}}`)},
		{Name: "Bash", Description: "Runs a command", InputSchema: []byte(`{"type":"object"}`)},
	}
	conv := append(conversation(), assistant(text("The table has only an id.")))
	res, err := Summarize(context.Background(), p, SummaryRequest{
		Model: "claude-opus-5-5", Messages: conv, MaxTokens: 5000,
		System: []llm.Block{text("You are tack.")}, Tools: tools,
		Cache: &llm.CacheControl{Type: "ephemeral", TTL: "1h"},
	})
	if err != nil || res.Summary != "Summary." {
		t.Fatalf("%q, %v", res.Summary, err)
	}
	req := srv.Requests()[0]
	if req.SystemText() != "You are tack." || req.MaxTokens != 5000 {
		t.Errorf("system %q, max_tokens %d", req.SystemText(), req.MaxTokens)
	}
	if names := req.ToolNames(); strings.Join(names, ",") != "Read,Bash" {
		t.Errorf("tools %v: the session's, unchanged, without placeholders", names)
	}
	// Breakpoints: system, and the end of the conversation (before the prompt).
	if req.CacheBreakpoints() != 2 || req.System[0].CacheControl == nil ||
		req.Messages[3].Content[0].CacheControl == nil {
		t.Errorf("breakpoints: %s", req.Body)
	}
	// The conversation ended on the model's answer: the prompt is a new message.
	if len(req.Messages) != 5 || req.Messages[4].Role != llm.RoleUser || !strings.Contains(req.LastUserText(), "<summary>") {
		t.Errorf("messages %s", mustJSON(t, req.Messages))
	}
}

func TestSummarizeFailures(t *testing.T) {
	ctx := context.Background()
	conv := conversation()

	// An error that is not about length is returned at once, wrapped.
	srv, p := fakeAPI(t, llmtest.Turn{Faults: []llmtest.Fault{{Status: 400, Message: "messages.0: something else is wrong"}}, Content: []llm.Block{llmtest.Text("x")}})
	res, err := Summarize(ctx, p, SummaryRequest{Model: "m", Messages: conv})
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || res.Attempts != 1 || len(srv.Requests()) != 1 || IsPromptTooLong(err) {
		t.Errorf("err %v, attempts %d", err, res.Attempts)
	}

	// An answer without a summary is an error, with its usage.
	_, p = fakeAPI(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("<analysis>I was thinking and then")}, StopReason: "max_tokens",
		Usage: &llm.Usage{InputTokens: 10, OutputTokens: 20}})
	res, err = Summarize(ctx, p, SummaryRequest{Model: "m", Messages: conv})
	if !errors.Is(err, ErrEmptySummary) || res.Usage.OutputTokens != 20 {
		t.Errorf("empty summary: %v, usage %+v", err, res.Usage)
	}

	// A summary cut by max_tokens is kept, and flagged.
	_, p = fakeAPI(t, llmtest.Turn{Content: []llm.Block{llmtest.Text("<summary>\n1. Goal — half of it")}, StopReason: "max_tokens"})
	res, err = Summarize(ctx, p, SummaryRequest{Model: "m", Messages: conv})
	if err != nil || res.Summary != "1. Goal — half of it" || !res.Truncated() {
		t.Errorf("truncated summary: %q, %v, %+v", res.Summary, err, res)
	}

	// Plain text without tags is the summary.
	_, p = fakeAPI(t, llmtest.Reply(llmtest.Text("  Just a summary.  ")))
	if res, err = Summarize(ctx, p, SummaryRequest{Model: "m", Messages: conv}); err != nil || res.Summary != "Just a summary." {
		t.Errorf("untagged: %q, %v", res.Summary, err)
	}

	// Bad requests.
	if _, err := Summarize(ctx, p, SummaryRequest{Messages: conv}); err == nil {
		t.Error("no model accepted")
	}
	if _, err := Summarize(ctx, nil, SummaryRequest{Model: "m", Messages: conv}); err == nil {
		t.Error("no provider accepted")
	}
	if _, err := Summarize(ctx, p, SummaryRequest{Model: "m", Messages: []llm.Message{user(text(" "))}}); err == nil {
		t.Error("empty conversation accepted")
	}
	if _, err := Summarize(ctx, p, SummaryRequest{Model: "m", Messages: conv, ContextWindow: 8000, MaxTokens: 8000}); err == nil {
		t.Error("a window smaller than the summary accepted")
	}
}

// longConversation has turns tool calls with results of resultBytes each,
// and a distinct user instruction every fourth turn.
func longConversation(turns, resultBytes int) (msgs []llm.Message, instructions []string) {
	say := func(i int) llm.Block {
		s := fmt.Sprintf("Instruction %d: handle case %d with care.", i, i*7)
		instructions = append(instructions, s)
		return text(s)
	}
	msgs = append(msgs, user(say(0)))
	for i := range turns {
		id := fmt.Sprintf("toolu_%03d", i)
		msgs = append(msgs, assistant(text(fmt.Sprintf("Step %d.", i)), toolUse(id, "Bash", fmt.Sprintf(`{"command":"make step%d"}`, i))))
		out := []llm.Block{result(id, fmt.Sprintf("step %d: ", i)+strings.Repeat("log line\n", resultBytes/9))}
		if i%4 == 3 {
			out = append(out, say(i))
		}
		msgs = append(msgs, user(out...))
	}
	return msgs, instructions
}

func TestSummarizeTrimsToWindow(t *testing.T) {
	const window = 20_000
	tests := []struct {
		name  string
		conv  func() ([]llm.Message, []string)
		check func(t *testing.T, tr Trim)
	}{
		{"large tool results are cut first", func() ([]llm.Message, []string) { return longConversation(12, 20_000) },
			func(t *testing.T, tr Trim) {
				if tr.ToolResultsCut == 0 || tr.MessagesDropped != 0 || tr.BlocksCut != 0 {
					t.Errorf("trim %+v: want only tool results cut", tr)
				}
			}},
		{"then the oldest turns go", func() ([]llm.Message, []string) { return longConversation(500, 600) },
			func(t *testing.T, tr Trim) {
				if tr.MessagesDropped == 0 || tr.BlocksCut != 0 {
					t.Errorf("trim %+v: want old turns dropped", tr)
				}
			}},
		{"a huge message is cut as a last resort", func() ([]llm.Message, []string) {
			s := "Here is the log:\n" + strings.Repeat("ERROR something failed\n", 20_000) + "Fix it."
			return []llm.Message{user(text(s))}, nil
		}, func(t *testing.T, tr Trim) {
			if tr.BlocksCut == 0 {
				t.Errorf("trim %+v: want the message cut", tr)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := fakeAPI(t, llmtest.Reply(llmtest.Text("Summary.")))
			conv, instructions := tt.conv()
			if EstimateTokens(conv) < 3*window {
				t.Fatalf("conversation of %d tokens is not too long", EstimateTokens(conv))
			}
			res, err := Summarize(context.Background(), p, SummaryRequest{Model: "m", Messages: conv, ContextWindow: window, MaxTokens: 2000})
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res.Trim)
			req := srv.Requests()[0]
			// The whole body, JSON framing and prompt included, fits the
			// window at 4 bytes a token; so does the estimate of what was
			// sent plus the room for the summary, with the margin kept.
			if len(req.Body) > window*bytesPerToken {
				t.Errorf("request body of %d bytes for a window of %d tokens", len(req.Body), window)
			}
			if n := EstimateTokens(req.Messages) + req.MaxTokens; n > window*inputShare {
				t.Errorf("request of about %d tokens with max_tokens %d for a window of %d", n-req.MaxTokens, req.MaxTokens, window)
			}
			if res.Trim.TokensAfter >= res.Trim.TokensBefore || res.Trim.TokensAfter > window {
				t.Errorf("trim estimates %+v", res.Trim)
			}
			// What the user said is still there, verbatim.
			for _, s := range instructions {
				if occurrences(req.Messages, s) == 0 {
					t.Errorf("instruction %q lost in trimming", s)
				}
			}
			if !strings.Contains(req.LastUserText(), "<summary>") {
				t.Error("the prompt was trimmed away")
			}
		})
	}
}

func TestSummarizeRetriesWhenPromptTooLong(t *testing.T) {
	srv, p := fakeAPI(t, llmtest.Turn{
		Faults:  []llmtest.Fault{{Status: 400, Message: "prompt is too long: 250000 tokens > 200000 maximum"}},
		Content: []llm.Block{llmtest.Text("<summary>Short.</summary>")},
		Usage:   &llm.Usage{InputTokens: 150_000, OutputTokens: 900},
	})
	conv, instructions := longConversation(40, 4000)
	res, err := Summarize(context.Background(), p, SummaryRequest{Model: "m", Messages: conv})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if res.Attempts != 2 || len(reqs) != 2 || res.Summary != "Short." || res.Usage.InputTokens != 150_000 {
		t.Fatalf("attempts %d, requests %d, result %+v", res.Attempts, len(reqs), res)
	}
	// The API said 250k for a limit of 200k: the retry is at most 72% of
	// the first, a margin below the 80% that would just fit.
	if first, second := len(reqs[0].Body), len(reqs[1].Body); second > first*3/4 {
		t.Errorf("retry body %d bytes after %d: not trimmed enough", second, first)
	}
	if res.Trim.ToolResultsCut == 0 {
		t.Errorf("trim %+v", res.Trim)
	}
	for _, s := range instructions {
		if occurrences(reqs[1].Messages, s) == 0 {
			t.Errorf("instruction %q lost", s)
		}
	}

	// Always too long: gives up after a few attempts.
	tooLong := llmtest.Fault{Status: 400, Message: "prompt is too long"}
	srv, p = fakeAPI(t, llmtest.Turn{Faults: []llmtest.Fault{tooLong, tooLong, tooLong, tooLong, tooLong}, Content: []llm.Block{llmtest.Text("x")}})
	res, err = Summarize(context.Background(), p, SummaryRequest{Model: "m", Messages: conv})
	if !IsPromptTooLong(err) || res.Attempts != maxAttempts || len(srv.Requests()) != maxAttempts {
		t.Errorf("err %v after %d attempts", err, res.Attempts)
	}
}

func TestIsPromptTooLong(t *testing.T) {
	api := func(status int, typ, msg string) error { return &llm.APIError{Status: status, Type: typ, Message: msg} }
	tests := []struct {
		err         error
		want        bool
		input, limt int
	}{
		{api(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"), true, 210000, 200000},
		{fmt.Errorf("turn 3: %w", api(400, "invalid_request_error", "Prompt is too long")), true, 0, 0},
		{api(400, "invalid_request_error", "input length and `max_tokens` exceed context limit: 188000 + 21333 > 200000, decrease input length or `max_tokens` and try again"), true, 188000, 178667},
		{api(400, "", "Input is too long for requested model."), true, 0, 0},
		{api(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."), true, 0, 0},
		{api(0, "invalid_request_error", "prompt is too long: 5 tokens > 4 maximum"), true, 5, 4},
		{api(400, "invalid_request_error", "messages.1: text content blocks must be non-empty"), false, 0, 0},
		{api(529, "overloaded_error", "Overloaded"), false, 0, 0},
		{api(500, "api_error", "prompt is too long"), false, 0, 0},
		{errors.New("prompt is too long"), false, 0, 0},
		{nil, false, 0, 0},
	}
	for _, tt := range tests {
		if got := IsPromptTooLong(tt.err); got != tt.want {
			t.Errorf("IsPromptTooLong(%v) = %v", tt.err, got)
		}
		in, limit, ok := PromptTooLongTokens(tt.err)
		if ok != (tt.input > 0) || in != tt.input || limit != tt.limt {
			t.Errorf("PromptTooLongTokens(%v) = %d, %d, %v", tt.err, in, limit, ok)
		}
	}
}
