package hook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookServer records what an http hook sent and answers with status/body.
type hookServer struct {
	*httptest.Server
	mu      sync.Mutex
	hits    int
	body    []byte
	header  http.Header
	status  int
	answer  string
	latency time.Duration
}

func newHookServer(t *testing.T, status int, answer string) *hookServer {
	t.Helper()
	s := &hookServer{status: status, answer: answer}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.hits++
		s.body, s.header = b, r.Header.Clone()
		latency := s.latency
		s.mu.Unlock()
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if latency > 0 {
			select {
			case <-time.After(latency):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(s.status)
		io.WriteString(w, s.answer)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hookServer) seen() (int, []byte, http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits, s.body, s.header
}

func TestHTTPHookPostsPayloadAndHonoursAnswer(t *testing.T) {
	dir := t.TempDir()
	srv := newHookServer(t, 200, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy server says no"}}`)
	h := Handler{Type: TypeHTTP, URL: srv.URL + "/pre", Timeout: 5,
		Headers: map[string]string{
			"Authorization": "Bearer $HOOK_TOKEN",
			"X-Team":        "${TEAM}-x",
			"X-Secret":      "[$SECRET]",    // not in allowedEnvVars: empty
			"X-Global":      "$GLOBAL_ONLY", // allowed by the hook, not by settings
		},
		AllowedEnvVars: []string{"HOOK_TOKEN", "TEAM", "GLOBAL_ONLY"}}
	r := newRunner(t, Options{
		Hooks: on(PreToolUse, "Bash", h),
		Env:   []string{"HOOK_TOKEN=t0k3n", "SECRET=hunter2", "GLOBAL_ONLY=g"},
		Settings: Settings{
			Env:                    map[string]string{"TEAM": "core"},
			AllowedHTTPHookURLs:    []string{srv.URL + "/*"},
			HTTPHookAllowedEnvVars: []string{"HOOK_TOKEN", "TEAM"},
		},
	})
	in := bashCall(dir, "curl evil.example")
	o := r.Run(context.Background(), in)
	noErrors(t, o)
	if o.Permission != DecisionDeny || o.Reason != "policy server says no" {
		t.Errorf("the 2xx JSON body decides: %+v", o)
	}
	hits, body, hdr := srv.seen()
	want, _ := in.MarshalJSON()
	if hits != 1 || string(body) != string(want) {
		t.Errorf("posted %d times: %s\nwant %s", hits, body, want)
	}
	checks := map[string]string{
		"Content-Type":  "application/json",
		"Authorization": "Bearer t0k3n",
		"X-Team":        "core-x",
		"X-Secret":      "[]",
		"X-Global":      "",
	}
	for k, v := range checks {
		if got := hdr.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
}

func TestHTTPHookAnswers(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		status  int
		body    string
		ev      Input
		check   func(Outcome) bool
		comment string
	}{
		{200, "", StopInput{Base: base(dir)}, func(o Outcome) bool { return len(o.Errors) == 0 && !o.Block }, "empty 2xx: nothing to say"},
		{204, "", StopInput{Base: base(dir)}, func(o Outcome) bool { return len(o.Errors) == 0 }, "204"},
		{200, `{"decision":"block","reason":"keep going"}`, StopInput{Base: base(dir)}, func(o Outcome) bool { return o.Block && o.Reason == "keep going" }, "JSON body"},
		{200, "remember the style guide", UserPromptSubmitInput{Base: base(dir)}, func(o Outcome) bool { return o.Context() == "remember the style guide" }, "plain text is context"},
		{500, "boom", StopInput{Base: base(dir)}, func(o Outcome) bool {
			return !o.Block && len(o.Errors) == 1 && strings.Contains(o.Errors[0], "500 Internal Server Error: boom")
		}, "500 is non-blocking"},
		{403, `{"decision":"block","reason":"x"}`, StopInput{Base: base(dir)}, func(o Outcome) bool { return !o.Block && len(o.Errors) == 1 }, "a non-2xx body is not obeyed"},
	}
	for _, c := range cases {
		srv := newHookServer(t, c.status, c.body)
		r := newRunner(t, Options{Hooks: Config{c.ev.EventName(): {{Hooks: []Handler{{Type: TypeHTTP, URL: srv.URL}}}}}})
		o := r.Run(context.Background(), c.ev)
		if !c.check(o) {
			t.Errorf("%s: %+v", c.comment, o)
		}
		if o.Results[0].Stdout != c.body {
			t.Errorf("%s: the body is the hook's stdout, got %q", c.comment, o.Results[0].Stdout)
		}
	}
}

func TestHTTPHookRefusedURL(t *testing.T) {
	dir := t.TempDir()
	srv := newHookServer(t, 200, `{"decision":"block"}`)
	for _, allowed := range [][]string{{"https://hooks.example.com/*"}, {}} {
		r := newRunner(t, Options{Hooks: on(Stop, "", Handler{Type: TypeHTTP, URL: srv.URL + "/x"}), Settings: Settings{AllowedHTTPHookURLs: allowed}})
		o := r.Run(context.Background(), StopInput{Base: base(dir)})
		if o.Block || len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "not allowed by allowedHttpHookUrls") {
			t.Errorf("allowed %q: %+v", allowed, o)
		}
	}
	if hits, _, _ := srv.seen(); hits != 0 {
		t.Errorf("a refused URL was called %d times", hits)
	}
}

func TestHTTPHookRedirectMustBeAllowed(t *testing.T) {
	dir := t.TempDir()
	target := newHookServer(t, 200, `{"decision":"block","reason":"via redirect"}`)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/final", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	r := newRunner(t, Options{Hooks: on(Stop, "", Handler{Type: TypeHTTP, URL: redirect.URL + "/start"}), Settings: Settings{AllowedHTTPHookURLs: []string{redirect.URL + "/*"}}})
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	if o.Block || len(o.Errors) != 1 || !strings.Contains(o.Errors[0], "redirect") {
		t.Errorf("%+v", o)
	}
	if hits, _, _ := target.seen(); hits != 0 {
		t.Error("the redirect was followed to a URL that is not allowed")
	}
	// Allowed both ways: followed, and the answer counts.
	r = newRunner(t, Options{Hooks: on(Stop, "", Handler{Type: TypeHTTP, URL: redirect.URL + "/start"}), Settings: Settings{AllowedHTTPHookURLs: []string{redirect.URL + "/*", target.URL + "/*"}}})
	if o := r.Run(context.Background(), StopInput{Base: base(dir)}); !o.Block || o.Reason != "via redirect" {
		t.Errorf("%+v", o)
	}
}

func TestHTTPHookTimeoutAndNetworkError(t *testing.T) {
	dir := t.TempDir()
	srv := newHookServer(t, 200, `{"decision":"block"}`)
	srv.mu.Lock()
	srv.latency = 10 * time.Second
	srv.mu.Unlock()
	r := newRunner(t, Options{Hooks: on(Stop, "", Handler{Type: TypeHTTP, URL: srv.URL, Timeout: 0.3})})
	start := time.Now()
	o := r.Run(context.Background(), StopInput{Base: base(dir)})
	if time.Since(start) > 5*time.Second || o.Block || !o.Results[0].TimedOut || o.Results[0].Status != StatusCancelled {
		t.Errorf("timeout: %+v", o.Results[0])
	}
	// Nothing listens there any more.
	closed := httptest.NewServer(http.NotFoundHandler())
	url := closed.URL
	closed.Close()
	r = newRunner(t, Options{Hooks: on(Stop, "", Handler{Type: TypeHTTP, URL: url})})
	o = r.Run(context.Background(), StopInput{Base: base(dir)})
	if o.Block || len(o.Errors) != 1 || o.Results[0].Status != StatusError {
		t.Errorf("network error: %+v", o)
	}
}

func TestWildcard(t *testing.T) {
	cases := []struct {
		pattern, url string
		want         bool
	}{
		{"https://hooks.example.com/*", "https://hooks.example.com/a/b", true},
		{"https://hooks.example.com/*", "https://hooks.example.com.evil.io/a", false},
		{"https://*.example.com/hook", "https://a.example.com/hook", true},
		{"https://*.example.com/hook", "https://a.example.com/hook2", false},
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x", true},
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x?y", false},
	}
	for _, c := range cases {
		if got := wildcard(c.pattern).MatchString(c.url); got != c.want {
			t.Errorf("%q ~ %q = %v", c.pattern, c.url, got)
		}
	}
}

func TestLookupEnvLastWins(t *testing.T) {
	env := []string{"A=1", "AB=2", "A=3"}
	if lookupEnv(env, "A") != "3" || lookupEnv(env, "AB") != "2" || lookupEnv(env, "B") != "" {
		t.Error("lookupEnv")
	}
}
