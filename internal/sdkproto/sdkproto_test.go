package sdkproto

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/tackcode/tack/agent"
)

func TestPromptText(t *testing.T) {
	cases := []struct {
		in      string
		text    string
		dropped int
	}{
		{`{"role":"user","content":"plain"}`, "plain", 0},
		{`{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{}},{"type":"text","text":"b"}]}`, "a\n\nb", 1},
	}
	for _, c := range cases {
		text, dropped, err := promptText(json.RawMessage(c.in))
		if err != nil || text != c.text || dropped != c.dropped {
			t.Errorf("%s: %q %d %v", c.in, text, dropped, err)
		}
	}
	if _, _, err := promptText(json.RawMessage(`{"content": 3}`)); err == nil {
		t.Error("a numeric content was read")
	}
}

func TestApplyInit(t *testing.T) {
	var warnings []string
	warn := func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) }
	var ids []string
	hookFor := func(id string) agent.HookCallback {
		ids = append(ids, id)
		return func(context.Context, agent.HookInput, json.RawMessage) (*agent.HookOutput, error) { return nil, nil }
	}
	opts := agent.Options{AppendSystemPrompt: "from the flag", DisallowedTools: []string{"Write"}}
	var req initRequest
	raw := `{"subtype":"initialize","systemPrompt":[""],"appendSystemPrompt":"from the SDK",
	  "agents":{"rev":{"description":"d","prompt":"p","tools":["Read"],"model":"haiku"}},
	  "hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0","hook_1"],"timeout":5},{"matcher":"Bash(","hookCallbackIds":["hook_2"]}],
	           "Stop":[{"hookCallbackIds":["hook_3"]}]},
	  "disallowedTools":["Edit"], "settings":{"model":"haiku"}, "mcpServers":{"s":{"command":"x"}}, "sdkMcpServers":["inproc", "bare"],
	  "sdkMcpServerManifests":{"inproc":{"initializeResult":{"protocolVersion":"2025-11-25"},"toolsListResult":{"tools":[]}}}}`
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		t.Fatal(err)
	}
	manifests := map[string]*manifest{}
	sdkServer := func(name string, m *manifest) agent.MCPServerConfig {
		manifests[name] = m
		return agent.MCPTransportServer{}
	}
	applied, err := applyInit(&opts, req, hookFor, sdkServer, warn)
	if err != nil {
		t.Fatal(err)
	}
	if opts.SystemPrompt == nil || *opts.SystemPrompt != defaultSDKPrompt {
		t.Errorf("an empty system prompt became %v", opts.SystemPrompt)
	}
	if opts.AppendSystemPrompt != "from the flag\n\nfrom the SDK" {
		t.Errorf("append %q", opts.AppendSystemPrompt)
	}
	if a := opts.Agents["rev"]; a.Prompt != "p" || a.Model != "haiku" || len(a.Tools) != 1 {
		t.Errorf("agent %+v", a)
	}
	pre := opts.Hooks[agent.HookPreToolUse]
	if len(pre) != 1 || pre[0].Matcher != "Bash" || pre[0].TimeoutSeconds != 5 || len(pre[0].Hooks) != 2 || len(opts.Hooks[agent.HookStop]) != 1 {
		t.Errorf("hooks %+v", opts.Hooks)
	}
	if strings.Join(ids, ",") != "hook_0,hook_1,hook_3" {
		t.Errorf("callback ids %v", ids)
	}
	if strings.Join(opts.DisallowedTools, ",") != "Write,Edit" || opts.Settings != `{"model":"haiku"}` ||
		len(opts.MCPConfig) != 1 || opts.MCPConfig[0] != `{"mcpServers":{"s":{"command":"x"}}}` {
		t.Errorf("launch fields %+v", opts)
	}
	if !applied.settings || !applied.disallowedTools || !applied.mcpServers || applied.managedSettings {
		t.Errorf("applied %+v", applied)
	}
	if _, ok := opts.MCPServers["inproc"].(agent.MCPTransportServer); !ok || len(opts.MCPServers) != 2 ||
		manifests["inproc"] == nil || string(manifests["inproc"].ToolsListResult) != `{"tools":[]}` || manifests["bare"] != nil {
		t.Errorf("SDK MCP servers %v, manifests %v", opts.MCPServers, manifests)
	}
	all := strings.Join(warnings, "\n")
	if !strings.Contains(all, "Bash(") {
		t.Errorf("warnings %q", all)
	}
}

// pipePeer connects a conn to a fake SDK over pipes.
type pipePeer struct {
	c     *conn
	toIn  *io.PipeWriter
	out   *bufio.Reader
	mu    sync.Mutex
	warns []string
}

func newPipePeer(t *testing.T) *pipePeer {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &pipePeer{toIn: inW, out: bufio.NewReader(outR)}
	p.c = newConn(outW, func(f string, a ...any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.warns = append(p.warns, fmt.Sprintf(f, a...))
	})
	go p.c.read(inR)
	t.Cleanup(func() { inW.Close(); outW.Close() })
	return p
}

func (p *pipePeer) readFrame(t *testing.T) map[string]any {
	t.Helper()
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestConnRequestRoundTrip(t *testing.T) {
	p := newPipePeer(t)
	type answer struct {
		raw json.RawMessage
		err error
	}
	got := make(chan answer, 1)
	go func() {
		raw, err := p.c.request(context.Background(), "can_use_tool", map[string]any{"tool_name": "Bash"})
		got <- answer{raw, err}
	}()
	req := p.readFrame(t)
	id := req["request_id"].(string)
	if req["type"] != "control_request" || req["request"].(map[string]any)["subtype"] != "can_use_tool" || id == "" {
		t.Fatalf("request %v", req)
	}
	io.WriteString(p.toIn, "garbage\n")
	io.WriteString(p.toIn, `{"type":"control_response","response":{"subtype":"success","request_id":"other","response":{}}}`+"\n")
	io.WriteString(p.toIn, `{"type":"control_response","response":{"subtype":"success","request_id":"`+id+`","response":{"behavior":"allow"}}}`+"\n")
	a := <-got
	if a.err != nil || string(a.raw) != `{"behavior":"allow"}` {
		t.Fatalf("answer %s %v", a.raw, a.err)
	}
	p.mu.Lock()
	warns := strings.Join(p.warns, "\n")
	p.mu.Unlock()
	if !strings.Contains(warns, "line 1") || !strings.Contains(warns, `"other"`) {
		t.Errorf("warnings %q", warns)
	}
}

func TestConnErrorAnswerAndClosedInput(t *testing.T) {
	p := newPipePeer(t)
	errs := make(chan error, 2)
	go func() {
		_, err := p.c.request(context.Background(), "hook_callback", nil)
		errs <- err
	}()
	id := p.readFrame(t)["request_id"].(string)
	io.WriteString(p.toIn, `{"type":"control_response","response":{"subtype":"error","request_id":"`+id+`","error":"No hook callback found for ID: hook_9"}}`+"\n")
	if err := <-errs; err == nil || !strings.Contains(err.Error(), "hook_9") {
		t.Errorf("error answer gave %v", err)
	}
	// A request still waiting when stdin ends fails instead of hanging.
	go func() {
		_, err := p.c.request(context.Background(), "can_use_tool", nil)
		errs <- err
	}()
	p.readFrame(t)
	p.toIn.Close()
	if err := <-errs; !errors.Is(err, errInputClosed) {
		t.Errorf("pending request at EOF: %v", err)
	}
	if _, err := p.c.request(context.Background(), "can_use_tool", nil); !errors.Is(err, errInputClosed) {
		t.Errorf("request after EOF: %v", err)
	}
}

func TestConnRequestCancelled(t *testing.T) {
	p := newPipePeer(t)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := p.c.request(ctx, "can_use_tool", nil)
		errs <- err
	}()
	id := p.readFrame(t)["request_id"].(string)
	cancel()
	if f := p.readFrame(t); f["type"] != "control_cancel_request" || f["request_id"] != id {
		t.Errorf("cancel frame %v", f)
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
}
