package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

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

// Tools written in Go reach the model through an in-process MCP server.
func ExampleTool() {
	type lookupIn struct {
		Key string `json:"key" jsonschema:"the key to look up"`
	}
	lookup := agent.Tool("lookup", "Looks a key up in the team's settings store",
		func(ctx context.Context, in lookupIn) (string, error) { return in.Key + " = 42", nil })

	api, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("mcp__store__lookup", map[string]string{"key": "answer"})),
		llmtest.Reply(llmtest.Text("The answer is 42.")),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()
	opts := agent.Options{
		NoSessionPersistence: true,
		MCPServers:           map[string]agent.MCPServerConfig{"store": agent.NewSDKServer("store", lookup)},
		AllowedTools:         []string{"mcp__store__lookup"},
		Env:                  map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": api.URL()},
	}
	for msg, err := range agent.Query(context.Background(), "What is the answer?", opts) {
		if err != nil {
			log.Fatal(err)
		}
		switch m := msg.(type) {
		case *agent.UserMessage:
			fmt.Println("tool said:", m.Message.Content[0].Content[0].Text)
		case *agent.ResultMessage:
			fmt.Println(m.Text())
		}
	}
	// Output:
	// tool said: answer = 42
	// The answer is 42.
}

// With JSONSchema, the result carries the answer as JSON of that shape.
func ExampleOptions_jsonSchema() {
	api, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("StructuredOutput", map[string]any{"files": 3, "language": "Go"})),
		llmtest.Reply(llmtest.Text("Done.")),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()
	opts := agent.Options{
		NoSessionPersistence: true,
		JSONSchema: []byte(`{"type": "object", "required": ["files", "language"],
			"properties": {"files": {"type": "integer"}, "language": {"type": "string"}}}`),
		Env: map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": api.URL()},
	}
	for msg, err := range agent.Query(context.Background(), "Describe this repository", opts) {
		if err != nil {
			log.Fatal(err)
		}
		if r, ok := msg.(*agent.ResultMessage); ok {
			out, _ := json.Marshal(r.StructuredOutput)
			fmt.Println(string(out))
		}
	}
	// Output:
	// {"files":3,"language":"Go"}
}

// A Client keeps one conversation across prompts.
func ExampleClient() {
	api, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{
		llmtest.Reply(llmtest.Text("It prints hello.")),
		llmtest.Reply(llmtest.Text("Add a test that captures stdout.")),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()
	c, err := agent.NewClient(context.Background(), agent.Options{
		NoSessionPersistence: true,
		Env:                  map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": api.URL()},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for _, prompt := range []string{"What does main.go do?", "How would you test it?"} {
		if err := c.Send(prompt); err != nil {
			log.Fatal(err)
		}
		for msg, err := range c.ReceiveResponse() {
			if err != nil {
				log.Fatal(err)
			}
			if r, ok := msg.(*agent.ResultMessage); ok {
				fmt.Println(r.Text())
			}
		}
	}
	// Output:
	// It prints hello.
	// Add a test that captures stdout.
}

// An interactive host asks the user before the folder's own code (hooks,
// MCP servers…) can run, and runs the session untrusted when the answer is
// no.
func ExampleCheckWorkspace() {
	dir, err := os.MkdirTemp("", "project")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(`{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "make setup"}]}]}}`), 0o644)
	opts := agent.Options{Cwd: dir, Env: map[string]string{"CLAUDE_CONFIG_DIR": filepath.Join(dir, "config")}}

	ws, err := agent.CheckWorkspace(opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("trusted:", ws.Trusted)
	fmt.Println("brings:", strings.Join(ws.Brings, "; "))
	userSaysYes := false // the host asks here
	if userSaysYes {
		if _, err := agent.TrustWorkspace(opts); err != nil {
			log.Fatal(err)
		}
	} else {
		// agent.Query(ctx, prompt, opts) then runs without the folder's hook.
		opts.Untrusted = true
	}

	// Output:
	// trusted: false
	// brings: hooks (.claude/settings.json)
}

// A host that lets its user clear the conversation ends the session for
// that reason and starts the next one as its replacement: the hooks see a
// conversation cleared, not one that ended for good and a new one.
func ExampleClient_CloseFor() {
	api, err := llmtest.NewServer(llmtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()

	say := func(_ context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
		switch in := in.(type) {
		case *agent.SessionStartHookInput:
			fmt.Println("SessionStart", in.Source)
		case *agent.SessionEndHookInput:
			fmt.Println("SessionEnd", in.Reason)
		}
		return nil, nil
	}
	opts := agent.Options{
		NoSessionPersistence: true,
		Env:                  map[string]string{"ANTHROPIC_API_KEY": "example", "ANTHROPIC_BASE_URL": api.URL()},
		Hooks: map[agent.HookEvent][]agent.HookMatcher{
			agent.HookSessionStart: {{Hooks: []agent.HookCallback{say}}},
			agent.HookSessionEnd:   {{Hooks: []agent.HookCallback{say}}},
		},
	}
	c, err := agent.NewClient(context.Background(), opts)
	if err != nil {
		log.Fatal(err)
	}
	// The user types /clear.
	c.CloseFor(agent.EndClear)
	opts.Restart = agent.RestartClear
	if c, err = agent.NewClient(context.Background(), opts); err != nil {
		log.Fatal(err)
	}
	c.Close()
	// Output:
	// SessionStart startup
	// SessionEnd clear
	// SessionStart clear
	// SessionEnd other
}
