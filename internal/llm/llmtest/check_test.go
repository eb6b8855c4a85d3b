package llmtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

const (
	objSchema = `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`
	// A conversation fragment: an assistant call answered by a user result.
	callAndResult = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{"command":"ls"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}`
)

// body wraps messages (and extra top-level keys) into an otherwise valid body.
func body(messages string, extra ...string) string {
	b := `{"model":"claude-test-1","max_tokens":1024,"stream":true,"messages":[` + messages + `]`
	for _, e := range extra {
		b += "," + e
	}
	return b + "}"
}

const hi = `{"role":"user","content":"hi"}`

func TestInvariantsFire(t *testing.T) {
	without := func(name string) http.Header {
		h := stdHeaders()
		h.Del(name)
		return h
	}
	with := func(name, value string) http.Header {
		h := stdHeaders()
		h.Set(name, value)
		return h
	}
	cc := `"cache_control":{"type":"ephemeral"}`
	cases := []struct {
		name   string
		method string
		header http.Header
		body   string
		status int
		want   string
	}{
		{name: "no version header", header: without("anthropic-version"), body: body(hi), want: "header anthropic-version is missing"},
		{name: "wrong version", header: with("anthropic-version", "2024-01-01"), body: body(hi), want: `header anthropic-version is "2024-01-01", want "2023-06-01"`},
		{name: "no credentials", header: without("x-api-key"), body: body(hi), want: "no credentials"},
		{name: "empty bearer", header: func() http.Header { h := without("x-api-key"); h.Set("Authorization", "Bearer "); return h }(), body: body(hi), want: "no credentials"},
		{name: "content type", header: with("content-type", "text/plain"), body: body(hi), want: `header content-type is "text/plain"`},
		{name: "GET", method: http.MethodGet, body: body(hi), status: http.StatusMethodNotAllowed, want: "method GET, want POST"},
		{name: "not JSON", body: `{"model":`, want: "body is not a JSON object"},
		{name: "unknown key", body: body(hi, `"max_token":5`), want: `unknown body key "max_token"`},
		{name: "no model", body: `{"max_tokens":1,"stream":true,"messages":[` + hi + `]}`, want: "model is missing"},
		{name: "model not string", body: `{"model":3,"max_tokens":1,"stream":true,"messages":[` + hi + `]}`, want: "model must be a string"},
		{name: "no max_tokens", body: `{"model":"m","stream":true,"messages":[` + hi + `]}`, want: "max_tokens is missing"},
		{name: "zero max_tokens", body: `{"model":"m","max_tokens":0,"stream":true,"messages":[` + hi + `]}`, want: "max_tokens must be > 0, got 0"},
		{name: "no stream", body: `{"model":"m","max_tokens":1,"messages":[` + hi + `]}`, want: "stream is missing"},
		{name: "stream false", body: `{"model":"m","max_tokens":1,"stream":false,"messages":[` + hi + `]}`, want: "stream is false"},
		{name: "no messages", body: `{"model":"m","max_tokens":1,"stream":true}`, want: "messages is missing"},
		{name: "empty messages", body: body(""), want: "messages is empty"},
		{name: "first is assistant", body: body(`{"role":"assistant","content":"x"},` + hi), want: "messages[0] has role \"assistant\": the first message must be a user message"},
		{name: "bad role", body: body(hi + `,{"role":"tool","content":"x"}`), want: `messages[1] has role "tool"`},
		{name: "system first", body: body(`{"role":"system","content":"x"}`), want: `messages[0] has role "system"`},
		{name: "system with a tool result", body: body(hi + `,{"role":"system","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"x"}}]}`), want: "a system message holds text blocks only"},
		{name: "assistant after assistant", body: body(hi + `,{"role":"assistant","content":"a"},{"role":"assistant","content":"b"},` + hi), want: "messages[2] is an assistant message following another assistant message"},
		{name: "empty text", body: body(`{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":""}]}`), want: "messages[0].content[1]: text content blocks must be non-empty"},
		{name: "blank text", body: body(`{"role":"user","content":" \n\t"}`), want: "messages[0].content[0]: text content blocks must contain non-whitespace text"},
		{name: "empty content", body: body(`{"role":"user","content":[]}`), want: "messages[0] has empty content"},
		{name: "prefill trailing space", body: body(hi + `,{"role":"assistant","content":"Sure "}`), want: "final assistant content cannot end with trailing whitespace"},
		{name: "empty system text", body: body(hi, `"system":[{"type":"text","text":""}]`), want: "system[0]: text content blocks must be non-empty"},
		{name: "unanswered last tool_use", body: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]}`),
			want: "messages[1]: the conversation ends with an assistant message whose tool_use toolu_a is unanswered"},
		{name: "tool_use without result", body: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}},{"type":"tool_use","id":"toolu_b","name":"Bash","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}`), want: "messages[1]: tool_use toolu_b has no tool_result in messages[2]"},
		{name: "tool_use answered twice", body: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"1"},{"type":"tool_result","tool_use_id":"toolu_a","content":"2"}]}`),
			want: "messages[1]: tool_use toolu_a is answered by 2 tool_results in messages[2]; want exactly one"},
		{name: "result without tool_use", body: body(hi + `,{"role":"assistant","content":"a"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"?"}]}`),
			want: "messages[2].content[0]: tool_result for toolu_x has no matching tool_use in the previous (assistant) message"},
		{name: "result answers an older call", body: body(hi + `,` + callAndResult + `,{"role":"assistant","content":"a"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"again"}]}`),
			want: "messages[4].content[0]: tool_result for toolu_a has no matching tool_use"},
		{name: "result after text", body: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]},` +
			`{"role":"user","content":[{"type":"text","text":"note"},{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}`),
			want: "messages[2].content[1]: tool_result after other content; tool_result blocks must come first"},
		{name: "results out of order", body: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Read","input":{}},{"type":"tool_use","id":"toolu_b","name":"Read","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_b","content":"b"},{"type":"tool_result","tool_use_id":"toolu_a","content":"a"}]}`),
			want: "messages[2]: tool_results are in the order toolu_b, toolu_a; want the order of the tool_use blocks in messages[1]: toolu_a, toolu_b"},
		{name: "duplicate tool_use id", body: body(hi + `,` + callAndResult + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}`),
			want: "messages[3].content[0]: tool_use id toolu_a is not unique (also at messages[1].content[0])"},
		{name: "tool_use in user message", body: body(`{"role":"user","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]}`),
			want: "messages[0].content[0]: tool_use in a user message"},
		{name: "tool_use input not object", body: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":[1]}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}`),
			want: "tool_use toolu_a input must be a JSON object, got [1]"},
		{name: "five breakpoints", body: body(`{"role":"user","content":[{"type":"text","text":"a",`+cc+`},{"type":"text","text":"b",`+cc+`}]}`,
			`"system":[{"type":"text","text":"s1",`+cc+`},{"type":"text","text":"s2",`+cc+`}]`,
			`"tools":[{"name":"Bash","input_schema":`+objSchema+`,`+cc+`}]`),
			want: "5 cache_control breakpoints (tools[0], system[0], system[1], messages[0].content[0], messages[0].content[1]); the API allows at most 4"},
		{name: "nested breakpoint counts", body: body(hi+`,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_a","name":"Bash","input":{}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":"r",`+cc+`}]},{"type":"text","text":"t",`+cc+`}]}`,
			`"system":[{"type":"text","text":"s1",`+cc+`},{"type":"text","text":"s2",`+cc+`},{"type":"text","text":"s3",`+cc+`}]`),
			want: "5 cache_control breakpoints (system[0], system[1], system[2], messages[2].content[0].content[0], messages[2].content[1])"},
		{name: "raw block breakpoint counts", body: body(`{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"},`+cc+`}]}`,
			`"system":[{"type":"text","text":"s1",`+cc+`},{"type":"text","text":"s2",`+cc+`},{"type":"text","text":"s3",`+cc+`},{"type":"text","text":"s4",`+cc+`}]`),
			want: "5 cache_control breakpoints"},
		{name: "1h after 5m", body: body(`{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral","ttl":"1h"}}]}`,
			`"system":[{"type":"text","text":"s",`+cc+`}]`),
			want: "messages[0].content[0]: cache_control ttl 1h after a 5m breakpoint at system[0]"},
		{name: "cache type", body: body(`{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"persistent"}}]}`),
			want: `messages[0].content[0]: cache_control type "persistent", want "ephemeral"`},
		{name: "duplicate tool names", body: body(hi, `"tools":[{"name":"Bash","input_schema":`+objSchema+`},{"name":"Bash","input_schema":`+objSchema+`}]`),
			want: `tools[1]: tool name "Bash" is not unique (also tools[0])`},
		{name: "tool without name", body: body(hi, `"tools":[{"input_schema":`+objSchema+`}]`), want: "tools[0] has no name"},
		{name: "bad tool name", body: body(hi, `"tools":[{"name":"my tool","input_schema":`+objSchema+`}]`), want: `tools[0]: tool name "my tool" must match`},
		{name: "schema missing", body: body(hi, `"tools":[{"name":"Bash"}]`), want: "tools[0] (Bash): input_schema is missing"},
		{name: "schema not object type", body: body(hi, `"tools":[{"name":"Bash","input_schema":{"type":"string"}}]`), want: `tools[0] (Bash): input_schema: type is "string", want "object"`},
		{name: "schema without type", body: body(hi, `"tools":[{"name":"Bash","input_schema":{"properties":{}}}]`), want: `input_schema: type is null, want "object"`},
		{name: "schema invalid", body: body(hi, `"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"a":{"type":"strin"}}}}]`),
			want: "tools[0] (Bash): input_schema: invalid JSON Schema: "},
		{name: "schema bad ref", body: body(hi, `"tools":[{"name":"Bash","input_schema":{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}}]`),
			want: "tools[0] (Bash): input_schema: invalid JSON Schema: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newCollecting(t, Options{Turns: []Turn{Reply(Text("unused"))}})
			method := tc.method
			if method == "" {
				method = http.MethodPost
			}
			h := tc.header
			if h == nil {
				h = stdHeaders()
			}
			req, err := http.NewRequest(method, s.URL()+"/v1/messages", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = h
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			want := tc.status
			if want == 0 {
				want = http.StatusBadRequest
			}
			if resp.StatusCode != want {
				t.Errorf("status %d, want %d", resp.StatusCode, want)
			}
			e := readErrorBody(t, resp)
			if e.Error.Type != "invalid_request_error" {
				t.Errorf("error type %q, want invalid_request_error", e.Error.Type)
			}
			if !strings.Contains(e.Error.Message, tc.want) {
				t.Errorf("error message %q does not name the violation %q", e.Error.Message, tc.want)
			}
			if resp.Header.Get("x-should-retry") != "false" {
				t.Errorf("x-should-retry %q, want false", resp.Header.Get("x-should-retry"))
			}
			probs := c.problems()
			found := false
			for _, p := range probs {
				found = found || strings.Contains(p, tc.want)
			}
			if !found {
				t.Errorf("violations %q do not include %q", probs, tc.want)
			}
			if s.Remaining() != 1 {
				t.Errorf("a rejected request moved the script: %d turns remain, want 1", s.Remaining())
			}
			reqs := s.Requests()
			if len(reqs) != 1 || len(reqs[0].Violations) == 0 || reqs[0].Response != nil {
				t.Errorf("Requests() = %+v, want one request carrying its violations and no response", reqs)
			}
		})
	}
}

// TestValidRequestPasses guards against checks that fire on requests the API
// accepts: everything below is legal.
func TestValidRequestPasses(t *testing.T) {
	cc := `"cache_control":{"type":"ephemeral"}`
	valid := map[string]string{
		"string content": body(hi),
		"rich conversation": body(`{"role":"user","content":[{"type":"text","text":"<system-reminder>memory</system-reminder>"},{"type":"text","text":"do it"}]},`+
			`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"Running."},`+
			`{"type":"tool_use","id":"toolu_a","name":"Read","input":{"file_path":"/x"}},{"type":"tool_use","id":"toolu_b","name":"Bash","input":{}}]},`+
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":"1\tx"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]},`+
			`{"type":"tool_result","tool_use_id":"toolu_b","content":"","is_error":true},{"type":"text","text":"<system-reminder>r</system-reminder>",`+cc+`}]},`+
			`{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_a","name":"web_search","input":{"query":"q"}},`+
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_a","content":[]},{"type":"text","text":"found"}]},`+
			`{"role":"user","content":"thanks"},{"role":"user","content":"and more"}`,
			`"system":[{"type":"text","text":"You are tack."},{"type":"text","text":"main prompt","cache_control":{"type":"ephemeral","ttl":"1h"}}]`,
			`"tools":[{"name":"Read","description":"d","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"],"additionalProperties":false}},`+
				`{"name":"Bash","input_schema":`+objSchema+`,"defer_loading":true},`+
				`{"name":"mcp__srv__tool-1","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{}},"cache_control":{"type":"ephemeral","ttl":"1h"}},`+
				`{"type":"web_search_20250305","name":"web_search","max_uses":5}]`,
			`"thinking":{"type":"enabled","budget_tokens":2048}`, `"metadata":{"user_id":"u"}`, `"tool_choice":{"type":"auto"}`, `"temperature":1`),
		"prefill":       body(hi + `,{"role":"assistant","content":"{"}`),
		"system string": body(hi, `"system":"You are tack."`),
	}
	for name, b := range valid {
		t.Run(name, func(t *testing.T) {
			s, c := newCollecting(t, Options{Turns: []Turn{Reply(Text("ok"))}})
			resp := post(t, s.URL()+"/v1/messages?beta=true", b, stdHeaders())
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
			if _, err := readSSE(resp.Body); err != nil {
				t.Error(err)
			}
			if p := c.problems(); len(p) > 0 {
				t.Errorf("false violations: %q", p)
			}
		})
	}
}

func TestBearerAuthAccepted(t *testing.T) {
	s, c := newCollecting(t, Options{Turns: []Turn{Reply(Text("ok"))}})
	h := stdHeaders()
	h.Del("x-api-key")
	h.Set("Authorization", "Bearer tok")
	if resp := post(t, s.URL()+"/v1/messages", body(hi), h); resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
	if p := c.problems(); len(p) > 0 {
		t.Errorf("violations: %q", p)
	}
}

func TestToolCacheRemembersVerdicts(t *testing.T) {
	var c toolCache
	bad := json.RawMessage(`{"name":"A","input_schema":{"type":"object","required":"x"}}`)
	good := json.RawMessage(`{"name":"B","input_schema":` + objSchema + `}`)
	for range 2 {
		if v := c.verdict(bad); len(v.problems) != 1 || !strings.Contains(v.problems[0], "/required") || v.name != "A" {
			t.Errorf("bad tool: %+v", v)
		}
		if v := c.verdict(good); len(v.problems) != 0 || v.name != "B" {
			t.Errorf("good tool: %+v", v)
		}
	}
	if len(c.verdicts) != 2 {
		t.Errorf("cache holds %d verdicts, want 2", len(c.verdicts))
	}
}

func TestTopKeys(t *testing.T) {
	data := []byte(` { "a" : {"x":[1,{"y":"}]"}]}, "b\"q":"s\\", "c":-1.5e3,"d":[],"e":true , "f":null}`)
	want := []string{"a", `b"q`, "c", "d", "e", "f"}
	if got := topKeys(data); !slices.Equal(got, want) {
		t.Errorf("topKeys = %q, want %q", got, want)
	}
}
