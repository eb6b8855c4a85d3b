package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// fixture returns the absolute path of test/mcp, failing the test when its
// npm packages are not installed.
func fixture(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "mcp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed; the MCP interop tests run real servers from npm")
	}
	for _, pkg := range []string{"server-everything", "server-filesystem"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json")); err != nil {
			t.Fatal("test/mcp/node_modules is missing: run scripts/test (it runs `npm ci --prefix test/mcp`)")
		}
	}
	return dir
}

func everythingJS(t testing.TB) string {
	return filepath.Join(fixture(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

func filesystemJS(t testing.TB) string {
	return filepath.Join(fixture(t), "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
}

// startRemote runs server-everything over "streamableHttp" or "sse" on a
// free port of 127.0.0.1 and returns the port. The server's process group
// is killed when the test ends.
func startRemote(t testing.TB, mode string) int {
	t.Helper()
	port, _ := startRemoteOn(t, mode, 0)
	return port
}

// startRemoteOn is startRemote on a given port (0: any), also returning a
// function that kills the server.
func startRemoteOn(t testing.TB, mode string, port int) (int, func()) {
	t.Helper()
	dir := fixture(t)
	cmd := exec.Command("node", "--require", filepath.Join(dir, "listen-localhost.cjs"), everythingJS(t), mode)
	// Never fetch anything from outside in gzip-file-as-resource.
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "GZIP_ALLOWED_DOMAINS=127.0.0.1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(kill)
	ports := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "TACK_TEST_LISTENING "); ok {
				n, _ := strconv.Atoi(p)
				select {
				case ports <- n:
				default:
				}
			}
		}
	}()
	select {
	case p := <-ports:
		return p, kill
	case <-time.After(20 * time.Second):
		t.Fatalf("server-everything %s did not start listening", mode)
	}
	return 0, kill
}

// recorder collects what a Manager reports.
type recorder struct {
	mu       sync.Mutex
	changes  []Change
	notices  []Notice
	progress []Progress
}

func (r *recorder) options(o Options) Options {
	o.OnChange = func(c Change) { r.mu.Lock(); r.changes = append(r.changes, c); r.mu.Unlock() }
	o.OnNotice = func(n Notice) { r.mu.Lock(); r.notices = append(r.notices, n); r.mu.Unlock() }
	o.OnProgress = func(p Progress) { r.mu.Lock(); r.progress = append(r.progress, p); r.mu.Unlock() }
	return o
}

func (r *recorder) snapshot() ([]Change, []Notice, []Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes), slices.Clone(r.notices), slices.Clone(r.progress)
}

// eventually polls cond until it holds or d has passed.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call runs a registry tool as the engine would: validate, then Run.
func call(t testing.TB, reg *tool.Registry, name string, input any) tool.Result {
	t.Helper()
	res, err := callErr(reg, name, input)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func callErr(reg *tool.Registry, name string, input any) (tool.Result, error) {
	tl, ok := reg.Get(name)
	if !ok {
		return tool.Result{}, &missingTool{name: name, have: reg.Names()}
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return tool.Result{}, err
	}
	if err := reg.Validate(tl, raw); err != nil {
		return tool.Result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return tl.Run(ctx, &tool.Env{}, raw)
}

type missingTool struct {
	name string
	have []string
}

func (e *missingTool) Error() string {
	return "no tool " + e.name + " in the registry; it has " + strings.Join(e.have, ", ")
}

func textOf(r tool.Result) string { return llm.TextOf(r.Content) }

func statusOf(m *Manager, name string) Status {
	for _, s := range m.Statuses() {
		if s.Name == name {
			return s
		}
	}
	return Status{}
}

// alive reports whether a process with pid exists (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// groupMembers returns the pids of the live processes in process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// f[0] state, f[1] ppid, f[2] pgrp
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// serverPid returns the pid of a stdio server's leader process.
func serverPid(t testing.TB, m *Manager, name string) int {
	t.Helper()
	s, err := m.get(name)
	if err != nil {
		t.Fatal(err)
	}
	sess := s.live()
	if sess == nil || sess.proc == nil {
		t.Fatalf("server %s has no running process", name)
	}
	return sess.proc.pid()
}
