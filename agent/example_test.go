package agent_test

import (
	"context"
	"fmt"
	"log"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// Query yields every message of the session; the last one is the result.
func ExampleQuery() {
	// A scripted stand-in for the Messages API, so that the example runs
	// anywhere. Without it, set ANTHROPIC_API_KEY and leave Env out.
	api, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("main.go prints hello."))}})
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()

	opts := agent.Options{
		Model:                "haiku",
		NoSessionPersistence: true,
		Env:                  map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": api.URL()},
	}
	for msg, err := range agent.Query(context.Background(), "What does main.go do?", opts) {
		if err != nil {
			log.Fatal(err)
		}
		switch m := msg.(type) {
		case *agent.SystemMessage:
			fmt.Println("session started with model", m.Init.Model)
		case *agent.ResultMessage:
			fmt.Println(m.Subtype+":", m.Text())
		}
	}
	// Output:
	// session started with model claude-haiku-4-5
	// success: main.go prints hello.
}
