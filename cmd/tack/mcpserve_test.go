package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// ccServed is where the answers of Claude Code's `claude mcp serve` are
// recorded, one file per tool (see its README).
const ccServed = "../../internal/mcp/serve/testdata/claude-code"

// servedTools are the tools tack mcp serve lists: Claude Code's that tack
// has, and Glob and Grep (recorded from Claude Code's sessions).
var servedTools = []string{"Agent", "Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read", "Skill", "TaskStop", "ToolSearch", "WebFetch", "WebSearch", "Write"}

// ccLeftOut are the keys of Claude Code's results tack does not give, by
// tool, with the reason in the README's mcp serve section: Claude Code's
// bookkeeping of its own harness, and usage details tack's subagents do not
// count.
var ccLeftOut = map[string][]string{
	"Agent": {"harnessNoteCount", "harnessTailCount", "harnessSectionHash", "canContinueAgent",
		"usage.output_tokens_details", "usage.server_tool_use", "usage.service_tier", "usage.cache_creation",
		"usage.inference_geo", "usage.iterations", "usage.speed", "usage.fallback_credit"},
}

// ccNotReplayed are recorded cases tack answers differently on purpose.
var ccNotReplayed = map[string]string{
	// Claude Code's mcp serve keeps no task list between calls; tack's
	// does, so it stops the task (TestMCPServeStopsBackgroundTask).
	"TaskStop/background task of another call": "tack finds the task",
}

type ccCase struct {
	Name    string         `json:"name"`
	Input   map[string]any `json:"input"`
	IsError bool           `json:"isError"`
	Text    string         `json:"text"`
}

type ccTool struct {
	Tool  string   `json:"tool"`
	Cases []ccCase `json:"cases"`
}

// loadCC reads the recorded calls of the tools tack serves.
func loadCC(t *testing.T) []ccTool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(ccServed, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s: %v", ccServed, err)
	}
	var out []ccTool
	for _, f := range files {
		if filepath.Base(f) == "tools.json" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var ct ccTool
		if err := json.Unmarshal(data, &ct); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if slices.Contains(servedTools, ct.Tool) {
			out = append(out, ct)
		}
	}
	return out
}

// mcpServeEnv is a project like the one Claude Code's answers were
// recorded in, with tack mcp serve running in it behind a go-sdk client.
type mcpServeEnv struct {
	*env
	cs  *mcp.ClientSession
	web *httptest.Server
}

func newMCPServeEnv(t *testing.T) *mcpServeEnv {
	t.Helper()
	srv := llmtest.Start(t, llmtest.Options{Loop: true, Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("Summary: the page says Hello page."))}})
	e := &mcpServeEnv{env: &env{t: t, srv: srv, dir: t.TempDir(), home: t.TempDir()}}
	e.web = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<html><body><h1>Hello page</h1><p>Some text.</p></body></html>\n")
	}))
	t.Cleanup(e.web.Close)
	e.write(".claude/skills/greet/SKILL.md", "---\nname: greet\ndescription: Greets the user\n---\nSay hello to $ARGUMENTS.\n")
	e.reset()

	cmd := exec.Command(tackBin, "mcp", "serve")
	cmd.Dir = e.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.URL(), "SHELL=/bin/bash"}
	client := mcp.NewClient(&mcp.Implementation{Name: "cc-client", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to tack mcp serve: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	e.cs = cs
	return e
}

// reset writes the recording's files again: each tool's cases start from
// them, as they did in Claude Code.
func (e *mcpServeEnv) reset() {
	e.write("hello.py", "print('hello')\n")
	e.write("lines.txt", "one\ntwo\nthree\n")
	// A 4×4 PNG, as the recording read.
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		e.t.Fatal(err)
	}
	e.write("dot.png", buf.String())
	e.write("nb.ipynb", `{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["print(1)"], "outputs": [], "execution_count": null}], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}`)
	for _, f := range []string{"new.txt", "created.txt"} {
		os.Remove(filepath.Join(e.dir, f))
	}
}

// call calls a tool and returns its one text block.
func (e *mcpServeEnv) call(name string, args map[string]any) (string, bool) {
	e.t.Helper()
	res, err := e.cs.CallTool(e.t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		e.t.Fatalf("%s: %d content blocks, want one text block", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		e.t.Fatalf("%s: content %T, want text", name, res.Content[0])
	}
	return tc.Text, res.IsError
}

// localise puts the recording's paths and URLs in this project.
func (e *mcpServeEnv) localise(v any) any {
	switch v := v.(type) {
	case string:
		if strings.HasPrefix(v, "https://127.0.0.1:") {
			_, path, _ := strings.Cut(strings.TrimPrefix(v, "https://"), "/")
			return e.web.URL + "/" + path
		}
		return strings.ReplaceAll(v, "/repo", e.dir)
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = e.localise(x)
		}
		return out
	}
	return v
}

// Every recorded call of Claude Code's mcp serve, made to tack mcp serve,
// fails or succeeds as it did, a success holding a JSON object with every
// key of Claude Code's (in its order) with the same JSON types, and a
// refused input worded as Claude Code words it.
func TestMCPServeAnswersAsClaudeCode(t *testing.T) {
	e := newMCPServeEnv(t)
	res, err := e.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, servedTools) {
		t.Errorf("tools/list %v, want %v", names, servedTools)
	}

	for _, ct := range loadCC(t) {
		e.reset()
		for _, c := range ct.Cases {
			id := ct.Tool + "/" + c.Name
			if _, skip := ccNotReplayed[id]; skip {
				continue
			}
			t.Run(id, func(t *testing.T) {
				got, isErr := e.call(ct.Tool, e.localise(c.Input).(map[string]any))
				if isErr != c.IsError {
					t.Fatalf("isError %v, Claude Code's %v: %s", isErr, c.IsError, got)
				}
				if c.IsError {
					// A refused input reads "Tool NAME arguments failed schema
					// validation: …" or "Tool NAME input is invalid: …": the
					// same refusal, whether the schema or the tool says it.
					if strings.HasPrefix(c.Text, "Tool "+ct.Tool+" ") && !refusal(ct.Tool, got) {
						t.Errorf("error %q, want it worded as Claude Code's: %q", got, c.Text)
					}
					return
				}
				if err := sameShape(c.Text, got, ccLeftOut[ct.Tool]); err != nil {
					t.Errorf("%v\n tack:        %s\n Claude Code: %s", err, got, c.Text)
				}
			})
		}
	}
	// Agent, WebFetch and WebSearch asked the session's model.
	if n := len(e.srv.Requests()); n < 3 {
		t.Errorf("%d model requests, want one each from Agent, WebFetch and WebSearch", n)
	}
}

// A background command started by one call is stopped by a later one,
// with TaskStop's result object.
func TestMCPServeStopsBackgroundTask(t *testing.T) {
	e := newMCPServeEnv(t)
	text, isErr := e.call("Bash", map[string]any{"command": "sleep 30", "run_in_background": true})
	var started struct {
		ID   string `json:"backgroundTaskId"`
		Path string `json:"backgroundOutputPath"`
	}
	if err := json.Unmarshal([]byte(text), &started); isErr || err != nil || started.ID == "" || started.Path == "" {
		t.Fatalf("background Bash: %v %s", isErr, text)
	}
	text, isErr = e.call("TaskStop", map[string]any{"task_id": started.ID})
	var stopped map[string]any
	if err := json.Unmarshal([]byte(text), &stopped); isErr || err != nil || stopped["task_id"] != started.ID || stopped["command"] != "sleep 30" {
		t.Fatalf("TaskStop: %v %s", isErr, text)
	}
}

// sameShape reports how got, a JSON object, fails to have every key of
// want's (but those left out, as dotted paths) with the same JSON type,
// the keys in want's order.
func sameShape(want, got string, leftOut []string) error {
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := shapeOf("", w, g, leftOut); err != nil {
		return err
	}
	return sameOrder(want, got, leftOut)
}

func shapeOf(path string, w, g any, leftOut []string) error {
	if fmt.Sprintf("%T", w) != fmt.Sprintf("%T", g) {
		return fmt.Errorf("%s: %T, Claude Code's is %T", orRoot(path), g, w)
	}
	switch w := w.(type) {
	case map[string]any:
		g := g.(map[string]any)
		for k, wv := range w {
			p := strings.TrimPrefix(path+"."+k, ".")
			if slices.Contains(leftOut, p) {
				continue
			}
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: missing", p)
			}
			if wv == nil || gv == nil { // null stands for an absent value of any type
				continue
			}
			if err := shapeOf(p, wv, gv, leftOut); err != nil {
				return err
			}
		}
	case []any:
		if g := g.([]any); len(w) > 0 && len(g) > 0 {
			return shapeOf(path+"[0]", w[0], g[0], leftOut)
		}
	}
	return nil
}

// sameOrder checks that the top-level keys both objects have come in the
// same order.
func sameOrder(want, got string, leftOut []string) error {
	wk, gk := topKeys(want), topKeys(got)
	var common []string
	for _, k := range gk {
		if slices.Contains(wk, k) {
			common = append(common, k)
		}
	}
	wk = slices.DeleteFunc(wk, func(k string) bool { return slices.Contains(leftOut, k) })
	if !slices.Equal(common, wk) {
		return fmt.Errorf("keys in the order %v, Claude Code's %v", common, wk)
	}
	return nil
}

func topKeys(obj string) []string {
	dec := json.NewDecoder(bytes.NewReader([]byte(obj)))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

func orRoot(path string) string {
	if path == "" {
		return "the result"
	}
	return path
}

// refusal reports whether text is a refused input of tool, worded as
// Claude Code words one.
func refusal(tool, text string) bool {
	return strings.HasPrefix(text, "Tool "+tool+" arguments failed schema validation: ") || strings.HasPrefix(text, "Tool "+tool+" input is invalid: ")
}

// inspector is the MCP Inspector's command of test/inspector.
func inspector(t *testing.T) string {
	t.Helper()
	bin, _ := filepath.Abs(filepath.Join("..", "..", "test", "inspector", "node_modules", ".bin", "mcp-inspector"))
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("test/inspector/node_modules is missing: run scripts/test")
	}
	return bin
}

// The MCP Inspector's CLI, a client written for Claude Code's servers,
// lists tack mcp serve's tools and calls them, getting Claude Code's result
// objects.
func TestMCPServeThroughInspector(t *testing.T) {
	e := newMCPServeEnv(t)
	run := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(inspector(t), append([]string{"--cli", tackBin, "mcp", "serve"}, args...)...)
		cmd.Dir = e.dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "CLAUDE_CONFIG_DIR=" + filepath.Join(e.home, ".claude"),
			"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + e.srv.URL(), "SHELL=/bin/bash"}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return m
	}
	list := run("--method", "tools/list")
	var names []string
	for _, tl := range list["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	slices.Sort(names)
	if !slices.Equal(names, servedTools) {
		t.Errorf("tools/list %v, want %v", names, servedTools)
	}

	recorded := map[string]ccCase{}
	for _, ct := range loadCC(t) {
		for _, c := range ct.Cases {
			recorded[ct.Tool+"/"+c.Name] = c
		}
	}
	for _, tc := range []struct {
		id   string
		args []string
	}{
		{"Read/text", []string{"file_path=" + filepath.Join(e.dir, "hello.py")}},
		{"Bash/ok", []string{"command=echo ok"}},
		{"Write/create", []string{"file_path=" + filepath.Join(e.dir, "new.txt"), "content=fresh"}},
		{"Skill/with args", []string{"skill=greet", "args=Bob"}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			tool, _, _ := strings.Cut(tc.id, "/")
			args := []string{"--method", "tools/call", "--tool-name", tool}
			for _, a := range tc.args {
				args = append(args, "--tool-arg", a)
			}
			res := run(args...)
			content, _ := res["content"].([]any)
			if len(content) != 1 || res["isError"] == true {
				t.Fatalf("result %v", res)
			}
			text, _ := content[0].(map[string]any)["text"].(string)
			if err := sameShape(recorded[tc.id].Text, text, nil); err != nil {
				t.Errorf("%v\n tack:        %s\n Claude Code: %s", err, text, recorded[tc.id].Text)
			}
		})
	}
}

// With no credentials the server still starts and serves the tools that
// need no model; those that do fail, saying what to set.
func TestMCPServeWithoutCredentials(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("served\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tackBin, "mcp", "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude")}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	e := &mcpServeEnv{env: &env{t: t}, cs: cs}
	if text, isErr := e.call("Read", map[string]any{"file_path": filepath.Join(dir, "note.txt")}); isErr || !strings.Contains(text, `"content":"served\n"`) {
		t.Errorf("Read: %v %s", isErr, text)
	}
	if text, isErr := e.call("Agent", map[string]any{"description": "greet", "prompt": "Say hi"}); !isErr || !strings.Contains(text, "ANTHROPIC_API_KEY") {
		t.Errorf("Agent without credentials: %v %s", isErr, text)
	}
}
