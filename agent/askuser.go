package agent

import (
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/tool/ask"
)

// AskUserQuestionTool is the name of the tool the model calls to put
// multiple-choice questions to the user. Its calls always reach
// [CanUseTool] (no permission rule or mode answers them): read the
// questions with [ParseQuestions], and allow the call with the input
// [AnswerQuestions] returns as [PermissionResult.UpdatedInput]. Without a
// CanUseTool the call runs unanswered and the model is told to go on with
// its own judgement.
const AskUserQuestionTool = ask.Name

// Questions is the input of an AskUserQuestion call: one to four
// questions.
type Questions struct {
	Questions []Question `json:"questions"`
}

// Question is one question of an AskUserQuestion call. The user picks one
// of its Options (several when MultiSelect), or types an answer of their
// own.
type Question struct {
	// Question is the whole question; answers are keyed by it.
	Question string `json:"question"`
	// Header is a very short tag for it (at most 12 characters).
	Header      string           `json:"header"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multiSelect"`
}

// QuestionOption is one choice of a [Question].
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	// Preview, when set, is Markdown to show while the option is
	// highlighted.
	Preview string `json:"preview,omitempty"`
}

// ParseQuestions reads the input of an AskUserQuestion call.
func ParseQuestions(input json.RawMessage) (Questions, error) {
	var q Questions
	if err := json.Unmarshal(input, &q); err != nil {
		return Questions{}, fmt.Errorf("read the questions of %s: %w", AskUserQuestionTool, err)
	}
	return q, nil
}

// AnswerQuestions returns input with answers filled in: question text to
// answer (an option's label, labels joined by ", " for a multi-select
// question, or what the user typed). The rest of the input is kept as it
// was.
func AnswerQuestions(input json.RawMessage, answers map[string]string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return nil, fmt.Errorf("read the input of %s: %w", AskUserQuestionTool, err)
	}
	a, err := json.Marshal(answers)
	if err != nil {
		return nil, fmt.Errorf("encode the answers: %w", err)
	}
	fields["answers"] = a
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode the input of %s: %w", AskUserQuestionTool, err)
	}
	return out, nil
}
