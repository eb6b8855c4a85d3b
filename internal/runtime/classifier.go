package runtime

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/engine"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/permission"
)

// classifierPrompt is the system prompt of auto mode's classifier.
//
//go:embed classifier.md
var classifierPrompt string

// classifierToolName is the one tool the classifier answers through.
const classifierToolName = "decide"

// classifierTool is the schema of the classifier's answer; the request
// forces its use, so the answer is a JSON object the API has checked.
var classifierTool = llm.ToolSpec{
	Name:        classifierToolName,
	Description: "Give the decision on the action: allow or block, with a one-sentence reason.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{` +
		`"decision":{"type":"string","enum":["allow","block"]},` +
		`"reason":{"type":"string"}},` +
		`"required":["decision","reason"],"additionalProperties":false}`),
}

// Bounds on what the classifier reads of the conversation and of the call:
// enough to judge, and a small request whatever the session's size.
const (
	classifierRequests  = 3    // the user's most recent messages
	classifierTextLimit = 2000 // bytes of each of them
	classifierInputMax  = 8000 // bytes of the call's input
	classifierMemoryMax = 6000 // bytes of the instructions files, in all
	classifierMaxTokens = 1024
)

// classification is the classifier's answer.
type classification struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// classify decides, in auto mode, a call that would otherwise be asked: the
// small model allows or blocks it. A block, and a classifier that fails or
// answers anything but a decision, deny the call with the reason; the call
// is never allowed unless the classifier said so.
func (g gate) classify(ctx context.Context, c engine.ToolCall, reason string) engine.Verdict {
	verdict, err := g.classification(ctx, c, reason)
	if err != nil {
		return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: fmt.Sprintf(
			"Auto mode blocked %s: the classifier failed (%v), so the call was not run.", c.Name, err)}
	}
	if verdict.Decision == "allow" {
		return engine.Verdict{Behavior: engine.Allow}
	}
	return engine.Verdict{Behavior: engine.Deny, Unattended: true, Message: fmt.Sprintf(
		"Auto mode's classifier blocked %s: %s", c.Name, verdict.Reason)}
}

// classification asks the small model about c and reads its answer.
func (g gate) classification(ctx context.Context, c engine.ToolCall, reason string) (classification, error) {
	p := g.t.env.Model.Provider
	if p == nil || g.t.s.small == "" {
		return classification{}, errors.New("no model to ask")
	}
	req := &llm.Request{
		Model:      g.t.s.small,
		System:     []llm.Block{llm.Text(classifierPrompt)},
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(g.classifierInput(c, reason))}}},
		Tools:      []llm.ToolSpec{classifierTool},
		ToolChoice: json.RawMessage(`{"type":"tool","name":"` + classifierToolName + `"}`),
		MaxTokens:  classifierMaxTokens,
	}
	// Through the thread's metered provider: the classifier's usage and
	// cost are the session's.
	resp, err := p.Stream(ctx, req, llm.Observer{})
	if err != nil {
		return classification{}, err
	}
	return parseClassification(resp.Content)
}

// classifierInput is what the classifier reads: the user's requests, the
// rules, why the call needs approval, and the call.
func (g gate) classifierInput(c engine.ToolCall, reason string) string {
	var b strings.Builder
	b.WriteString("## What the user asked for\n\n")
	var requests []string
	if g.t.engine != nil {
		requests = userRequests(g.t.engine.Messages(), classifierRequests)
	}
	if len(requests) == 0 {
		b.WriteString("(no message from the user)\n")
	}
	for _, r := range requests {
		fmt.Fprintf(&b, "<user_message>\n%s\n</user_message>\n", clipText(r, classifierTextLimit))
	}
	g.writeInstructions(&b)
	checker := g.t.checker
	rules := checker.Rules()
	b.WriteString("\n## Permission rules\n\n")
	writeRules(&b, "allow", rules.Allow)
	writeRules(&b, "ask", rules.Ask)
	writeRules(&b, "deny", rules.Deny)
	fmt.Fprintf(&b, "\nWorking directories: %s\n", strings.Join(checker.Dirs(), ", "))
	fmt.Fprintf(&b, "\n## Why it was not already allowed\n\n%s\n", reason)
	input := c.Input
	var compact bytes.Buffer
	if json.Compact(&compact, input) == nil {
		input = compact.Bytes()
	}
	fmt.Fprintf(&b, "\n## The action\n\nTool: %s\nInput: %s\n", c.Name, clipText(string(input), classifierInputMax))
	return b.String()
}

// writeInstructions adds the instructions files the session loaded at
// start (CLAUDE.md…), up to classifierMemoryMax bytes: what the user wrote
// down as their wishes for the project.
func (g gate) writeInstructions(b *strings.Builder) {
	s := g.t.s
	if s.memory == nil {
		return
	}
	files := s.memory.Root()
	if len(files) == 0 {
		return
	}
	b.WriteString("\n## The user's instructions files\n\n")
	left := classifierMemoryMax
	for _, f := range files {
		if left <= 0 {
			b.WriteString("(more files left out)\n")
			return
		}
		text := clipText(f.Content, left)
		left -= len(text)
		fmt.Fprintf(b, "<instructions path=%q>\n%s\n</instructions>\n", f.Path, text)
	}
}

// writeRules lists the rules of one behavior.
func writeRules(b *strings.Builder, behavior string, rules []permission.Rule) {
	if len(rules) == 0 {
		fmt.Fprintf(b, "%s: (none)\n", behavior)
		return
	}
	texts := make([]string, len(rules))
	for i, r := range rules {
		texts[i] = r.String()
	}
	fmt.Fprintf(b, "%s: %s\n", behavior, strings.Join(texts, ", "))
}

// userRequests are the texts of the last n messages the user typed, oldest
// first: not tool results, not the context tack adds as reminders. The
// agent's own words are left out, so that it cannot argue its case.
func userRequests(msgs []llm.Message, n int) []string {
	var out []string
	for i := len(msgs) - 1; i >= 0 && len(out) < n; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		var parts []string
		for _, blk := range msgs[i].Content {
			if blk.Type == llm.TypeText && !strings.HasPrefix(blk.Text, llm.ReminderOpen) && strings.TrimSpace(blk.Text) != "" {
				parts = append(parts, blk.Text)
			}
		}
		if len(parts) > 0 {
			out = append([]string{strings.Join(parts, "\n")}, out...)
		}
	}
	return out
}

// clipText cuts s to at most limit bytes, on a rune boundary, saying so.
func clipText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" […%d more bytes]", len(s)-cut)
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// parseClassification reads the classifier's answer: the input of its
// decide call, or else a text that is only such a JSON object (a model
// that ignored the tool). Anything else is an error.
func parseClassification(content []llm.Block) (classification, error) {
	var raw []byte
	for _, b := range content {
		if b.Type == llm.TypeToolUse && b.Name == classifierToolName {
			raw = b.Input
			break
		}
	}
	if raw == nil {
		text := strings.TrimSpace(llm.TextOf(content))
		text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```")
		raw = []byte(strings.TrimSpace(text))
	}
	var ans classification
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ans); err != nil {
		return classification{}, fmt.Errorf("its answer is not a decision: %.200q", raw)
	}
	if dec.More() {
		return classification{}, fmt.Errorf("its answer holds more than a decision: %.200q", raw)
	}
	ans.Reason = strings.TrimSpace(ans.Reason)
	switch {
	case ans.Decision != "allow" && ans.Decision != "block":
		return classification{}, fmt.Errorf("its decision %q is neither allow nor block", ans.Decision)
	case ans.Decision == "block" && ans.Reason == "":
		return classification{}, errors.New("it blocked the call without a reason")
	}
	return ans, nil
}
