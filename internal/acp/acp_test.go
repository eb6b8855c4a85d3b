package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

func TestInitializeAdvertisesWhatTackDoes(t *testing.T) {
	e := newEnv(t)
	_, init := e.start(t, sdk.ClientCapabilities{})
	c := init.AgentCapabilities
	if init.ProtocolVersion != sdk.ProtocolVersionNumber || !c.LoadSession || !c.PromptCapabilities.Image ||
		!c.PromptCapabilities.EmbeddedContext || c.PromptCapabilities.Audio || !c.McpCapabilities.Http || !c.McpCapabilities.Sse {
		t.Errorf("initialize: %+v", init)
	}
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].Agent == nil || init.AuthMethods[0].Agent.Description == nil ||
		!strings.Contains(*init.AuthMethods[0].Agent.Description, "ANTHROPIC_API_KEY") {
		t.Errorf("auth methods: %+v", init.AuthMethods)
	}
	if init.AgentInfo == nil || init.AgentInfo.Name != "tack" {
		t.Errorf("agent info: %+v", init.AgentInfo)
	}
}

func TestPromptStreamsThoughtsAndText(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Thinking("Let me think."), llmtest.Text("Hello from tack.")))
	p, _ := e.start(t, sdk.ClientCapabilities{}, "--model", "sonnet")
	s := p.newSession()
	if s.Modes == nil || s.Modes.CurrentModeId != "default" || len(s.Modes.AvailableModes) != 6 {
		t.Errorf("modes: %+v", s.Modes)
	}
	if s.Models == nil || len(s.Models.AvailableModels) == 0 || s.Models.AvailableModels[0].ModelId != s.Models.CurrentModelId ||
		!strings.Contains(string(s.Models.CurrentModelId), "sonnet") {
		t.Errorf("models: %+v", s.Models)
	}
	resp := p.prompt(s.SessionId, "Say hello")
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	if resp.Usage == nil || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v", resp.Usage)
	}
	us := p.client.seen()
	if got := agentText(us); got != "Hello from tack." {
		t.Errorf("agent text %q", got)
	}
	if got := thoughtText(us); got != "Let me think." {
		t.Errorf("thought %q", got)
	}
	if !strings.Contains(lastRequestText(t, e.srv), "Say hello") {
		t.Error("the prompt did not reach the model")
	}
}

func TestPromptStopReasons(t *testing.T) {
	for _, tt := range []struct {
		stop string
		want sdk.StopReason
	}{{"max_tokens", sdk.StopReasonMaxTokens}, {"refusal", sdk.StopReasonRefusal}} {
		t.Run(tt.stop, func(t *testing.T) {
			turn := llmtest.Reply(llmtest.Text("partial"))
			turn.StopReason = tt.stop
			e := newEnv(t, turn)
			p, _ := e.start(t, sdk.ClientCapabilities{})
			s := p.newSession()
			if got := p.prompt(s.SessionId, "go").StopReason; got != tt.want {
				t.Errorf("stop reason %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("max_turn_requests", func(t *testing.T) {
		e := newEnv(t, llmtest.Reply(llmtest.ToolUse("Glob", map[string]any{"pattern": "*.go"})), llmtest.Reply(llmtest.Text("never")))
		p, _ := e.start(t, sdk.ClientCapabilities{}, "--max-turns", "1")
		s := p.newSession()
		if got := p.prompt(s.SessionId, "go").StopReason; got != sdk.StopReasonMaxTurnRequests {
			t.Errorf("stop reason %q", got)
		}
		if e.srv.Remaining() != 1 {
			t.Errorf("%d turns left, want 1: the run went on past its limit", e.srv.Remaining())
		}
	})
}

// bashTurn is a model turn that runs command.
func bashTurn(command string) llmtest.Turn {
	return llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": command, "description": "write a file"}))
}

// greet writes out.txt when node runs it: a command tack asks about, whose
// "always" rule (Bash(node *)) then covers the same call.
const greet = `require("fs").writeFileSync("out.txt", "hi\n")`

func TestPermissionAllowOnceAlwaysReject(t *testing.T) {
	const command = "node greet.js"
	t.Run("allow once", func(t *testing.T) {
		e := newEnv(t, bashTurn(command), llmtest.Reply(llmtest.Text("done")), bashTurn(command), llmtest.Reply(llmtest.Text("again")))
		e.write(t, "greet.js", greet)
		p, _ := e.start(t, sdk.ClientCapabilities{})
		p.client.choose(sdk.PermissionOptionKindAllowOnce)
		s := p.newSession()
		p.prompt(s.SessionId, "write it")
		if b, err := os.ReadFile(filepath.Join(e.dir, "out.txt")); err != nil || string(b) != "hi\n" {
			t.Fatalf("out.txt: %q, %v", b, err)
		}
		req := p.client.asked[0]
		kinds := []sdk.PermissionOptionKind{}
		for _, o := range req.Options {
			kinds = append(kinds, o.Kind)
		}
		if !slices.Equal(kinds, []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindRejectOnce}) {
			t.Errorf("options %v", kinds)
		}
		calls := toolCalls(p.client.seen())
		if len(calls) != 1 || calls[0].Kind != sdk.ToolKindExecute || calls[0].ToolCallId != req.ToolCall.ToolCallId || calls[0].Title != "Bash "+command {
			t.Fatalf("tool calls %+v, asked about %+v", calls, req.ToolCall)
		}
		ups := toolUpdates(p.client.seen(), calls[0].ToolCallId)
		if last := ups[len(ups)-1]; last.Status == nil || *last.Status != sdk.ToolCallStatusCompleted {
			t.Errorf("last update %+v", last)
		}
		// Once: the same call asks again.
		p.prompt(s.SessionId, "again")
		if n := len(p.client.asked); n != 2 {
			t.Errorf("%d permission requests, want 2", n)
		}
	})
	t.Run("allow always", func(t *testing.T) {
		e := newEnv(t, bashTurn(command), llmtest.Reply(llmtest.Text("done")), bashTurn(command), llmtest.Reply(llmtest.Text("again")))
		e.write(t, "greet.js", greet)
		p, _ := e.start(t, sdk.ClientCapabilities{})
		p.client.choose(sdk.PermissionOptionKindAllowAlways)
		s := p.newSession()
		p.prompt(s.SessionId, "write it")
		p.prompt(s.SessionId, "again")
		if n := len(p.client.asked); n != 1 {
			t.Errorf("%d permission requests, want 1: always holds for the session", n)
		}
		raw, err := os.ReadFile(filepath.Join(e.dir, ".claude", "settings.local.json"))
		if err != nil {
			t.Fatal(err)
		}
		var settings struct {
			Permissions struct{ Allow []string } `json:"permissions"`
		}
		if err := json.Unmarshal(raw, &settings); err != nil || !slices.Contains(settings.Permissions.Allow, "Bash(node *)") {
			t.Errorf("settings.local.json: %s (%v)", raw, err)
		}
	})
	t.Run("reject", func(t *testing.T) {
		e := newEnv(t, bashTurn(command), llmtest.Reply(llmtest.Text("ok, I won't")))
		e.write(t, "greet.js", greet)
		p, _ := e.start(t, sdk.ClientCapabilities{})
		p.client.choose(sdk.PermissionOptionKindRejectOnce)
		s := p.newSession()
		if got := p.prompt(s.SessionId, "write it").StopReason; got != sdk.StopReasonEndTurn {
			t.Errorf("stop reason %q", got)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "out.txt")); !os.IsNotExist(err) {
			t.Errorf("out.txt exists after a reject: %v", err)
		}
		if !strings.Contains(lastRequestText(t, e.srv), "rejected this tool call") {
			t.Error("the model was not told of the rejection")
		}
		calls := toolCalls(p.client.seen())
		ups := toolUpdates(p.client.seen(), calls[0].ToolCallId)
		if last := ups[len(ups)-1]; last.Status == nil || *last.Status != sdk.ToolCallStatusFailed {
			t.Errorf("last update %+v", last)
		}
	})
}

func TestWriteAndEditSendDiffs(t *testing.T) {
	e := newEnv(t)
	old := e.write(t, "a.txt", "one\ntwo\n")
	created := filepath.Join(e.dir, "new.txt")
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": created, "content": "fresh\n"})),
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": old})),
		llmtest.Reply(llmtest.ToolUse("Edit", map[string]any{"file_path": old, "old_string": "two", "new_string": "2"})),
		llmtest.Reply(llmtest.Text("done")))
	p, _ := e.start(t, sdk.ClientCapabilities{})
	s := p.newSession()
	p.setMode(s.SessionId, "acceptEdits")
	p.prompt(s.SessionId, "change files")
	calls := toolCalls(p.client.seen())
	if len(calls) != 3 {
		t.Fatalf("%d tool calls", len(calls))
	}
	want := []struct {
		kind     sdk.ToolKind
		path     string
		old, new *string
	}{
		{sdk.ToolKindEdit, created, nil, sdk.Ptr("fresh\n")},
		{sdk.ToolKindRead, old, nil, nil},
		{sdk.ToolKindEdit, old, sdk.Ptr("one\ntwo\n"), sdk.Ptr("one\n2\n")},
	}
	for i, w := range want {
		c := calls[i]
		if c.Kind != w.kind || len(c.Locations) != 1 || c.Locations[0].Path != w.path {
			t.Errorf("call %d: kind %q locations %+v", i, c.Kind, c.Locations)
		}
		d := firstDiff(p.client.seen(), c.ToolCallId)
		if w.new == nil {
			if d != nil {
				t.Errorf("call %d: diff %+v", i, d)
			}
			continue
		}
		if d == nil {
			t.Fatalf("call %d: no diff", i)
		}
		if d.Path != w.path || d.NewText != *w.new || (w.old == nil) != (d.OldText == nil) || (w.old != nil && *d.OldText != *w.old) {
			t.Errorf("call %d: diff %+v", i, d)
		}
	}
	if b, _ := os.ReadFile(old); string(b) != "one\n2\n" {
		t.Errorf("a.txt %q", b)
	}
	if b, _ := os.ReadFile(created); string(b) != "fresh\n" {
		t.Errorf("new.txt %q", b)
	}
	if len(p.client.asked) != 0 {
		t.Errorf("acceptEdits asked %d times", len(p.client.asked))
	}
}

func TestSetModeAndModeUpdates(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.ToolUse("ExitPlanMode", map[string]any{"plan": "1. do it"})), llmtest.Reply(llmtest.Text("planned")))
	p, _ := e.start(t, sdk.ClientCapabilities{})
	s := p.newSession()
	if _, err := p.conn.SetSessionMode(p.ctx(), sdk.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "yolo"}); err == nil ||
		!strings.Contains(err.Error(), "unknown mode") {
		t.Errorf("set_mode yolo: %v", err)
	}
	p.setMode(s.SessionId, "plan")
	p.client.choose(sdk.PermissionOptionKindAllowOnce)
	p.prompt(s.SessionId, "plan it")
	var modes []sdk.SessionModeId
	for _, u := range p.client.seen() {
		if u.CurrentModeUpdate != nil {
			modes = append(modes, u.CurrentModeUpdate.CurrentModeId)
		}
	}
	if !slices.Equal(modes, []sdk.SessionModeId{"plan", "default"}) {
		t.Errorf("mode updates %v, want plan then default (ExitPlanMode left plan mode)", modes)
	}
	if calls := toolCalls(p.client.seen()); len(calls) != 1 || calls[0].Kind != sdk.ToolKindSwitchMode {
		t.Errorf("calls %+v", calls)
	}
}

func TestSetModel(t *testing.T) {
	e := newEnv(t, llmtest.Reply(llmtest.Text("hi")))
	p, _ := e.start(t, sdk.ClientCapabilities{}, "--model", "sonnet")
	s := p.newSession()
	var other sdk.ModelId
	for _, m := range s.Models.AvailableModels {
		if strings.Contains(string(m.ModelId), "haiku") {
			other = m.ModelId
		}
	}
	if _, err := p.conn.UnstableSetSessionModel(p.ctx(), sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: sdk.UnstableModelId(other)}); err != nil {
		t.Fatal(err)
	}
	p.prompt(s.SessionId, "hi")
	if got := e.srv.Requests()[len(e.srv.Requests())-1].Model; got != string(other) {
		t.Errorf("request model %q, want %q", got, other)
	}
	if _, err := p.conn.UnstableSetSessionModel(p.ctx(), sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: "no-such-model"}); err == nil {
		t.Error("set_model accepted a model that is none")
	}
}

func TestPlanFollowsTheTaskList(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply(llmtest.ToolUse("TaskCreate", map[string]any{"subject": "Write the parser", "description": "d"}),
			llmtest.ToolUse("TaskCreate", map[string]any{"subject": "Test it", "description": "d"})),
		llmtest.Reply(llmtest.ToolUse("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})),
		llmtest.Reply(llmtest.Text("working")))
	p, _ := e.start(t, sdk.ClientCapabilities{})
	s := p.newSession()
	p.prompt(s.SessionId, "plan")
	var plans [][]sdk.PlanEntry
	for _, u := range p.client.seen() {
		if u.Plan != nil {
			plans = append(plans, u.Plan.Entries)
		}
	}
	if len(plans) != 3 {
		t.Fatalf("%d plan updates: %+v", len(plans), plans)
	}
	last := plans[2]
	if len(last) != 2 || last[0].Content != "Write the parser" || last[0].Status != sdk.PlanEntryStatusInProgress ||
		last[1].Content != "Test it" || last[1].Status != sdk.PlanEntryStatusPending {
		t.Errorf("plan %+v", last)
	}
}

// mkfifo makes a named pipe in the project.
func mkfifo(t *testing.T, e *env, name string) string {
	t.Helper()
	path := filepath.Join(e.dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCancelInterruptsTheTurn(t *testing.T) {
	e := newEnv(t, bashTurn("echo go > started.fifo; cat gate.fifo"), llmtest.Reply(llmtest.Text("back again")))
	started := mkfifo(t, e, "started.fifo")
	gate := mkfifo(t, e, "gate.fifo")
	p, _ := e.start(t, sdk.ClientCapabilities{}, "--allowedTools", "Bash")
	s := p.newSession()
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := p.conn.Prompt(p.ctx(), sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("wait")}})
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		done <- resp
	}()
	// The command is running once it has written to started.fifo.
	if b, err := os.ReadFile(started); err != nil || string(b) != "go\n" {
		t.Fatalf("started.fifo: %q, %v", b, err)
	}
	if err := p.conn.Cancel(p.ctx(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	if resp := <-done; resp.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	// The command was stopped: nobody reads the gate any more.
	if f, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0); !errors.Is(err, syscall.ENXIO) {
		t.Errorf("gate.fifo still has a reader: %v", err)
		if f != nil {
			f.Close()
		}
	}
	// The session takes prompts again.
	if got := p.prompt(s.SessionId, "go on").StopReason; got != sdk.StopReasonEndTurn {
		t.Errorf("next prompt: %q", got)
	}
	if !strings.Contains(agentText(p.client.seen()), "back again") {
		t.Errorf("text %q", agentText(p.client.seen()))
	}
}

func TestCancelWhileAskingForPermission(t *testing.T) {
	e := newEnv(t, bashTurn("node greet.js"))
	e.write(t, "greet.js", greet)
	p, _ := e.start(t, sdk.ClientCapabilities{})
	s := p.newSession()
	p.client.mu.Lock()
	p.client.answer = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
		// The user cancels the turn while the dialog is open: the client
		// cancels, and answers the pending request with cancelled.
		if err := p.conn.Cancel(p.ctx(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
			t.Error(err)
		}
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	}
	p.client.mu.Unlock()
	if got := p.prompt(s.SessionId, "write it").StopReason; got != sdk.StopReasonCancelled {
		t.Errorf("stop reason %q", got)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "out.txt")); !os.IsNotExist(err) {
		t.Errorf("the call ran: %v", err)
	}
}

func TestLoadSessionReplaysAndResumes(t *testing.T) {
	e := newEnv(t)
	notes := e.write(t, "notes.txt", "remember the milk\n")
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": notes})),
		llmtest.Reply(llmtest.Text("It says to remember the milk.")),
		llmtest.Reply(llmtest.Text("You asked about notes.txt.")))
	first, _ := e.start(t, sdk.ClientCapabilities{})
	s := first.newSession()
	first.prompt(s.SessionId, "What do my notes say?")
	first.stop()

	second, init := e.start(t, sdk.ClientCapabilities{})
	if !init.AgentCapabilities.LoadSession || init.AgentCapabilities.SessionCapabilities.List == nil {
		t.Fatal("no loadSession or session/list")
	}
	list, err := second.conn.ListSessions(second.ctx(), sdk.ListSessionsRequest{Cwd: &e.dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != s.SessionId || list.Sessions[0].Cwd != e.dir ||
		list.Sessions[0].Title == nil || list.Sessions[0].UpdatedAt == nil {
		t.Errorf("session/list: %+v", list.Sessions)
	}
	loaded, err := second.conn.LoadSession(second.ctx(), sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/load: %v\n%s", err, second.stderr.String())
	}
	if loaded.Modes == nil || loaded.Modes.CurrentModeId != "default" {
		t.Errorf("modes %+v", loaded.Modes)
	}
	us := second.client.seen()
	var user strings.Builder
	for _, u := range us {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil {
			user.WriteString(u.UserMessageChunk.Content.Text.Text)
		}
	}
	if !strings.Contains(user.String(), "What do my notes say?") {
		t.Errorf("replayed user text %q", user.String())
	}
	if got := agentText(us); got != "It says to remember the milk." {
		t.Errorf("replayed agent text %q", got)
	}
	calls := toolCalls(us)
	if len(calls) != 1 || calls[0].Kind != sdk.ToolKindRead || calls[0].Locations[0].Path != notes {
		t.Fatalf("replayed calls %+v", calls)
	}
	if ups := toolUpdates(us, calls[0].ToolCallId); len(ups) != 1 || *ups[0].Status != sdk.ToolCallStatusCompleted {
		t.Errorf("replayed results %+v", ups)
	}
	// It goes on with the conversation it had.
	second.prompt(s.SessionId, "What did I ask?")
	if body := lastRequestText(t, e.srv); !strings.Contains(body, "What do my notes say?") || !strings.Contains(body, "remember the milk") {
		t.Errorf("the resumed request lacks the history: %s", body)
	}
	if _, err := second.conn.LoadSession(second.ctx(), sdk.LoadSessionRequest{SessionId: "00000000-0000-4000-8000-000000000000", Cwd: e.dir, McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("loaded a session that does not exist")
	}
}

func TestFilesGoThroughTheEditor(t *testing.T) {
	e := newEnv(t)
	path := e.write(t, "a.txt", "on disk\n")
	e.srv.Append(
		llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": path})),
		llmtest.Reply(llmtest.ToolUse("Edit", map[string]any{"file_path": path, "old_string": "unsaved", "new_string": "edited"})),
		llmtest.Reply(llmtest.Text("done")))
	p, _ := e.start(t, sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	p.client.buffers[path] = "unsaved buffer\n"
	s := p.newSession()
	p.setMode(s.SessionId, "acceptEdits")
	p.prompt(s.SessionId, "edit a.txt")
	reqs := e.srv.Requests()
	afterRead := string(reqs[1].Body)
	if !strings.Contains(afterRead, `1\tunsaved buffer`) || strings.Contains(afterRead, `1\ton disk`) {
		t.Errorf("the model did not read the buffer: %s", afterRead)
	}
	p.client.mu.Lock()
	written := p.client.writes[path]
	p.client.mu.Unlock()
	if written != "edited buffer\n" {
		t.Errorf("written to the editor: %q", written)
	}
	if b, _ := os.ReadFile(path); string(b) != "on disk\n" {
		t.Errorf("the disk changed: %q", b)
	}
	calls := toolCalls(p.client.seen())
	if d := firstDiff(p.client.seen(), calls[1].ToolCallId); d == nil || d.OldText == nil || *d.OldText != "unsaved buffer\n" || d.NewText != "edited buffer\n" {
		t.Errorf("edit diff %+v", d)
	}
}

func TestBashRunsInTheEditorsTerminal(t *testing.T) {
	e := newEnv(t, bashTurn("mkdir -p sub && cd sub && echo from-terminal"), bashTurn("pwd"), llmtest.Reply(llmtest.Text("done")))
	p, _ := e.start(t, sdk.ClientCapabilities{Terminal: true}, "--allowedTools", "Bash")
	s := p.newSession()
	p.prompt(s.SessionId, "run it")
	p.client.mu.Lock()
	created, released := len(p.client.created), slices.Clone(p.client.released)
	p.client.mu.Unlock()
	if created != 2 || !slices.Equal(released, []string{"term-1", "term-2"}) {
		t.Errorf("%d terminals created, released %v", created, released)
	}
	reqs := e.srv.Requests()
	if body := string(reqs[1].Body); !strings.Contains(body, "from-terminal") {
		t.Errorf("first result: %s", body)
	}
	// The working directory carries over from one command to the next.
	if body := string(reqs[2].Body); !strings.Contains(body, filepath.Join(e.dir, "sub")) {
		t.Errorf("second result: %s", body)
	}
	calls := toolCalls(p.client.seen())
	for i, c := range calls {
		var embedded []string
		for _, u := range toolUpdates(p.client.seen(), c.ToolCallId) {
			for _, content := range u.Content {
				if content.Terminal != nil {
					embedded = append(embedded, content.Terminal.TerminalId)
				}
			}
		}
		if want := fmt.Sprintf("term-%d", i+1); len(embedded) == 0 || embedded[0] != want {
			t.Errorf("call %d embeds terminals %v, want %s", i, embedded, want)
		}
	}
}

func TestWithoutCredentialsTheClientIsToldToAuthenticate(t *testing.T) {
	e := newEnv(t)
	e.noKey = true
	p, init := e.start(t, sdk.ClientCapabilities{})
	_, err := p.conn.NewSession(p.ctx(), sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	var rerr *sdk.RequestError
	if !errors.As(err, &rerr) || rerr.Code != -32000 {
		t.Errorf("session/new without credentials: %v, want auth_required (-32000)", err)
	}
	id := init.AuthMethods[0].Agent.Id
	if _, err := p.conn.Authenticate(p.ctx(), sdk.AuthenticateRequest{MethodId: id}); !errors.As(err, &rerr) || rerr.Code != -32000 {
		t.Errorf("authenticate without credentials: %v", err)
	}

	with := newEnv(t)
	q, _ := with.start(t, sdk.ClientCapabilities{})
	if _, err := q.conn.Authenticate(q.ctx(), sdk.AuthenticateRequest{MethodId: id}); err != nil {
		t.Errorf("authenticate with a key: %v", err)
	}
	if _, err := q.conn.Authenticate(q.ctx(), sdk.AuthenticateRequest{MethodId: "oauth"}); err == nil {
		t.Error("authenticate accepted a method tack does not offer")
	}
}

func TestTheClientsMCPServersReachTheModel(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "editor", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + string(req.Params.Arguments)}}}, nil
		})
	web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(web.Close)

	e := newEnv(t, llmtest.Reply(llmtest.ToolUse("mcp__editor__echo", map[string]any{"text": "ping"})), llmtest.Reply(llmtest.Text("done")))
	p, _ := e.start(t, sdk.ClientCapabilities{})
	p.client.choose(sdk.PermissionOptionKindAllowOnce)
	s, err := p.conn.NewSession(p.ctx(), sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{
		{Http: &sdk.McpServerHttpInline{Name: "editor", Url: web.URL, Headers: []sdk.HttpHeader{}}}}})
	if err != nil {
		t.Fatal(err)
	}
	p.prompt(s.SessionId, "echo ping")
	reqs := e.srv.Requests()
	if first := string(reqs[0].Body); !strings.Contains(first, `"name":"mcp__editor__echo"`) {
		t.Errorf("the first request does not offer the client's tool")
	}
	if body := string(reqs[1].Body); !strings.Contains(body, `echo: {\"text\":\"ping\"}`) {
		t.Errorf("the tool's result did not reach the model: %s", body)
	}
	if calls := toolCalls(p.client.seen()); len(calls) != 1 || calls[0].Kind != sdk.ToolKindOther {
		t.Errorf("calls %+v", calls)
	}
}

func TestPermissionRequestShowsTheDiff(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.dir, "new.txt")
	e.srv.Append(llmtest.Reply(llmtest.ToolUse("Write", map[string]any{"file_path": path, "content": "hello\n"})), llmtest.Reply(llmtest.Text("ok")))
	p, _ := e.start(t, sdk.ClientCapabilities{})
	p.client.choose(sdk.PermissionOptionKindAllowOnce)
	s := p.newSession()
	p.prompt(s.SessionId, "write")
	if len(p.client.asked) != 1 {
		t.Fatalf("%d permission requests", len(p.client.asked))
	}
	c := p.client.asked[0].ToolCall
	if len(c.Content) != 1 || c.Content[0].Diff == nil || c.Content[0].Diff.NewText != "hello\n" || c.Content[0].Diff.OldText != nil {
		t.Errorf("permission request content %+v", c.Content)
	}
	if c.Kind == nil || *c.Kind != sdk.ToolKindEdit || len(c.Locations) != 1 || c.Locations[0].Path != path {
		t.Errorf("permission request %+v", c)
	}
	var always bool
	for _, o := range p.client.asked[0].Options {
		always = always || (o.Kind == sdk.PermissionOptionKindAllowAlways && o.Name == "Always allow Edit(./*)")
	}
	if !always {
		t.Errorf("options %+v", p.client.asked[0].Options)
	}
}
