package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/tool"
)

// TestStdioLifecycle runs server-everything through npx, which starts the
// real server as a grandchild: killing npx alone must not leave it behind,
// the next call must start the server again, a crash during a call must be
// survived by one retry, and Close must leave no process.
func TestStdioLifecycle(t *testing.T) {
	dir := fixture(t)
	reg := tool.NewRegistry()
	rec := &recorder{}
	m := New(rec.options(Options{Registry: reg}))
	closed := false
	defer func() {
		if !closed {
			m.Close()
		}
	}()
	m.Start(context.Background(), []ServerConfig{{Name: "npx-everything", Command: "npx",
		Args: []string{"--offline", "--prefix", dir, "--no", "mcp-server-everything", "stdio"}}})
	if !m.WaitReady(context.Background(), 30*time.Second) || statusOf(m, "npx-everything").Status != StatusConnected {
		t.Fatalf("not connected: %+v", m.Statuses())
	}
	const echo = "mcp__npx-everything__echo"
	if got := textOf(call(t, reg, echo, map[string]any{"message": "one"})); !strings.Contains(got, "Echo: one") {
		t.Fatalf("echo: %q", got)
	}

	pid := serverPid(t, m, "npx-everything")
	members := groupMembers(pid)
	if len(members) < 2 {
		t.Fatalf("npx's group has %v; want npx and the node server it started", members)
	}
	// Kill npx alone, as a crash would: its server would live on, orphaned.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every process of the group to end", func() bool {
		return !slices.ContainsFunc(members, alive)
	})
	eventually(t, 5*time.Second, "the crash in the status", func() bool {
		st := statusOf(m, "npx-everything")
		return st.Status == StatusFailed && strings.Contains(st.Error, "killed")
	})
	if _, ok := reg.Get(echo); !ok {
		t.Fatal("the crashed server's tools left the catalogue; they must stay to restart it")
	}

	// The next call starts it again.
	if got := textOf(call(t, reg, echo, map[string]any{"message": "two"})); !strings.Contains(got, "Echo: two") {
		t.Fatalf("echo after the crash: %q", got)
	}
	if st := statusOf(m, "npx-everything"); st.Status != StatusConnected {
		t.Fatalf("after restart: %+v", st)
	}
	pid2 := serverPid(t, m, "npx-everything")
	if pid2 == pid {
		t.Fatal("same process after a restart")
	}

	// A crash during a call: the server is started again and the call made
	// once more.
	go func() {
		time.Sleep(400 * time.Millisecond)
		_ = syscall.Kill(-pid2, syscall.SIGKILL)
	}()
	res := call(t, reg, "mcp__npx-everything__trigger-long-running-operation", map[string]any{"duration": 1.2, "steps": 2})
	if !strings.Contains(textOf(res), "completed") {
		t.Fatalf("call across a crash: %q", textOf(res))
	}
	pid3 := serverPid(t, m, "npx-everything")
	if pid3 == pid2 {
		t.Fatal("the call was not retried on a new process")
	}
	_, notices, _ := rec.snapshot()
	if !slices.ContainsFunc(notices, func(n Notice) bool { return strings.Contains(n.Message, "started again") }) {
		t.Errorf("no notice of the restart: %+v", notices)
	}

	// Close leaves no process of the server behind.
	members = groupMembers(pid3)
	if len(members) < 2 {
		t.Fatalf("group of the restarted server: %v", members)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	eventually(t, 5*time.Second, "no process left after Close", func() bool {
		return !slices.ContainsFunc(members, alive)
	})
	if _, ok := reg.Get(echo); ok {
		t.Error("tools still in the registry after Close")
	}
	if st := statusOf(m, "npx-everything"); st.Status != StatusDisabled {
		t.Errorf("status after Close: %+v", st)
	}
}

// TestStartFailures starts broken servers beside a good one: each fails
// with a reason that says what went wrong, and the good one serves.
func TestStartFailures(t *testing.T) {
	js := everythingJS(t)
	pidFile := filepath.Join(t.TempDir(), "silent.pid")
	goroutines := runtime.NumGoroutine()
	reg := tool.NewRegistry()
	rec := &recorder{}
	// Long enough for node to start server-everything on a loaded CI
	// machine (the whole suite runs beside it).
	m := New(rec.options(Options{Registry: reg, Limits: Limits{StartTimeout: 15 * time.Second}}))
	defer m.Close()
	start := time.Now()
	m.Start(context.Background(), []ServerConfig{
		{Name: "good", Command: "node", Args: []string{js, "stdio"}},
		{Name: "missing", Command: "/nonexistent/tack-mcp-server"},
		{Name: "exits", Command: "sh", Args: []string{"-c", "echo 'boom: no API key' >&2; exit 3"}},
		// Never answers initialize, and has a child of its own.
		{Name: "silent", Command: "sh", Args: []string{"-c", `echo $$ > "$PIDFILE"; sleep 600 & exec cat >/dev/null`},
			Env: map[string]string{"PIDFILE": pidFile}},
		{Name: "silent2", Command: "sleep", Args: []string{"600"}},
		{Name: "bad-url", Type: TypeHTTP, URL: "ftp://example.invalid/mcp"},
		{Name: "bad-type", Type: "websocket", URL: "ws://127.0.0.1:1/"},
		{Name: "off", Command: "node", Args: []string{js, "stdio"}, Disabled: true},
	})
	if !m.WaitReady(context.Background(), 40*time.Second) {
		t.Fatalf("still pending: %+v", m.Statuses())
	}
	// Two servers time out after 15 s each: one after the other would take 30.
	if d := time.Since(start); d > 28*time.Second {
		t.Errorf("start-up took %s: servers are not started in parallel", d)
	}
	want := map[string][]string{
		"missing":  {StatusFailed, "cannot start", "/nonexistent/tack-mcp-server", "no such file"},
		"exits":    {StatusFailed, "exited with status 3", "boom: no API key"},
		"silent":   {StatusFailed, "no answer to the MCP handshake (initialize request) within 15s; set MCP_TIMEOUT (milliseconds) to wait longer"},
		"silent2":  {StatusFailed, "no answer to the MCP handshake (initialize request) within 15s; set MCP_TIMEOUT (milliseconds) to wait longer"},
		"bad-url":  {StatusFailed, "invalid URL"},
		"bad-type": {StatusFailed, "unknown transport type"},
		"off":      {StatusDisabled},
		"good":     {StatusConnected},
	}
	for _, st := range m.Statuses() {
		w := want[st.Name]
		if st.Status != w[0] {
			t.Errorf("%s: status %q, want %q (%s)", st.Name, st.Status, w[0], st.Error)
		}
		for _, s := range w[1:] {
			if !strings.Contains(st.Error, s) {
				t.Errorf("%s: error %q lacks %q", st.Name, st.Error, s)
			}
		}
	}
	if got := textOf(call(t, reg, "mcp__good__echo", map[string]any{"message": "still here"})); !strings.Contains(got, "still here") {
		t.Errorf("good server: %q", got)
	}
	_, notices, _ := rec.snapshot()
	for _, name := range []string{"missing", "exits", "silent"} {
		if !slices.ContainsFunc(notices, func(n Notice) bool { return n.Server == name && n.Level == NoticeError }) {
			t.Errorf("no error notice for %s: %+v", name, notices)
		}
	}
	// The server that never answered was stopped, child included.
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	eventually(t, 5*time.Second, "the silent server's group to end", func() bool { return len(groupMembers(pgid)) == 0 })

	// A call to a failed server says why, without hanging.
	if _, err := m.GetPrompt(context.Background(), "exits", "x", nil); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("prompt of a failed server: %v", err)
	}
	// Enabling the disabled server starts it.
	if err := m.SetEnabled(context.Background(), "off", true); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("mcp__off__echo"); !ok || statusOf(m, "off").Status != StatusConnected {
		t.Errorf("enabled server: %+v", statusOf(m, "off"))
	}
	if err := m.SetEnabled(context.Background(), "off", false); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("mcp__off__echo"); ok || statusOf(m, "off").Status != StatusDisabled {
		t.Errorf("disabled server: %+v", statusOf(m, "off"))
	}
	// A removed server is gone: no tools, no status.
	m.Remove("good")
	if _, ok := reg.Get("mcp__good__echo"); ok || slices.ContainsFunc(m.Statuses(), func(s Status) bool { return s.Name == "good" }) {
		t.Errorf("removed server still there: %+v", m.Statuses())
	}

	// Close leaves no goroutine behind.
	m.Close()
	eventually(t, 5*time.Second, "the manager's goroutines to end", func() bool {
		return runtime.NumGoroutine() <= goroutines
	})
}

// TestSlowServerJoinsLater checks the start-up deadline: the first request
// waits only so long, and a slower server's tools join the catalogue when it
// is ready, announced through OnChange.
func TestSlowServerJoinsLater(t *testing.T) {
	js := everythingJS(t)
	reg := tool.NewRegistry()
	rec := &recorder{}
	m := New(rec.options(Options{Registry: reg}))
	defer m.Close()
	// The slow server starts only once the test creates the gate file, so
	// "slow" is still starting for as long as the test needs, whatever the
	// machine's load.
	gate := filepath.Join(t.TempDir(), "gate")
	m.Start(context.Background(), []ServerConfig{
		{Name: "fast", Command: "node", Args: []string{js, "stdio"}},
		{Name: "slow", Command: "sh", Args: []string{"-c", `while [ ! -e "$1" ]; do sleep 0.05; done; exec node "$0" stdio`, js, gate}},
	})
	eventually(t, 30*time.Second, "the fast server connected", func() bool {
		return statusOf(m, "fast").Status == StatusConnected
	})
	if m.WaitReady(context.Background(), 300*time.Millisecond) {
		t.Fatalf("ready while a server is still starting: %+v", m.Statuses())
	}
	if st := statusOf(m, "slow"); st.Status != StatusPending {
		t.Errorf("slow: %+v", st)
	}
	if _, ok := reg.Get("mcp__slow__echo"); ok {
		t.Fatal("slow server's tools present before it is ready")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the slow server's tools", func() bool {
		_, ok := reg.Get("mcp__slow__echo")
		return ok
	})
	changes, _, _ := rec.snapshot()
	if !slices.ContainsFunc(changes, func(c Change) bool {
		return c.Server == "slow" && c.Kind == ChangeTools && slices.Contains(c.Added, "mcp__slow__echo")
	}) {
		t.Errorf("the slow server's tools were not announced: %+v", changes)
	}
	if !m.WaitReady(context.Background(), 5*time.Second) {
		t.Errorf("not ready: %+v", m.Statuses())
	}
	if got := textOf(call(t, reg, "mcp__slow__echo", map[string]any{"message": "late"})); !strings.Contains(got, "late") {
		t.Errorf("slow echo: %q", got)
	}
}

// TestNeedsAuth puts server-everything behind a gate that wants a bearer
// token: without one the server needs authentication; once the injected
// round tripper (OAuth's seam) adds the token, Reconnect connects.
func TestNeedsAuth(t *testing.T) {
	port := startRemote(t, "streamableHttp")
	target, _ := url.Parse("http://127.0.0.1:" + strconv.Itoa(port))
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good-token" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+"http://"+r.Host+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer gate.Close()

	var token atomic.Value
	token.Store("")
	seam := func(server string) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if tok := token.Load().(string); tok != "" && server == "gated" {
				req = req.Clone(req.Context())
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			return http.DefaultTransport.RoundTrip(req)
		})
	}
	reg := tool.NewRegistry()
	m := New(Options{Registry: reg, HTTPTransport: seam})
	defer m.Close()
	m.Start(context.Background(), []ServerConfig{
		{Name: "gated", Type: TypeHTTP, URL: gate.URL + "/mcp"},
		{Name: "gated-sse", Type: TypeSSE, URL: gate.URL + "/sse"},
	})
	m.WaitReady(context.Background(), 10*time.Second)
	for _, name := range []string{"gated", "gated-sse"} {
		st := statusOf(m, name)
		if st.Status != StatusNeedsAuth || !strings.Contains(st.Error, "WWW-Authenticate: Bearer resource_metadata=") {
			t.Errorf("%s: %+v", name, st)
		}
	}
	token.Store("good-token")
	if err := m.Reconnect(context.Background(), "gated"); err != nil {
		t.Fatal(err)
	}
	if got := textOf(call(t, reg, "mcp__gated__echo", map[string]any{"message": "authorised"})); !strings.Contains(got, "authorised") {
		t.Errorf("echo: %q", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFilesystemRoots runs server-filesystem with no directory of its own:
// it works in the roots tack offers, and follows them when they change.
func TestFilesystemRoots(t *testing.T) {
	js := filesystemJS(t)
	a, b := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(a, "a.txt"), []byte("in root a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "b.txt"), []byte("in root b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	m := New(Options{Registry: reg, Roots: []string{a}})
	defer m.Close()
	m.Start(context.Background(), []ServerConfig{{Name: "fs", Command: "node", Args: []string{js}}})
	if !m.WaitReady(context.Background(), 30*time.Second) || statusOf(m, "fs").Status != StatusConnected {
		t.Fatalf("not connected: %+v", m.Statuses())
	}
	read := func(path string) (string, bool) {
		res, err := callErr(reg, "mcp__fs__read_text_file", map[string]any{"path": path})
		if err != nil {
			return err.Error(), false
		}
		return textOf(res), !res.IsError
	}
	var got string
	eventually(t, 10*time.Second, "reading a file in the root", func() bool {
		var ok bool
		got, ok = read(filepath.Join(a, "a.txt"))
		return ok
	})
	if !strings.Contains(got, "in root a") {
		t.Fatalf("read: %q", got)
	}
	if tl, _ := reg.Get("mcp__fs__read_text_file"); tl == nil || !tl.ReadOnly(nil) {
		t.Error("read_text_file is not read-only")
	}
	if tl, _ := reg.Get("mcp__fs__write_file"); tl == nil || tl.ReadOnly(nil) {
		t.Error("write_file is read-only")
	}
	m.SetRoots([]string{b})
	eventually(t, 10*time.Second, "the new root to be used", func() bool {
		_, okB := read(filepath.Join(b, "b.txt"))
		_, okA := read(filepath.Join(a, "a.txt"))
		return okB && !okA
	})
}

// TestRemoteServerRestart restarts the HTTP server under a live session:
// the next call finds its session gone (404), connects again and succeeds;
// an SSE server that goes away is reconnected in the background.
func TestRemoteServerRestart(t *testing.T) {
	httpPort, killHTTP := startRemoteOn(t, "streamableHttp", 0)
	ssePort, killSSE := startRemoteOn(t, "sse", 0)
	reg := tool.NewRegistry()
	rec := &recorder{}
	m := New(rec.options(Options{Registry: reg, Limits: Limits{ReconnectDelay: 200 * time.Millisecond}}))
	defer m.Close()
	m.Start(context.Background(), []ServerConfig{
		{Name: "web", Type: TypeHTTP, URL: "http://127.0.0.1:" + strconv.Itoa(httpPort) + "/mcp"},
		{Name: "events", Type: TypeSSE, URL: "http://127.0.0.1:" + strconv.Itoa(ssePort) + "/sse"},
	})
	if !m.WaitReady(context.Background(), 30*time.Second) {
		t.Fatalf("not ready: %+v", m.Statuses())
	}
	for _, name := range []string{"mcp__web__echo", "mcp__events__echo"} {
		if got := textOf(call(t, reg, name, map[string]any{"message": "before"})); !strings.Contains(got, "before") {
			t.Fatalf("%s: %q", name, got)
		}
	}
	killHTTP()
	killSSE()
	startRemoteOn(t, "streamableHttp", httpPort)
	startRemoteOn(t, "sse", ssePort)

	if got := textOf(call(t, reg, "mcp__web__echo", map[string]any{"message": "after"})); !strings.Contains(got, "after") {
		t.Errorf("http after restart: %q", got)
	}
	// The SSE stream broke: the session ended and is reconnected.
	eventually(t, 60*time.Second, "the SSE server reconnected", func() bool {
		_, notices, _ := rec.snapshot()
		return statusOf(m, "events").Status == StatusConnected &&
			slices.ContainsFunc(notices, func(n Notice) bool { return n.Server == "events" && strings.Contains(n.Message, "reconnected") })
	})
	if got := textOf(call(t, reg, "mcp__events__echo", map[string]any{"message": "after"})); !strings.Contains(got, "after") {
		t.Errorf("sse after restart: %q", got)
	}
}

func TestProbe(t *testing.T) {
	js := everythingJS(t)
	st := Probe(context.Background(), ServerConfig{Name: "e", Command: "node", Args: []string{js, "stdio"}, Scope: "user"}, Options{})
	if st.Status != StatusConnected || st.Tools < 10 || st.Scope != "user" {
		t.Errorf("%+v", st)
	}
	st = Probe(context.Background(), ServerConfig{Name: "x", Command: "false"}, Options{})
	if st.Status != StatusFailed || !strings.Contains(st.Error, "exited with status 1") {
		t.Errorf("%+v", st)
	}
}

// answersOnlyInitialize is a stdio MCP server that completes the handshake
// and then never answers anything: a server stuck listing its tools. It is
// sh and sed, not node, so that it answers well within the 3 s start-up
// timeout however loaded the machine is: the test is about what follows the
// handshake.
const answersOnlyInitialize = `read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
pv=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"half","version":"1"}}}\n' "$id" "$pv"
# Not exec: the shell keeps its stdout, the client's end, open.
cat >/dev/null
`

// TestServerThatNeverAnswers: a real process that reads its input and
// never answers is reported — which server, what it did not answer, after
// how long, and what to set to wait longer — while it is overdue and once
// its start-up timeout has passed; so is one that completes the handshake
// but never lists its tools. The manager goes on with the servers that
// work.
func TestServerThatNeverAnswers(t *testing.T) {
	rec := &recorder{}
	m := New(rec.options(Options{Registry: tool.NewRegistry(), Limits: Limits{StartTimeout: 3 * time.Second}}))
	defer m.Close()
	m.Start(context.Background(), []ServerConfig{
		{Name: "mute", Command: "sh", Args: []string{"-c", "cat >/dev/null"}},
		{Name: "half", Command: "sh", Args: []string{"-c", answersOnlyInitialize}},
	})
	if m.WaitReady(context.Background(), 100*time.Millisecond) {
		t.Fatalf("ready at once: %+v", m.Statuses())
	}
	var mute *Status
	for _, st := range m.Overdue(100 * time.Millisecond) {
		if st.Name == "mute" {
			mute = &st
		}
	}
	want := "no answer to the MCP handshake (initialize request) after 100ms; still waiting for it, up to 3s (MCP_TIMEOUT); set MCP_TIMEOUT (milliseconds) to wait longer"
	if mute == nil || mute.Status != StatusPending || !mute.Overdue || mute.Error != want {
		t.Errorf("overdue mute: %+v, want pending with %q", mute, want)
	}
	if st := statusOf(m, "mute"); !st.Overdue || st.Error != want {
		t.Errorf("mute's status after Overdue: %+v", st)
	}

	if !m.WaitReady(context.Background(), -1) {
		t.Fatalf("still pending: %+v", m.Statuses())
	}
	for name, want := range map[string]string{
		"mute": "no answer to the MCP handshake (initialize request) within 3s; set MCP_TIMEOUT (milliseconds) to wait longer",
		"half": "no answer to the tools/list request within 3s; set MCP_TIMEOUT (milliseconds) to wait longer",
	} {
		if st := statusOf(m, name); st.Status != StatusFailed || st.Overdue || st.Error != want {
			t.Errorf("%s: %+v, want failed with %q", name, st, want)
		}
		// The notice follows the status: wait for it.
		eventually(t, 10*time.Second, "the notice of "+name, func() bool {
			_, notices, _ := rec.snapshot()
			return slices.ContainsFunc(notices, func(n Notice) bool {
				return n.Server == name && n.Level == NoticeError && n.Message == fmt.Sprintf("MCP server %q failed: %s", name, want)
			})
		})
	}
}
