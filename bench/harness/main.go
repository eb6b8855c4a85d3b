// Command harness measures tack against the scripted fake Messages API —
// and, when CLAUDE_BIN names a Claude Code binary, Claude Code on the same
// scenarios in the same run — and prints medians and ratios:
//
//   - time from launch to the first API request, wall time, CPU time and
//     maximum RSS of `-p "say hi"`;
//   - the client's time per tool round trip: from the end of one response
//     to the next request, with a trivial Read call in between (for tack the
//     Read itself, measured in-process, is subtracted too);
//   - the size of the first request.
//
// Usage: go run ./bench/harness [-runs 15] [-roundtrips 20] [-tack PATH] [-claude PATH]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/fs"
)

func main() {
	runs := flag.Int("runs", 15, "runs per scenario")
	roundTrips := flag.Int("roundtrips", 20, "tool round trips in the round-trip scenario")
	tackPath := flag.String("tack", "", "tack binary (default: build ./cmd/tack)")
	claudePath := flag.String("claude", os.Getenv("CLAUDE_BIN"), "Claude Code binary to compare with (default $CLAUDE_BIN)")
	flag.Parse()
	if err := run(*runs, *roundTrips, *tackPath, *claudePath); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

// subject is one program under measurement.
type subject struct {
	name string
	bin  string
	args []string // before the prompt
	env  []string
}

// sample is one run of a scenario.
type sample struct {
	toFirstRequest time.Duration
	wall           time.Duration
	cpu            time.Duration
	maxRSSKB       int64
	firstBytes     int
	gap            time.Duration // median client time per round trip
}

func run(runs, roundTrips int, tackPath, claudePath string) error {
	work, err := os.MkdirTemp("", "tack-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if tackPath == "" {
		tackPath = filepath.Join(work, "tack")
		build := exec.Command("go", "build", "-o", tackPath, "./cmd/tack")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("build tack: %w", err)
		}
	}
	repo := filepath.Join(work, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	target := filepath.Join(repo, "notes.txt")
	if err := os.WriteFile(target, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		return err
	}

	subjects := []subject{{name: "tack", bin: tackPath, args: []string{"-p"}}}
	if claudePath != "" {
		subjects = append(subjects, subject{name: "claude", bin: claudePath, args: []string{"-p"},
			env: []string{"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
				"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1"}})
	}

	readCost := measureRead(target, 200)
	fmt.Printf("runs per scenario: %d; round trips per run: %d; in-process Read of a 3-line file: %s (median)\n\n",
		runs, roundTrips, readCost)

	results := map[string][2][]sample{}
	for _, s := range subjects {
		hi, err := scenario(s, work, repo, "say hi", []llmtest.Turn{llmtest.Reply(llmtest.Text("hi"))}, runs)
		if err != nil {
			return fmt.Errorf("%s say hi: %w", s.name, err)
		}
		turns := make([]llmtest.Turn, 0, roundTrips+1)
		for i := range roundTrips {
			// Each call differs (limit), as a real session's would: the same
			// call over and over is what loop detection stops.
			turns = append(turns, llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": target, "limit": 100 + i})))
		}
		turns = append(turns, llmtest.Reply(llmtest.Text("done")))
		rt, err := scenario(s, work, repo, "read notes.txt", turns, runs)
		if err != nil {
			return fmt.Errorf("%s round trips: %w", s.name, err)
		}
		results[s.name] = [2][]sample{hi, rt}
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "metric (median)\ttack\t"
	if claudePath != "" {
		header += "claude\tclaude/tack\t"
	}
	fmt.Fprintln(tw, header+"target\t")
	rows := []struct {
		name   string
		target string
		get    func(s []sample) float64
		format func(float64) string
		which  int
	}{
		{"launch to first request", "≤ 15 ms", func(s []sample) float64 {
			return medianDur(s, func(x sample) time.Duration { return x.toFirstRequest })
		}, ms, 0},
		{"wall time, -p \"say hi\"", "", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.wall }) }, ms, 0},
		{"CPU time, -p \"say hi\"", "≤ 30 ms", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.cpu }) }, ms, 0},
		{"max RSS, -p \"say hi\"", "≤ 25 MiB", func(s []sample) float64 { return medianInt(s, func(x sample) int64 { return x.maxRSSKB }) / 1024 }, mib, 0},
		{"first request size", "≤ 25 KB", func(s []sample) float64 {
			return medianInt(s, func(x sample) int64 { return int64(x.firstBytes) }) / 1024
		}, kb, 0},
		{"client time per round trip (incl. Read)", "", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.gap }) }, ms, 1},
	}
	for _, r := range rows {
		t := r.get(results["tack"][r.which])
		line := fmt.Sprintf("%s\t%s\t", r.name, r.format(t))
		if claudePath != "" {
			c := r.get(results["claude"][r.which])
			line += fmt.Sprintf("%s\t%.1f×\t", r.format(c), c/t)
		}
		fmt.Fprintln(tw, line+r.target+"\t")
	}
	gap := time.Duration(medianDur(results["tack"][1], func(x sample) time.Duration { return x.gap }) * float64(time.Millisecond))
	line := fmt.Sprintf("tack harness per round trip (excl. Read)\t%s\t", ms(float64(gap-readCost)/float64(time.Millisecond)))
	if claudePath != "" {
		line += "\t\t"
	}
	fmt.Fprintln(tw, line+"≤ 2 ms\t")
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := longRuns(work, repo, tackPath, target); err != nil {
		return err
	}
	return mcpRuns(work, repo, tackPath, 5)
}

// scenario runs prompt runs times against a fresh fake API serving turns.
func scenario(s subject, work, repo, prompt string, turns []llmtest.Turn, runs int) ([]sample, error) {
	var violations []string
	srv, err := llmtest.NewServer(llmtest.Options{
		Turns: turns, ByConversation: true, Loop: true, Lenient: s.name != "tack",
		OnViolation: func(err error) {
			violations = append(violations, err.Error())
		},
	})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	home := filepath.Join(work, "home-"+s.name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	var out []sample
	for i := 0; i < runs; i++ {
		before := len(srv.Requests())
		cmd := exec.Command(s.bin, append(append([]string(nil), s.args...), prompt)...)
		cmd.Dir = repo
		cmd.Env = append([]string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SHELL=/bin/bash", "IS_SANDBOX=1",
			"ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + srv.URL(),
		}, s.env...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		waitErr := waitCtx(ctx, cmd)
		cancel()
		wall := time.Since(start)
		if waitErr != nil {
			return nil, fmt.Errorf("run %d: %w\n%s", i, waitErr, stderr.String())
		}
		reqs := srv.Requests()[before:]
		reqs = slices.DeleteFunc(reqs, func(r llmtest.Request) bool { return r.Path != "/v1/messages" })
		if len(reqs) == 0 {
			return nil, fmt.Errorf("run %d made no request\n%s", i, stderr.String())
		}
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		smp := sample{
			toFirstRequest: reqs[0].Received.Sub(start),
			wall:           wall,
			cpu:            cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
			firstBytes:     len(reqs[0].Body),
		}
		if ru != nil {
			smp.maxRSSKB = ru.Maxrss
		}
		smp.gap = roundTripGap(reqs)
		out = append(out, smp)
	}
	if len(violations) > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d requests differed from tack's invariants, e.g. %s\n", s.name, len(violations), violations[0])
	}
	return out, nil
}

// roundTripGap is the median time from the end of one response to the next
// request of the same conversation: the client's time for a round trip.
func roundTripGap(reqs []llmtest.Request) time.Duration {
	var gaps []time.Duration
	for i := 1; i < len(reqs); i++ {
		if reqs[i].TurnIndex != reqs[i-1].TurnIndex+1 || reqs[i-1].Done.IsZero() {
			continue // a side request, not the next step of the loop
		}
		gaps = append(gaps, reqs[i].Received.Sub(reqs[i-1].Done))
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// measureRead is the median in-process cost of tack's Read tool on path.
func measureRead(path string, n int) time.Duration {
	var read tool.Tool
	for _, t := range fs.Tools() {
		if t.Name() == "Read" {
			read = t
		}
	}
	dir := filepath.Dir(path)
	env := &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState()}
	input, _ := json.Marshal(map[string]string{"file_path": path})
	times := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if _, err := read.Run(context.Background(), env, input); err != nil {
			return 0
		}
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	return times[n/2]
}

func waitCtx(ctx context.Context, cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("exit status %d", ee.ExitCode())
		}
		return err
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return ctx.Err()
	}
}

func medianDur(s []sample, f func(sample) time.Duration) float64 {
	v := make([]time.Duration, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	return float64(v[len(v)/2]) / float64(time.Millisecond)
}

func medianInt(s []sample, f func(sample) int64) float64 {
	v := make([]int64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	return float64(v[len(v)/2])
}

func ms(v float64) string  { return fmt.Sprintf("%.2f ms", v) }
func mib(v float64) string { return fmt.Sprintf("%.1f MiB", v) }
func kb(v float64) string  { return fmt.Sprintf("%.1f KB", v) }
