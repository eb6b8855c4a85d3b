package compact

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/lazyregexp"
	"github.com/tackcode/tack/internal/llm"
)

//go:embed prompt.md
var summaryPromptText string

// DefaultSummaryMaxTokens bounds the summary when the request does not.
const DefaultSummaryMaxTokens = 16384

// Limits of the summarisation request.
const (
	// inputShare is the part of the context window the request aims to
	// fill: the rest is margin for the estimate, which counts code and JSON
	// short.
	inputShare = 0.85
	// minConversationTokens is the least room worth sending a conversation
	// in; below it the window is too small for the summary asked for.
	minConversationTokens = 1024
	// maxAttempts bounds the requests of one Summarize call: the first, then
	// one smaller each time the API says the prompt is too long.
	maxAttempts = 4
)

// ErrEmptySummary is returned when the model's answer holds no summary.
var ErrEmptySummary = errors.New("compact: the model returned no summary")

// SummaryRequest asks for a summary of a conversation.
type SummaryRequest struct {
	// Model is the model id to ask, normally the session's.
	Model string
	// Messages is the conversation to summarise, as sent to the API.
	Messages []llm.Message
	// Instructions are the user's own directions for this summary, as in
	// "/compact focus on the DB migration". Optional.
	Instructions string
	// MaxTokens bounds the summary; 0 means DefaultSummaryMaxTokens.
	MaxTokens int
	// ContextWindow is the model's window in tokens. When set, the
	// conversation is trimmed before sending so the request fits (see
	// Trim); when 0 it is sent whole and only trimmed if the API says it is
	// too long.
	ContextWindow int
	// System and Tools are optional. Passing the session's own, unchanged,
	// lets the request read the whole conversation from the prompt cache
	// (with Cache set). Without Tools, placeholder definitions are sent for
	// the tools the conversation used, because the API refuses tool_use and
	// tool_result blocks in a request that defines no tools.
	System []llm.Block
	Tools  []llm.ToolSpec
	// Cache, when set, puts cache breakpoints on the last system block and on
	// the end of the conversation, as the session's own requests do. Use the
	// session's TTL (a 1h breakpoint may not follow a 5m one).
	Cache *llm.CacheControl
	// Observer sees the response stream and retries (a "compacting" status).
	Observer llm.Observer
}

// Result is a summary and what it cost.
type Result struct {
	// Summary is the summary text, without the model's scratch analysis.
	Summary string
	// Usage is the token usage of the request that produced the summary;
	// the caller counts its cost (requests refused as too long cost none).
	Usage llm.Usage
	// Model is the model that answered.
	Model string
	// StopReason is the API's; "max_tokens" means the summary is truncated.
	StopReason string
	// Attempts is the number of requests sent (more than one when the API
	// said the prompt was too long).
	Attempts int
	// Trim says what was cut from the conversation to fit the request.
	Trim Trim
}

// Truncated reports whether the summary was cut off by MaxTokens.
func (r Result) Truncated() bool { return r.StopReason == "max_tokens" }

// Summarize asks p to summarise req.Messages with tack's summarisation prompt
// (a structured handover: the goal and every request, decisions, files,
// errors and fixes, the current state and the exact next step), followed by
// req.Instructions. The conversation is sent as it is, the prompt in a last
// user message, after trimming it to fit the window when needed (see Trim).
// When the API still says the prompt is too long, the conversation is trimmed
// further and the request sent again, up to a few times.
//
// The returned Result carries the usage whenever a response arrived, even
// with an error (an empty summary).
func Summarize(ctx context.Context, p llm.Provider, req SummaryRequest) (Result, error) {
	if p == nil {
		return Result{}, errors.New("compact: summarize: no provider")
	}
	if req.Model == "" {
		return Result{}, errors.New("compact: summarize: no model")
	}
	msgs := normalize(cloneMessages(req.Messages))
	if len(msgs) == 0 {
		return Result{}, errors.New("compact: summarize: no conversation to summarise")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultSummaryMaxTokens
	}
	prompt := summaryPrompt(req.Instructions)
	target := 0 // no limit
	if req.ContextWindow > 0 {
		fixed := blocksTokens(req.System) + toolsTokens(req.Tools) + byteTokens(len(prompt)) + messageOverhead
		target = int(float64(req.ContextWindow)*inputShare) - maxTokens - fixed
		if target < minConversationTokens {
			return Result{}, fmt.Errorf("compact: summarize: a context window of %d tokens leaves no room for the conversation and a summary of up to %d tokens",
				req.ContextWindow, maxTokens)
		}
	}

	var res Result
	for {
		sent, tr := fit(msgs, target)
		res.Trim = tr
		res.Attempts++
		resp, err := p.Stream(ctx, summaryRequest(req, sent, prompt, maxTokens), req.Observer)
		if err != nil {
			if !IsPromptTooLong(err) || res.Attempts >= maxAttempts {
				return res, fmt.Errorf("compact: summarize (attempt %d, about %d tokens of conversation): %w", res.Attempts, tr.TokensAfter, err)
			}
			target = smallerTarget(tr.TokensAfter, err)
			if target < minConversationTokens {
				return res, fmt.Errorf("compact: summarize: cannot trim the conversation enough: %w", err)
			}
			continue
		}
		res.Usage, res.Model, res.StopReason = resp.Usage, resp.Model, resp.StopReason
		res.Summary = extractSummary(resp.Content)
		switch {
		case resp.StopReason == "refusal":
			return res, fmt.Errorf("compact: summarize: the model refused to summarise the conversation")
		case res.Summary == "":
			return res, fmt.Errorf("%w (stop reason %q)", ErrEmptySummary, resp.StopReason)
		}
		return res, nil
	}
}

// summaryPrompt is the prompt with the user's directions for this summary.
func summaryPrompt(custom string) string {
	prompt := strings.TrimSpace(summaryPromptText)
	if custom = strings.TrimSpace(custom); custom != "" {
		prompt += "\n\nThe user gave these directions for this summary; follow them where they do not conflict with the above:\n" + custom
	}
	return prompt
}

// summaryRequest builds the request: the conversation (a private copy, which
// it changes) followed by the prompt.
func summaryRequest(req SummaryRequest, msgs []llm.Message, prompt string, maxTokens int) *llm.Request {
	system := stripCache(slices.Clone(req.System))
	tools := slices.Clone(req.Tools)
	tools = append(tools, placeholderTools(tools, msgs)...)
	if req.Cache != nil {
		marks := 0
		for _, t := range tools {
			if t.CacheControl != nil {
				marks++
			}
		}
		if n := len(system); n > 0 && marks < 4 {
			system[n-1].CacheControl = req.Cache
			marks++
		}
		if marks < 4 {
			markLast(&msgs[len(msgs)-1], req.Cache)
		}
	}
	last := &msgs[len(msgs)-1]
	if last.Role == llm.RoleUser {
		last.Content = append(slices.Clip(last.Content), llm.Text(prompt))
	} else {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(prompt)}})
	}
	return &llm.Request{Model: req.Model, System: system, Tools: tools, Messages: msgs, MaxTokens: maxTokens}
}

// markLast puts a breakpoint on the last block of m that can carry one.
func markLast(m *llm.Message, cc *llm.CacheControl) {
	for i := len(m.Content) - 1; i >= 0; i-- {
		switch m.Content[i].Type {
		case llm.TypeThinking, llm.TypeRedactedThinking:
			continue
		}
		m.Content[i].CacheControl = cc
		return
	}
}

// placeholderSchema accepts any input: the placeholder is never meant to run.
var placeholderSchema = json.RawMessage(`{"type":"object","additionalProperties":true}`)

// placeholderTools defines each tool the conversation calls that tools does
// not, so the API accepts the tool blocks.
func placeholderTools(tools []llm.ToolSpec, msgs []llm.Message) []llm.ToolSpec {
	defined := map[string]bool{}
	for _, t := range tools {
		defined[t.Name] = true
	}
	var out []llm.ToolSpec
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type != llm.TypeToolUse || defined[b.Name] || !validToolName(b.Name) {
				continue
			}
			defined[b.Name] = true
			out = append(out, llm.ToolSpec{Name: b.Name, InputSchema: placeholderSchema,
				Description: "A tool used earlier in this conversation. It is not available now: do not call it."})
		}
	}
	return out
}

func validToolName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func toolsTokens(tools []llm.ToolSpec) int {
	n := 0
	for _, t := range tools {
		n += byteTokens(len(t.Name)+len(t.Description)+len(t.InputSchema)+len(t.Raw)) + blockOverhead
	}
	return n
}

// smallerTarget is the conversation size to try after the API refused one of
// sent tokens (estimated) as too long: in proportion to what the API said
// when it gave numbers, else three quarters, always less than sent.
func smallerTarget(sent int, err error) int {
	target := sent * 3 / 4
	if in, limit, ok := PromptTooLongTokens(err); ok && in > limit && limit > 0 {
		target = min(target, int(float64(sent)*float64(limit)/float64(in)*0.9))
	}
	return target
}

// extractSummary returns the text of content without the <analysis>
// scratchpad, and only the inside of <summary> when the model used the tags.
// A summary cut off by max_tokens keeps what was written.
func extractSummary(content []llm.Block) string {
	var parts []string
	for _, b := range content {
		if b.Type == llm.TypeText && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	text := strings.Join(parts, "\n")
	for {
		i := strings.Index(text, "<analysis>")
		if i < 0 {
			break
		}
		j := strings.Index(text[i:], "</analysis>")
		if j < 0 {
			text = text[:i] // an analysis cut off by max_tokens: no summary yet
			break
		}
		text = text[:i] + text[i+j+len("</analysis>"):]
	}
	if i := strings.Index(text, "<summary>"); i >= 0 {
		text = text[i+len("<summary>"):]
		if j := strings.LastIndex(text, "</summary>"); j >= 0 {
			text = text[:j]
		}
	}
	return strings.TrimSpace(text)
}

// IsPromptTooLong reports whether err is the API refusing a request because
// its input does not fit the context window: a 400 invalid_request_error
// saying "prompt is too long", "input is too long", "input length and
// `max_tokens` exceed context limit" or the like (the wording of the
// Anthropic API, Bedrock and Vertex differ). A 413 request_too_large (a body
// over the size limit) counts too: compacting is the remedy for both.
func IsPromptTooLong(err error) bool {
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	if apiErr.Status == 413 || apiErr.Type == "request_too_large" {
		return true
	}
	if apiErr.Status != 400 && !(apiErr.Status == 0 && apiErr.Type == "invalid_request_error") {
		return false
	}
	msg := strings.ToLower(apiErr.Message)
	for _, s := range []string{"prompt is too long", "input is too long", "input length", "exceed context limit",
		"exceeds the context window", "context length", "too many tokens"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

var (
	tooLongRe = lazyregexp.New(`(\d+) tokens > (\d+)`)
	// "input length and `max_tokens` exceed context limit: 188000 + 21333 > 200000"
	exceedRe = lazyregexp.New(`(\d+) \+ (\d+) > (\d+)`)
)

// PromptTooLongTokens reads the numbers of a prompt-too-long error: the
// input tokens of the refused request and the most input it could have had.
func PromptTooLongTokens(err error) (input, limit int, ok bool) {
	var apiErr *llm.APIError
	if !IsPromptTooLong(err) || !errors.As(err, &apiErr) {
		return 0, 0, false
	}
	if m := tooLongRe().FindStringSubmatch(apiErr.Message); m != nil {
		in, err1 := strconv.Atoi(m[1])
		lim, err2 := strconv.Atoi(m[2])
		return in, lim, err1 == nil && err2 == nil
	}
	if m := exceedRe().FindStringSubmatch(apiErr.Message); m != nil {
		in, err1 := strconv.Atoi(m[1])
		out, err2 := strconv.Atoi(m[2])
		window, err3 := strconv.Atoi(m[3])
		return in, window - out, err1 == nil && err2 == nil && err3 == nil
	}
	return 0, 0, false
}
