package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// A Go host answers the model's questions in CanUseTool, through the
// updated input.
func ExampleAnswerQuestions() {
	api, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse(agent.AskUserQuestionTool, map[string]any{"questions": []any{map[string]any{
			"question": "Tabs or spaces?", "header": "Indent", "multiSelect": false,
			"options": []any{
				map[string]any{"label": "Tabs", "description": "gofmt's choice"},
				map[string]any{"label": "Spaces", "description": "four of them"},
			}}}})),
		llmtest.Reply(llmtest.Text("Tabs, then.")),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()

	opts := agent.Options{
		NoSessionPersistence: true,
		Env:                  map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": api.URL()},
		CanUseTool: func(_ context.Context, tool string, input json.RawMessage, _ agent.ToolPermissionContext) (agent.PermissionResult, error) {
			if tool != agent.AskUserQuestionTool {
				return agent.PermissionResult{Message: "only questions here"}, nil
			}
			qs, err := agent.ParseQuestions(input)
			if err != nil {
				return agent.PermissionResult{}, err
			}
			answers := map[string]string{}
			for _, q := range qs.Questions {
				fmt.Printf("%s [%s] → %s\n", q.Question, q.Header, q.Options[0].Label)
				answers[q.Question] = q.Options[0].Label
			}
			updated, err := agent.AnswerQuestions(input, answers)
			return agent.PermissionResult{Allow: true, UpdatedInput: updated}, err
		},
	}
	for msg, err := range agent.Query(context.Background(), "Set up the formatter.", opts) {
		if err != nil {
			log.Fatal(err)
		}
		if m, ok := msg.(*agent.ResultMessage); ok {
			fmt.Println(m.Text())
		}
	}
	fmt.Println(llm.TextOf(api.Requests()[1].ToolResults()[0].Content))
	// Output:
	// Tabs or spaces? [Indent] → Tabs
	// Tabs, then.
	// The user answered your questions:
	// - "Tabs or spaces?": "Tabs"
	// Go on with the task, taking these answers into account.
}
