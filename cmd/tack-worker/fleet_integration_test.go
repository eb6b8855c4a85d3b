package main

// The fleet end to end on a real Temporal dev server: two tack-worker
// processes, a fleet submitted, followed and read with the fleet commands
// as a user runs them, one worker killed (SIGKILL) while a Bash command of
// a task sleeps, and the run taken over by the other worker.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/tackcode/tack/cmd/tack-worker/flow"
	"github.com/tackcode/tack/cmd/tack-worker/internal/gittest"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/testbin"
)

// temporalBin is the Temporal CLI whose dev server the test runs:
// $TACK_TEST_TEMPORAL, else the one scripts/test builds into
// ~/.cache/tack-test/bin. Missing, it fails the test in CI (CI set) and
// skips it elsewhere.
func temporalBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv("TACK_TEST_TEMPORAL")
	if p == "" {
		home, _ := os.UserHomeDir()
		p = filepath.Join(home, ".cache", "tack-test", "bin", "temporal")
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("temporal missing at %s (scripts/test builds it): %v", p, err)
		}
		t.Skipf("temporal missing at %s; run scripts/test", p)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// poll calls ok every 100 ms until it is true or the deadline passes, and
// fails the test with what then.
func poll(t *testing.T, deadline time.Duration, what string, ok func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !ok() {
		if time.Now().After(end) {
			t.Fatalf("after %v: %s", deadline, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// process is a child the test started, with its output in a file.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func start(t *testing.T, name, logDir string, env []string, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, log: filepath.Join(logDir, name+".log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			data, _ := os.ReadFile(p.log)
			t.Logf("%s's output:\n%s", name, lastLines(string(data), 60))
		}
	})
	return p
}

// stop ends the process: SIGTERM, then SIGKILL if it is still there
// after 20 s.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// startTemporal runs a dev server on free ports with the search attributes
// of package flow and returns its address once it serves the default
// namespace.
func startTemporal(t *testing.T, dir string) string {
	t.Helper()
	bin := temporalBin(t)
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	_, port, _ := net.SplitHostPort(addr)
	args := []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", port,
		"--http-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t)),
		"--db-filename", filepath.Join(dir, "temporal.db"), "--log-level", "warn"}
	for name, typ := range flow.SearchAttributes {
		args = append(args, "--search-attribute", name+"="+typ)
	}
	srv := start(t, "temporal", dir, os.Environ(), bin, args...)
	poll(t, 90*time.Second, "the Temporal dev server does not answer at "+addr, func() bool {
		select {
		case <-srv.done:
			t.Fatalf("the Temporal dev server exited: see its output")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cl, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: logAdapter(nil)})
		if err != nil {
			return false
		}
		defer cl.Close()
		_, err = cl.DescribeWorkflow(ctx, "no-such-workflow", "")
		// NotFound is the answer of a server that serves the namespace.
		var nf *serviceerror.NotFound
		return errors.As(err, &nf)
	})
	return addr
}

// buildWorker builds this module's tack-worker binary into dir, with the
// race detector when the test has it.
func buildWorker(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "tack-worker")
	var flags []string
	if raceEnabled {
		flags = append(flags, "-race")
	}
	cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, flags...), ".")...)
	cmd.Env = testbin.BuildEnv(flags...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tack-worker: %v\n%s", err, out)
	}
	return bin
}

// alive reports whether pid is a process that has not ended (a zombie
// has).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the command's name in parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

var taskOfPrompt = regexp.MustCompile(`task (t\d+):`)

// taskOf is the task whose conversation req belongs to, from its prompt.
func taskOf(req *llmtest.Request) string {
	for _, m := range req.Messages {
		if m.Role != llm.RoleUser {
			continue
		}
		if sm := taskOfPrompt.FindStringSubmatch(llm.TextOf(m.Content)); sm != nil {
			return sm[1]
		}
		break
	}
	return "unknown"
}

// A fleet of six tasks on two workers, one of them killed while a task's
// Bash command runs: every task is done, no Bash command ran twice (the
// one cut off is reported to the model as interrupted, not run again), the
// edits are on the tasks' branches in the remotes, and the fleet's cost is
// the sum of its tasks'.
func TestFleetOnTemporalSurvivesAWorkerKill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Temporal dev server")
	}
	dir := t.TempDir()
	began := time.Now()
	addr := startTemporal(t, dir)
	t.Logf("Temporal dev server up at %s after %v", addr, time.Since(began).Round(time.Millisecond))
	bin := buildWorker(t, dir)
	t.Logf("tack-worker built after %v", time.Since(began).Round(time.Millisecond))
	counters, markers, pids := filepath.Join(dir, "counters"), filepath.Join(dir, "markers"), filepath.Join(dir, "pids")
	for _, d := range []string{counters, markers, pids} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Each task's model runs three Bash commands that count themselves in
	// the task's counter file, outside the workspace. The second writes a
	// marker naming its worker, after starting, on worker w1, a sleep long
	// enough to be killed in (its pid in pids/), elsewhere after a short
	// one. The third edits README.
	bash := func(cmd string) []llm.Block {
		return []llm.Block{llmtest.ToolUse("Bash", map[string]string{"command": cmd})}
	}
	counter := func(req *llmtest.Request) string { return filepath.Join(counters, taskOf(req)) }
	srv := llmtest.Start(t, llmtest.Options{ByConversation: true, Turns: []llmtest.Turn{
		{Build: func(r *llmtest.Request) []llm.Block { return bash("echo one >> " + counter(r)) }},
		{Build: func(r *llmtest.Request) []llm.Block {
			return bash(fmt.Sprintf(`echo two >> %s && if [ "$TACK_WORKER_ID" = w1 ]; then sleep 120 & echo $! > %s; else sleep 1; fi; echo "$TACK_WORKER_ID" > %s; wait`,
				counter(r), filepath.Join(pids, taskOf(r)), filepath.Join(markers, taskOf(r))))
		}},
		{Build: func(r *llmtest.Request) []llm.Block {
			return bash(fmt.Sprintf("echo three >> %s && echo 'change of %s' >> README", counter(r), taskOf(r)))
		}},
		{Build: func(r *llmtest.Request) []llm.Block { return []llm.Block{llm.Text("done " + taskOf(r))} }},
	}})

	// Six repositories; each task pushes to its own remote (a fork).
	const fleetName = "itest"
	var tasks []map[string]string
	forks := map[string]string{}
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("t%d", i)
		url, _ := gittest.Repo(t, dir, "repo-"+id, map[string]string{"README": "repository " + id + "\n"})
		fork := filepath.Join(dir, "fork-"+id+".git")
		gittest.Git(t, dir, "init", "-q", "--bare", fork)
		forks[id] = fork
		tasks = append(tasks, map[string]string{"id": id, "repo": url, "push": "file://" + fork,
			"prompt": fmt.Sprintf("task %s: count and edit", id)})
	}
	fleetFile := filepath.Join(dir, "fleet.json")
	data, _ := json.Marshal(map[string]any{"name": fleetName, "defaults": map[string]any{"permission_mode": "bypassPermissions"}, "tasks": tasks})
	if err := os.WriteFile(fleetFile, data, 0o644); err != nil {
		t.Fatal(err)
	}

	home := filepath.Join(dir, "home")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SHELL=/bin/bash",
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.URL(),
		"TEMPORAL_ADDRESS=" + addr, "TACK_WORKER_STORE=" + filepath.Join(dir, "store")}
	// w1 runs one task at a time: when its marker shows, the one task it
	// has is in its sleeping command.
	w1 := start(t, "w1", dir, env, bin, "worker", "--id", "w1", "--concurrency", "1", "--work-dir", filepath.Join(dir, "work-w1"))
	w2 := start(t, "w2", dir, env, bin, "worker", "--id", "w2", "--concurrency", "3", "--work-dir", filepath.Join(dir, "work-w2"))
	// A race the workers' detector found (a -race test builds them with it)
	// is in their output.
	defer func() {
		w2.stop()
		for _, w := range []*process{w1, w2} {
			if data, _ := os.ReadFile(w.log); bytes.Contains(data, []byte("WARNING: DATA RACE")) {
				t.Errorf("%s: a data race:\n%s", w.name, data)
			}
		}
	}()

	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("tack-worker %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	if out := cli("fleet", "submit", "--heartbeat-timeout", "5s", fleetFile); !strings.Contains(out, "6 tasks submitted") {
		t.Fatalf("fleet submit said:\n%s", out)
	}

	// The same fleet again while it runs is refused, not taken for it.
	again := exec.Command(bin, "fleet", "submit", fleetFile)
	again.Env = env
	if out, err := again.CombinedOutput(); err == nil || !strings.Contains(string(out), "is running") {
		t.Fatalf("a second submit of the running fleet: %v\n%s", err, out)
	}

	// Kill w1 while its task sleeps in Bash.
	var killed string
	poll(t, 3*time.Minute, "no task's sleeping command started on w1", func() bool {
		entries, _ := os.ReadDir(markers)
		for _, e := range entries {
			if data, _ := os.ReadFile(filepath.Join(markers, e.Name())); strings.TrimSpace(string(data)) == "w1" {
				killed = e.Name()
				return true
			}
		}
		return false
	})
	if err := w1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w1.done
	t.Logf("killed w1 in task %s's sleeping command after %v", killed, time.Since(began).Round(time.Millisecond))

	var st flow.FleetStatus
	poll(t, 4*time.Minute, "the fleet did not end", func() bool {
		var all []flow.FleetStatus
		if err := json.Unmarshal([]byte(cli("fleet", "status", "--json", fleetName)), &all); err != nil || len(all) != 1 {
			t.Fatalf("fleet status --json: %v %+v", err, all)
		}
		st = all[0]
		return st.Done
	})
	if err := json.Unmarshal([]byte(cli("fleet", "results", "--json", fleetName)), &st); err != nil {
		t.Fatalf("fleet results --json: %v", err)
	}
	t.Logf("fleet ended after %v: %s", time.Since(began).Round(time.Millisecond), progressLine(&st))

	sum := 0.0
	for _, ts := range st.Tasks {
		if ts.Status != flow.StatusDone || ts.Result == nil {
			t.Errorf("task %s: status %s (%s), result %+v", ts.ID, ts.Status, ts.Error, ts.Result)
			continue
		}
		sum += ts.CostUSD
		if ts.CostUSD <= 0 || ts.CostUSD != ts.Result.CostUSD {
			t.Errorf("task %s: cost %v, its result's %v", ts.ID, ts.CostUSD, ts.Result.CostUSD)
		}
		if want := "done " + ts.ID; ts.Result.Text != want {
			t.Errorf("task %s: result %q, want %q", ts.ID, ts.Result.Text, want)
		}
		// Each command ran exactly once: the one w1 was killed in counted
		// itself before its sleep, and was not run again.
		if data, _ := os.ReadFile(filepath.Join(counters, ts.ID)); string(data) != "one\ntwo\nthree\n" {
			t.Errorf("task %s: counter file %q, want each command once", ts.ID, data)
		}
		attempts := 1
		if ts.ID == killed {
			attempts = 2
		}
		if ts.Result.Attempts != attempts {
			t.Errorf("task %s: %d attempts, want %d", ts.ID, ts.Result.Attempts, attempts)
		}
		branch := "tack/" + fleetName + "/" + ts.ID
		if ts.Result.Branch != branch {
			t.Errorf("task %s: branch %q, want %q", ts.ID, ts.Result.Branch, branch)
			continue
		}
		if log := gittest.Git(t, forks[ts.ID], "log", "--format=%s", branch); log != "tack: "+ts.ID+"\nstart" {
			t.Errorf("task %s: the branch's log in its remote:\n%s", ts.ID, log)
		}
		if readme := gittest.Show(t, forks[ts.ID], branch, "README"); readme != "repository "+ts.ID+"\nchange of "+ts.ID {
			t.Errorf("task %s: README on the branch: %q", ts.ID, readme)
		}
	}
	if len(st.Tasks) != 6 {
		t.Errorf("%d tasks in the results, want 6", len(st.Tasks))
	}
	// The killed task's cost counts the model responses of both its
	// attempts: no less than a task that ran its four in one.
	least, killedCost := 0.0, 0.0
	for _, ts := range st.Tasks {
		switch {
		case ts.ID == killed:
			killedCost = ts.CostUSD
		case least == 0 || ts.CostUSD < least:
			least = ts.CostUSD
		}
	}
	if killedCost < 0.95*least {
		t.Errorf("task %s cost $%v over its two attempts, the others at least $%v: the killed attempt's spend is lost", killed, killedCost, least)
	}
	if diff := st.SpentUSD - sum; diff > 1e-9 || diff < -1e-9 {
		t.Errorf("the fleet spent $%v, its tasks $%v", st.SpentUSD, sum)
	}

	// The killed worker's command is gone, the sleep its shell started
	// too, not only the shell.
	data, err := os.ReadFile(filepath.Join(pids, killed))
	if err != nil {
		t.Fatalf("the pid of the sleep w1 was killed in: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	poll(t, time.Minute, fmt.Sprintf("the sleep of the killed worker's command (pid %d) still runs", pid), func() bool { return !alive(pid) })

	// The taken-over session was told that the call was cut off.
	told := false
	for _, r := range srv.Requests() {
		if taskOf(&r) == killed && strings.Contains(r.LastUserText(), "interrupted") {
			told = true
		}
	}
	if !told {
		t.Errorf("no request of task %s tells the model its call was interrupted", killed)
	}
	if out := cli("fleet", "results", fleetName); !strings.Contains(out, "total") {
		t.Errorf("fleet results:\n%s", out)
	}
}
