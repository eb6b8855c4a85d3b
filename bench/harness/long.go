package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/session"
)

// longRuns measures tack on long sessions: resuming a 10 000-message
// session to its first request (beside the baseline, when there is one),
// and the memory of a 1 000-turn run.
func longRuns(launcher, work, repo, tackPath, baselinePath, readTarget string) error {
	fmt.Println()
	bins := []string{tackPath}
	if baselinePath != "" {
		bins = append(bins, baselinePath)
	}
	const resumeRuns = 15 // a resume varies more from run to run than a start
	resume, err := resumeBig(work, repo, bins, 10_000, resumeRuns)
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	long, err := longRun(launcher, work, repo, tackPath, readTarget, 1000)
	if err != nil {
		return fmt.Errorf("1000 turns: %w", err)
	}
	beside := ""
	if len(resume) > 1 {
		beside = fmt.Sprintf("; baseline %s, tack/baseline %.2f×", resume[1].Round(100*time.Microsecond), float64(resume[0])/float64(resume[1]))
	}
	fmt.Printf("resume a 10 000-message session to its first request: %s (median of %d%s; target ≤ 30 ms)\n", resume[0].Round(100*time.Microsecond), resumeRuns, beside)
	fmt.Printf("max RSS of a 1 000-turn run with a tool call each turn: %.1f MiB (target ≤ 100 MiB; the run took %s)\n",
		float64(long.rssKB)/1024, long.wall.Round(time.Millisecond))
	fmt.Printf("client time per round trip (incl. Read) in that run: %s over its first %d, %s over its last %d (target ≤ 1 ms at 10 turns and at 1 000 alike)\n",
		long.early.Round(time.Microsecond), gapWindow, long.late.Round(time.Microsecond), gapWindow)
	return nil
}

// gapWindow is how many round trips at each end of the long run give its
// client times.
const gapWindow = 10

// longResult is what the long run measures.
type longResult struct {
	rssKB int64
	wall  time.Duration
	// early and late are the median client times of the run's first and
	// last gapWindow round trips: from the end of a response to the next
	// request.
	early, late time.Duration
}

// resumeBig writes a session of n messages, then times `tack -r ID -p` from
// launch to its first request, for each of bins, which take turns run by
// run; it returns their medians, in the order of bins.
func resumeBig(work, repo string, bins []string, n, runs int) ([]time.Duration, error) {
	home := filepath.Join(work, "home-resume")
	cfg := filepath.Join(home, ".claude")
	real, _ := filepath.EvalSymlinks(repo)
	id := uuid.NewString()
	w := session.NewWriter(filepath.Join(cfg, "projects", session.Slug(real), id+".jsonl"),
		session.Meta{SessionID: id, Cwd: real, Version: "bench"}, "")
	stop := "end_turn"
	for i := 0; i < n/2; i++ {
		q := &protocol.User{Type: "user", UUID: uuid.NewString(), Message: llm.Message{Role: llm.RoleUser,
			Content: []llm.Block{llm.Text(fmt.Sprintf("question %d: what does function f%d in pkg/mod%d.go do, and is it tested?", i, i, i%50))}}}
		a := &protocol.Assistant{Type: "assistant", UUID: uuid.NewString(), Message: protocol.APIMessage{
			ID: fmt.Sprintf("msg_%d", i), Type: "message", Role: llm.RoleAssistant, Model: "claude-opus-5-5", StopReason: &stop,
			Content: []llm.Block{llm.Text(fmt.Sprintf("f%d parses the header and returns its fields; it is covered by TestF%d in pkg/mod%d_test.go.", i, i, i%50))}}}
		if err := w.Record(q); err != nil {
			return nil, err
		}
		if err := w.Record(a); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	srv, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("ok"))}, Loop: true,
		ByConversation: false, OnViolation: func(error) {}})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	times := make([][]time.Duration, len(bins))
	for i := 0; i < runs; i++ {
		for b, bin := range bins {
			before := len(srv.Requests())
			cmd := exec.Command(bin, "-p", "one more question", "-r", id)
			cmd.Dir = repo
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + srv.URL()}
			cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return nil, fmt.Errorf("%s, run %d: %w", bin, i, err)
			}
			reqs := srv.Requests()[before:]
			if len(reqs) == 0 {
				return nil, fmt.Errorf("%s, run %d made no request", bin, i)
			}
			if got := len(reqs[0].Messages); got < n+1 {
				return nil, fmt.Errorf("%s, run %d sent %d messages, want %d", bin, i, got, n+1)
			}
			times[b] = append(times[b], reqs[0].Received.Sub(start))
		}
	}
	medians := make([]time.Duration, len(bins))
	for b, ts := range times {
		slices.Sort(ts)
		medians[b] = ts[len(ts)/2]
	}
	return medians, nil
}

// longRun runs one session of turns tool round trips and returns its
// maximum RSS, its wall time and its client time per round trip near its
// start and near its end. It is started through bench/launch, as every
// measured program is: started from the harness, whose resident set holds
// the earlier scenarios' requests by then, its peak would read as the
// harness's.
func longRun(launcher, work, repo, tackPath, readTarget string, turns int) (longResult, error) {
	script := make([]llmtest.Turn, 0, turns+1)
	for i := 0; i < turns; i++ {
		script = append(script, llmtest.Reply(llmtest.Text(fmt.Sprintf("step %d", i)),
			llmtest.ToolUse("Read", map[string]any{"file_path": readTarget, "limit": 1000 + i})))
	}
	script = append(script, llmtest.Reply(llmtest.Text("done")))
	// The requests' bodies grow to megabytes: only their timings are kept.
	var (
		mu      sync.Mutex
		timings []llmtest.Request
	)
	srv, err := llmtest.NewServer(llmtest.Options{Turns: script, DiscardRequests: true, OnViolation: func(err error) {
		fmt.Fprintln(os.Stderr, err)
	}, OnAnswered: func(r llmtest.Request) {
		mu.Lock()
		defer mu.Unlock()
		timings = append(timings, llmtest.Request{TurnIndex: r.TurnIndex, Received: r.Received, Done: r.Done})
	}})
	if err != nil {
		return longResult{}, err
	}
	defer srv.Close()
	home := filepath.Join(work, "home-long")
	os.MkdirAll(home, 0o755)
	cmd := exec.Command(launcher, tackPath, "-p", "walk")
	cmd.Dir = repo
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + srv.URL()}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	rep, err := launched(cmd)
	if err != nil {
		return longResult{}, fmt.Errorf("%w: %s", err, out.String())
	}
	smp := rep.sample()
	mu.Lock()
	defer mu.Unlock()
	if len(timings) < 2*gapWindow+1 {
		return longResult{}, fmt.Errorf("%d requests answered, too few to time %d round trips at each end (want %d)", len(timings), gapWindow, turns+1)
	}
	return longResult{rssKB: smp.maxRSSKB, wall: smp.wall,
		early: roundTripGap(timings[:gapWindow+1]), late: roundTripGap(timings[len(timings)-gapWindow-1:])}, nil
}
