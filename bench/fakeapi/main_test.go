package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a strings.Builder safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ask posts a minimal Messages request and returns the status and body.
func ask(t *testing.T, url string, headers bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/v1/messages",
		strings.NewReader(`{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("content-type", "application/json")
	if headers {
		req.Header.Set("anthropic-version", "2023-06-01")
		req.Header.Set("x-api-key", "k")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestRunServesScriptUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdoutR, stdoutW := io.Pipe()
	var stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"-script", "../scripts/say_hi.json", "-loop"}, stdoutW, &stderr)
		stdoutW.Close()
	}()
	lines := bufio.NewScanner(stdoutR)
	if !lines.Scan() {
		t.Fatalf("no URL line; stderr: %s", stderr.String())
	}
	url := lines.Text()
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(url) {
		t.Fatalf("first line %q is not a base URL", url)
	}
	for range 2 { // -loop serves the one-turn script again
		status, body := ask(t, url, true)
		if status != 200 || !strings.Contains(body, `"text":"hi"`) || !strings.HasSuffix(body, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n") {
			t.Fatalf("status %d body %s", status, body)
		}
	}
	if status, _ := ask(t, url, false); status != 400 {
		t.Errorf("request without headers: status %d, want 400", status)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	if lines.Scan() {
		t.Errorf("more than one line on stdout: %q", lines.Text())
	}
	if e := stderr.String(); !strings.Contains(e, "header anthropic-version is missing") || !strings.Contains(e, "no credentials") || !strings.Contains(e, "fakeapi: 2 violations") {
		t.Errorf("stderr does not log the violations: %s", e)
	}
}

func TestRunRejectsBadInvocations(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"content":[],"stop_reson":"x"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no script":   {nil, "usage: fakeapi -script FILE"},
		"bad script":  {[]string{"-script", bad}, `unknown field "stop_reson"`},
		"missing":     {[]string{"-script", "nope.json"}, "no such file"},
		"bad address": {[]string{"-script", "../scripts/say_hi.json", "-addr", "256.1.1.1:0"}, "listen"},
		"bad flag":    {[]string{"-bogus"}, "flag provided but not defined"},
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr syncBuffer
			if c := run(context.Background(), tc.args, &stdout, &stderr); c != 2 {
				t.Errorf("exit code %d, want 2", c)
			}
			if stdout.String() != "" {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr %q does not mention %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestSignalStopsBinary runs the real command and stops it with SIGTERM.
func TestSignalStopsBinary(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on windows")
	}
	bin := filepath.Join(t.TempDir(), "fakeapi")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-script", "../scripts/say_hi.json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading URL: %v", err)
	}
	if status, body := ask(t, strings.TrimSpace(line), true); status != 200 || !strings.Contains(body, `"text":"hi"`) {
		t.Errorf("status %d body %s", status, body)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("did not exit on SIGTERM")
	}
}
