// Package ask holds AskUserQuestion, the tool a model uses to put
// multiple-choice questions to the user. The tool itself asks nobody: the
// call goes through the permission step like any other, and whoever
// approves it (the terminal UI's question dialog, an SDK host's
// can_use_tool, a Go host's CanUseTool) fills in the answers in the input
// it returns. The tool then hands those answers to the model, or, when
// there were none, tells it that nobody can answer here.
package ask

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/tool"
)

// Name is the tool's name.
const Name = "AskUserQuestion"

var (
	//go:embed ask.md
	description string
	//go:embed answered.md
	answeredText string
	//go:embed unanswered.md
	unansweredText string
)

// schema is Claude Code's input schema, without descriptions (ask.md says
// it all) and with annotations and metadata left open: answers,
// annotations and metadata are filled in by the one who answers, not by
// the model, and each byte here is in every request.
const schema = `{"type":"object","properties":{` +
	`"questions":{"type":"array","minItems":1,"maxItems":4,"items":{"type":"object","properties":{` +
	`"question":{"type":"string"},"header":{"type":"string"},` +
	`"options":{"type":"array","minItems":2,"maxItems":4,"items":{"type":"object","properties":{` +
	`"label":{"type":"string"},"description":{"type":"string"},"preview":{"type":"string"}},` +
	`"required":["label","description"],"additionalProperties":false}},` +
	`"multiSelect":{"type":"boolean"}},` +
	`"required":["question","header","options","multiSelect"],"additionalProperties":false}},` +
	`"answers":{"type":"object","additionalProperties":{"type":"string"}},` +
	`"annotations":{"type":"object"},"metadata":{"type":"object"}},` +
	`"required":["questions"],"additionalProperties":false}`

// Tools returns AskUserQuestion.
func Tools() []tool.Tool { return []tool.Tool{askTool{}} }

// Option is one choice of a question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Preview     string `json:"preview,omitempty"`
}

// Question is one question of a call.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

// Annotation is what the user added to an answer.
type Annotation struct {
	Preview string `json:"preview,omitempty"`
	Notes   string `json:"notes,omitempty"`
}

// Input is the tool's input, answers included once someone answered.
type Input struct {
	Questions   []Question            `json:"questions"`
	Answers     map[string]string     `json:"answers,omitempty"`
	Annotations map[string]Annotation `json:"annotations,omitempty"`
	Metadata    *struct {
		Source string `json:"source,omitempty"`
	} `json:"metadata,omitempty"`
}

// Output is the structured result, as Claude Code reports it: the
// questions and the answers keyed by question text.
type Output struct {
	Questions   []Question            `json:"questions"`
	Answers     map[string]string     `json:"answers"`
	Annotations map[string]Annotation `json:"annotations,omitempty"`
}

type askTool struct{}

func (askTool) Name() string                 { return Name }
func (askTool) Description() string          { return description }
func (askTool) InputSchema() json.RawMessage { return json.RawMessage(schema) }

// ReadOnly: asking changes nothing outside the conversation.
func (askTool) ReadOnly(json.RawMessage) bool { return true }

// Run reports the answers the approver filled in.
func (t askTool) Run(_ context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in Input
	if err := tool.Decode(t.Name(), input, &in); err != nil {
		return tool.Result{}, err
	}
	if err := check(in.Questions); err != nil {
		return tool.Result{}, err
	}
	out := Output{Questions: in.Questions, Answers: map[string]string{}, Annotations: in.Annotations}
	var lines []string
	for _, q := range in.Questions {
		a, ok := in.Answers[q.Question]
		if !ok {
			continue
		}
		out.Answers[q.Question] = a
		line := fmt.Sprintf("- %q: %q", q.Question, a)
		if n := in.Annotations[q.Question].Notes; n != "" {
			line += fmt.Sprintf(" (their note: %q)", n)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return tool.Result{Content: tool.TextResult(strings.TrimSpace(unansweredText), nil).Content, IsError: true, Structured: out}, nil
	}
	return tool.TextResult(fmt.Sprintf(strings.TrimSpace(answeredText), strings.Join(lines, "\n")), out), nil
}

// check refuses what the schema cannot say: two questions with the same
// text (answers are keyed by it) and two options with the same label.
func check(qs []Question) error {
	seen := map[string]bool{}
	for _, q := range qs {
		if seen[q.Question] {
			return tool.BadInput(Name, "two questions read %q: each question's text must be unique, since answers are keyed by it", q.Question)
		}
		seen[q.Question] = true
		labels := map[string]bool{}
		for _, o := range q.Options {
			if labels[o.Label] {
				return tool.BadInput(Name, "question %q has two options labelled %q", q.Question, o.Label)
			}
			labels[o.Label] = true
		}
	}
	return nil
}
