package mcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

// headerCheck is the HTTPTransport seam of the tests: it sees every request
// a remote server gets and checks the configured header is on it.
type headerCheck struct {
	requests, missing atomic.Int64
	next              http.RoundTripper
}

func (h *headerCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	h.requests.Add(1)
	if req.Header.Get("X-Tack-Test") != "yes" {
		h.missing.Add(1)
	}
	return h.next.RoundTrip(req)
}

// stubSampler answers sampling requests as a model would, and keeps them.
type stubSampler struct {
	mu   sync.Mutex
	seen []SamplingRequest
}

func (s *stubSampler) sample(_ context.Context, req SamplingRequest) (SamplingResult, error) {
	s.mu.Lock()
	s.seen = append(s.seen, req)
	s.mu.Unlock()
	return SamplingResult{Content: llm.Text("stub answer"), Model: "stub-model", StopReason: "endTurn"}, nil
}

// TestEverything runs server-everything over stdio, Streamable HTTP and SSE,
// one server per transport, and goes through what tack does with it.
func TestEverything(t *testing.T) {
	js := everythingJS(t)
	transports := []struct {
		name string
		cfg  func(t *testing.T) ServerConfig
	}{
		{"stdio", func(t *testing.T) ServerConfig {
			return ServerConfig{Name: "everything", Command: "node", Args: []string{js, "stdio"},
				Env: map[string]string{"GZIP_ALLOWED_DOMAINS": "127.0.0.1"}, Scope: "project"}
		}},
		{"http", func(t *testing.T) ServerConfig {
			port := startRemote(t, "streamableHttp")
			return ServerConfig{Name: "everything", Type: TypeHTTP, URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port),
				Headers: map[string]string{"X-Tack-Test": "yes"}, Scope: "user"}
		}},
		{"sse", func(t *testing.T) ServerConfig {
			port := startRemote(t, "sse")
			return ServerConfig{Name: "everything", Type: TypeSSE, URL: fmt.Sprintf("http://127.0.0.1:%d/sse", port),
				Headers: map[string]string{"X-Tack-Test": "yes"}}
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			cfg := tr.cfg(t)
			reg := tool.NewRegistry()
			rec := &recorder{}
			sampler := &stubSampler{}
			check := &headerCheck{next: http.DefaultTransport}
			m := New(rec.options(Options{
				Registry:      reg,
				Sample:        sampler.sample,
				HTTPTransport: func(string) http.RoundTripper { return check },
				Roots:         []string{t.TempDir()},
			}))
			defer m.Close()
			m.Start(context.Background(), []ServerConfig{cfg})
			if !m.WaitReady(context.Background(), 30*time.Second) {
				t.Fatalf("not ready: %+v", m.Statuses())
			}
			st := statusOf(m, "everything")
			if st.Status != StatusConnected || st.Transport != cfg.transport() || st.Scope != cfg.Scope {
				t.Fatalf("status %+v", st)
			}
			// The conditional tools (registered once the server knows the
			// client's capabilities, announced with list_changed) are there.
			eventually(t, 10*time.Second, "the conditional tools", func() bool {
				_, ok := reg.Get("mcp__everything__trigger-sampling-request")
				return ok
			})

			t.Run("tools", func(t *testing.T) {
				names := reg.Names()
				for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image",
					"mcp__everything__trigger-elicitation-request", ListResourcesName, ReadResourceName} {
					if !slices.Contains(names, want) {
						t.Errorf("registry lacks %s: %v", want, names)
					}
				}
				if got := statusOf(m, "everything").Tools; got != len(m.Tools()) || got < 10 {
					t.Errorf("status counts %d tools, manager has %d", got, len(m.Tools()))
				}
				for _, tl := range m.Tools() {
					if err := tooltest.CompileSchema(tl.InputSchema()); err != nil {
						t.Errorf("%s: schema: %v", tl.Name(), err)
					}
					if tl.Description() == "" {
						t.Errorf("%s: no description", tl.Name())
					}
				}
				if tl, _ := reg.Get("mcp__everything__get-structured-content"); tl == nil || !tl.ReadOnly(nil) {
					t.Error("get-structured-content (readOnlyHint) is not read-only")
				}
				if tl, _ := reg.Get("mcp__everything__trigger-elicitation-request"); tl == nil || tl.ReadOnly(nil) {
					t.Error("trigger-elicitation-request is read-only")
				}
				tooltest.Check(t, m.ResourceTools())
			})

			t.Run("echo and sum", func(t *testing.T) {
				if got := textOf(call(t, reg, "mcp__everything__echo", map[string]any{"message": "hello tack"})); !strings.Contains(got, "Echo: hello tack") {
					t.Errorf("echo: %q", got)
				}
				res := call(t, reg, "mcp__everything__get-sum", map[string]any{"a": 2, "b": 40})
				if got := textOf(res); !strings.Contains(got, "42") || res.IsError {
					t.Errorf("get-sum: %q (error %v)", got, res.IsError)
				}
			})

			t.Run("bad input is a tool error", func(t *testing.T) {
				tl, _ := reg.Get("mcp__everything__get-sum")
				res, err := tl.Run(context.Background(), &tool.Env{}, []byte(`{"a":"two"}`))
				if err == nil && !res.IsError {
					t.Fatalf("no error for bad input: %q", textOf(res))
				}
			})

			t.Run("image", func(t *testing.T) {
				res := call(t, reg, "mcp__everything__get-tiny-image", map[string]any{})
				var img *llm.Block
				for i, b := range res.Content {
					if b.Type == llm.TypeImage {
						img = &res.Content[i]
					}
				}
				if img == nil || img.Source.MediaType != "image/png" {
					t.Fatalf("no PNG block in %+v", res.Content)
				}
				data, err := base64.StdEncoding.DecodeString(img.Source.Data)
				if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
					t.Errorf("image data is not a base64 PNG: %v", err)
				}
			})

			t.Run("structured", func(t *testing.T) {
				res := call(t, reg, "mcp__everything__get-structured-content", map[string]any{"location": "Chicago"})
				sc, ok := res.Structured.(map[string]any)
				if !ok || sc["temperature"] == nil || sc["humidity"] == nil {
					t.Fatalf("structured result %#v", res.Structured)
				}
				if !strings.Contains(textOf(res), "temperature") {
					t.Errorf("text %q", textOf(res))
				}
			})

			t.Run("resource links and embedded resources", func(t *testing.T) {
				got := textOf(call(t, reg, "mcp__everything__get-resource-links", map[string]any{"count": 2}))
				if !strings.Contains(got, "[Resource link: demo://resource/dynamic/") {
					t.Errorf("resource links: %q", got)
				}
				got = textOf(call(t, reg, "mcp__everything__get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 3}))
				if !strings.Contains(got, "[Resource demo://resource/dynamic/text/3") {
					t.Errorf("embedded resource: %q", got)
				}
			})

			t.Run("progress", func(t *testing.T) {
				res := call(t, reg, "mcp__everything__trigger-long-running-operation", map[string]any{"duration": 0.6, "steps": 3})
				if !strings.Contains(textOf(res), "completed") {
					t.Fatalf("result %q", textOf(res))
				}
				var got []Progress
				eventually(t, 5*time.Second, "three progress notifications", func() bool {
					_, _, all := rec.snapshot()
					got = got[:0]
					for _, p := range all {
						if p.Tool == "trigger-long-running-operation" {
							got = append(got, p)
						}
					}
					return len(got) == 3
				})
				last := got[len(got)-1]
				if last.Server != "everything" || last.Name != "mcp__everything__trigger-long-running-operation" || last.Total != 3 {
					t.Errorf("progress %+v", last)
				}
			})

			t.Run("resources", func(t *testing.T) {
				list := textOf(call(t, reg, ListResourcesName, map[string]any{"server": "everything"}))
				if !strings.Contains(list, "demo://resource/static/document/") {
					t.Errorf("list: %.300q", list)
				}
				if _, err := callErr(reg, ListResourcesName, map[string]any{"server": "nope"}); !tool.IsInputError(err) {
					t.Errorf("unknown server: %v", err)
				}
				got := textOf(call(t, reg, ReadResourceName, map[string]any{"server": "everything", "uri": "demo://resource/dynamic/text/1"}))
				if !strings.Contains(got, `"uri":"demo://resource/dynamic/text/1"`) || !strings.Contains(got, `"text":`) {
					t.Errorf("read: %q", got)
				}
				blocks, err := m.ReadResource(context.Background(), "everything", "demo://resource/dynamic/text/2")
				if err != nil || !strings.Contains(llm.TextOf(blocks), "demo://resource/dynamic/text/2") {
					t.Errorf("ReadResource: %v %q", err, llm.TextOf(blocks))
				}
			})

			t.Run("prompt", func(t *testing.T) {
				var info *PromptInfo
				for _, p := range m.Prompts() {
					if p.Name == "args-prompt" {
						info = &p
					}
				}
				if info == nil || info.Command != "mcp__everything__args-prompt" || len(info.Arguments) != 2 ||
					!slices.ContainsFunc(info.Arguments, func(a PromptArgument) bool { return a.Name == "city" && a.Required }) {
					t.Fatalf("args-prompt: %+v", info)
				}
				msgs, err := m.GetPrompt(context.Background(), "everything", "args-prompt", map[string]string{"city": "Lyon", "state": "Rhône"})
				if err != nil {
					t.Fatal(err)
				}
				if len(msgs) != 1 || msgs[0].Role != llm.RoleUser || llm.TextOf(msgs[0].Content) != "What's weather in Lyon, Rhône?" {
					t.Errorf("messages %+v", msgs)
				}
			})

			t.Run("list_changed", func(t *testing.T) {
				// gzip-file-as-resource registers a session resource, and the
				// server announces it with notifications/resources/list_changed.
				const uri = "demo://resource/session/hello.txt.gz"
				data := "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("hello from tack"))
				call(t, reg, "mcp__everything__gzip-file-as-resource", map[string]any{"name": "hello.txt.gz", "data": data})
				eventually(t, 10*time.Second, "the new resource in the catalogue", func() bool {
					return slices.ContainsFunc(m.Resources("everything"), func(r ResourceInfo) bool { return r.URI == uri })
				})
				changes, _, _ := rec.snapshot()
				if !slices.ContainsFunc(changes, func(c Change) bool { return c.Kind == ChangeResources && slices.Contains(c.Added, uri) }) {
					t.Errorf("no resources change announced: %+v", changes)
				}
				// The blob goes to a file the other tools can read.
				tl, _ := reg.Get(ReadResourceName)
				env := &tool.Env{ScratchDir: t.TempDir()}
				res, err := tl.Run(context.Background(), env, []byte(`{"server":"everything","uri":"`+uri+`"}`))
				if err != nil {
					t.Fatal(err)
				}
				st := res.Structured.(map[string]any)["contents"].([]resourceContent)
				if len(st) != 1 || st[0].BlobSavedTo == "" {
					t.Fatalf("read: %+v", st)
				}
				f, err := os.Open(st[0].BlobSavedTo)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				zr, err := gzip.NewReader(f)
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := io.ReadAll(zr); string(b) != "hello from tack" {
					t.Errorf("saved blob holds %q", b)
				}
				if tr.name == "stdio" {
					// Over stdio the tools/list_changed the server sends on
					// registering its conditional tools always arrives.
					s, _ := m.get("everything")
					if s.refreshes.Load() == 0 {
						t.Error("no list was read again after a list_changed")
					}
				}
			})

			t.Run("sampling", func(t *testing.T) {
				got := textOf(call(t, reg, "mcp__everything__trigger-sampling-request", map[string]any{"prompt": "ping", "maxTokens": 64}))
				if !strings.Contains(got, "stub answer") || !strings.Contains(got, "stub-model") {
					t.Errorf("result %q", got)
				}
				sampler.mu.Lock()
				defer sampler.mu.Unlock()
				if len(sampler.seen) != 1 {
					t.Fatalf("sampler saw %d requests", len(sampler.seen))
				}
				req := sampler.seen[0]
				if req.Server != "everything" || req.System != "You are a helpful test server." || req.MaxTokens != 64 ||
					len(req.Messages) != 1 || !strings.Contains(llm.TextOf(req.Messages[0].Content), "ping") {
					t.Errorf("sampling request %+v", req)
				}
			})

			t.Run("elicitation declined", func(t *testing.T) {
				got := textOf(call(t, reg, "mcp__everything__trigger-elicitation-request", map[string]any{}))
				if !strings.Contains(got, "declined") {
					t.Errorf("result %q", got)
				}
				_, notices, _ := rec.snapshot()
				if !slices.ContainsFunc(notices, func(n Notice) bool {
					return n.Server == "everything" && n.Level == NoticeWarning && strings.Contains(n.Message, "declined")
				}) {
					t.Errorf("no notice of the declined elicitation: %+v", notices)
				}
			})

			t.Run("output limit", func(t *testing.T) {
				big := strings.Repeat("x", 150_000)
				res := call(t, reg, "mcp__everything__echo", map[string]any{"message": big})
				got := textOf(res)
				if len(got) > DefaultMaxOutputTokens*4+500 || !strings.Contains(got, "MAX_MCP_OUTPUT_TOKENS") {
					t.Errorf("%d bytes, note: %v", len(got), strings.Contains(got, "MAX_MCP_OUTPUT_TOKENS"))
				}
			})

			if tr.name == "stdio" {
				return
			}
			t.Run("headers on every request", func(t *testing.T) {
				if check.requests.Load() < 5 || check.missing.Load() != 0 {
					t.Errorf("%d requests, %d without the header", check.requests.Load(), check.missing.Load())
				}
			})
			if tr.name != "http" {
				return
			}
			t.Run("reconnect after 413", func(t *testing.T) {
				// The server refuses a body over 4 MB with 413, which ends the
				// SDK's session; the next call must work again.
				_, err := callErr(reg, "mcp__everything__echo", map[string]any{"message": strings.Repeat("y", 5<<20)})
				if err == nil {
					t.Fatal("a 5 MB request went through")
				}

				if got := textOf(call(t, reg, "mcp__everything__echo", map[string]any{"message": "after"})); !strings.Contains(got, "Echo: after") {
					t.Errorf("after 413: %q", got)
				}
				eventually(t, 10*time.Second, "connected", func() bool { return statusOf(m, "everything").Status == StatusConnected })
			})
		})
	}
}
