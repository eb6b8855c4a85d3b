package cli

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// replays lists the seen user messages marked isReplay.
func (p *sdkPeer) replays() []map[string]any {
	var out []map[string]any
	for _, m := range p.seen {
		if m["type"] == "user" && m["isReplay"] == true {
			out = append(out, m)
		}
	}
	return out
}

func TestStreamReplayUserMessages(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")), llmtest.Reply(llmtest.Text("two")))
	p := startPeer(t, srv, "--replay-user-messages")
	p.send(map[string]any{"type": "user", "session_id": "", "parent_tool_use_id": nil, "uuid": "4b1f0c3e-0000-4000-8000-000000000001",
		"message": map[string]any{"role": "user", "content": "first"}})
	p.user("second") // no uuid: tack gives it one
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	got := p.replays()
	if len(got) != 2 {
		t.Fatalf("%d replays, want 2: %v", len(got), p.kinds())
	}
	sid := p.seen[len(p.seen)-1]["session_id"]
	want := map[string]any{"type": "user", "uuid": "4b1f0c3e-0000-4000-8000-000000000001", "session_id": sid, "parent_tool_use_id": nil,
		"isReplay": true, "message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "first"}}}}
	if !reflect.DeepEqual(got[0], want) {
		t.Errorf("replay\n got %v\nwant %v", got[0], want)
	}
	if id, _ := got[1]["uuid"].(string); id == "" || id == got[0]["uuid"] {
		t.Errorf("second replay uuid %q", id)
	}
	// Each echo comes right after the init of its own turn, before the answer.
	kinds := p.kinds()
	for i, k := range kinds {
		if k == "system/init" && (i+1 >= len(kinds) || kinds[i+1] != "user") {
			t.Errorf("init at %d not followed by the replay: %v", i, kinds)
		}
	}
	if n := strings.Count(strings.Join(kinds, " "), "system/init"); n != 2 {
		t.Errorf("%d turns: %v", n, kinds)
	}
}

func TestStreamWithoutReplayEchoesNothing(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")))
	p := startPeer(t, srv)
	p.user("first")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if r := p.replays(); len(r) != 0 {
		t.Errorf("replays without the flag: %v", r)
	}
}

func TestReplayUserMessagesNeedsStreamJSON(t *testing.T) {
	srv := llmtest.New(t)
	_, errOut, code := run(t, srv, "-p", "hi", "--output-format", "stream-json", "--verbose", "--replay-user-messages")
	if code != 1 || !strings.Contains(errOut, "--replay-user-messages needs --input-format stream-json") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestStreamEmitSessionStateEvents(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")))
	t.Setenv("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS", "1")
	t.Setenv("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1")
	p := startPeer(t, srv)
	p.user("first")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	var states []string
	for _, m := range p.seen {
		if m["subtype"] != "session_state_changed" {
			continue
		}
		states = append(states, m["state"].(string))
		// Emitted for whoever reads the stream: not kept to the SDK.
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if want := []string{"session_id", "state", "subtype", "type", "uuid"}; !slices.Equal(keys, want) {
			b, _ := json.Marshal(m)
			t.Errorf("state message %s has keys %v, want %v", b, keys, want)
		}
	}
	if !slices.Equal(states, []string{"running", "idle"}) {
		t.Errorf("states %v; kinds %v", states, p.kinds())
	}
}

func TestStreamInitializeListsTheSessionModelFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{{nil, "opus"}, {[]string{"--model", "haiku"}, "haiku"}} {
		srv := llmtest.New(t)
		p := startPeer(t, srv, tc.args...)
		p.controlRequest("init1", map[string]any{"subtype": "initialize"})
		resp := p.until(isResponseTo("init1"))["response"].(map[string]any)["response"].(map[string]any)
		models := resp["models"].([]any)
		if first := models[0].(map[string]any)["value"]; first != tc.want {
			t.Errorf("%v: first model %v, want %s", tc.args, first, tc.want)
		}
		n := 0
		for _, m := range models {
			if m.(map[string]any)["value"] == tc.want {
				n++
			}
		}
		if n != 1 || len(models) < 2 {
			t.Errorf("%v: %s listed %d times among %d", tc.args, tc.want, n, len(models))
		}
		if code := p.finish(); code != 0 {
			t.Fatalf("exit %d: %s", code, p.errOut.String())
		}
	}
}

// Zed's ACP adapter passes --replay-user-messages through the Agent SDK's
// extraArgs with the value "", which arrives as an empty argument.
func TestStreamTakesAnEmptyArgument(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("one")))
	p := startPeer(t, srv, "--replay-user-messages", "")
	p.user("first")
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if r := p.replays(); len(r) != 1 {
		t.Errorf("%d replays, want 1: %v", len(r), p.kinds())
	}
}

func TestStreamRefusesAPromptArgument(t *testing.T) {
	srv := llmtest.New(t)
	_, errOut, code := run(t, srv, append(append([]string{}, streamArgs...), "hi")...)
	if code != 1 || !strings.Contains(errOut, "the prompts come on standard input") || len(srv.Requests()) != 0 {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
