package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// The floor makes the one streamed request and prints the answer, as
// `tack -p` does: its figures are those of a real round trip.
func TestStreamsTheAnswer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stream")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	srv, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("hello there"))}, Lenient: true,
		OnViolation: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cmd := exec.Command(bin, "say hi")
	cmd.Env = []string{"ANTHROPIC_BASE_URL=" + srv.URL(), "ANTHROPIC_API_KEY=k"}
	out, err := cmd.Output()
	if err != nil || string(out) != "hello there\n" {
		t.Fatalf("%v: %q", err, out)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/messages" || reqs[0].Header.Get("x-api-key") != "k" {
		t.Fatalf("requests: %+v", reqs)
	}
}
