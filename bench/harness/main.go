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
// Beside tack it runs the floor programs of bench/floor, built static: a
// minimal streamed request with net/http for `-p "say hi"`, a hello for
// `--version`; tack's figures are printed as a ratio to theirs. It runs
// them twice: as they are, and built with -tags floorlibs, linking every
// package tack links but its own (bench/floor/libs). The second pair is
// what those packages cost any program that links them; tack/libs is what
// tack's own code adds.
//
// With -baseline naming another tack binary (an earlier commit's, say), it
// runs the same scenarios on that one too and prints tack/baseline, so that
// a change's cost to start-up and memory is read from one run.
//
// Usage: go run ./bench/harness [-runs 15] [-roundtrips 20] [-tack PATH] [-baseline PATH] [-claude PATH]
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
	baselinePath := flag.String("baseline", "", "another tack binary to compare with, e.g. an earlier commit's")
	flag.Parse()
	if err := run(*runs, *roundTrips, *tackPath, *baselinePath, *claudePath); err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}

// subject is one program under measurement.
type subject struct {
	name string
	// ratio is how its figure is compared with tack's: "claude/tack"
	// (how many times tack's), "tack/floor" (how far tack is from the
	// least a Go program can do) or "tack/baseline" (what a change costs).
	ratio string
	bin   string
	args  []string // before the prompt
	env   []string
	// sayHiOnly is a subject that cannot run tools: the round-trip
	// scenario is not run on it.
	sayHiOnly bool
	// hello is the program a floor subject runs for the --version table;
	// "" for a subject that answers --version itself.
	hello string
}

// perTack reports whether s's ratio has tack's figure on top.
func (s subject) perTack() bool { return strings.HasPrefix(s.ratio, "tack/") }

// sample is one run of a scenario.
type sample struct {
	toFirstRequest time.Duration
	wall           time.Duration
	cpu            time.Duration
	maxRSSKB       int64
	firstBytes     int
	lastByteToExit time.Duration // from the end of the last response to the exit
	gap            time.Duration // median client time per round trip
}

func run(runs, roundTrips int, tackPath, baselinePath, claudePath string) error {
	work, err := os.MkdirTemp("", "tack-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if tackPath == "" {
		if tackPath, err = buildStatic(work, "./cmd/tack"); err != nil { // as the README builds it
			return err
		}
	}
	floorStream, err := buildStatic(work, "./bench/floor/stream")
	if err != nil {
		return err
	}
	floorHello, err := buildStatic(work, "./bench/floor/hello")
	if err != nil {
		return err
	}
	// The same two programs linking the packages tack links but its own
	// (bench/floor/libs): what those packages cost any program.
	libsStream, err := buildStatic(work, "./bench/floor/stream", "floorlibs")
	if err != nil {
		return err
	}
	libsHello, err := buildStatic(work, "./bench/floor/hello", "floorlibs")
	if err != nil {
		return err
	}
	launcher, err := buildStatic(work, "./bench/launch")
	if err != nil {
		return err
	}
	repo := filepath.Join(work, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return err
	}
	target := filepath.Join(repo, "notes.txt")
	if err := os.WriteFile(target, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		return err
	}

	subjects := []subject{{name: "tack", bin: tackPath, args: []string{"-p"}},
		{name: "floor", ratio: "tack/floor", bin: floorStream, sayHiOnly: true},
		{name: "libs", ratio: "tack/libs", bin: libsStream, sayHiOnly: true, hello: libsHello}}
	if baselinePath != "" {
		subjects = append(subjects, subject{name: "baseline", ratio: "tack/baseline", bin: baselinePath, args: []string{"-p"}})
	}
	if claudePath != "" {
		subjects = append(subjects, subject{name: "claude", ratio: "claude/tack", bin: claudePath, args: []string{"-p"},
			env: []string{"DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
				"DISABLE_ERROR_REPORTING=1", "DISABLE_BUG_COMMAND=1"}})
	}

	readCost := measureRead(target, 200)
	fmt.Printf("runs per scenario: %d; round trips per run: %d; in-process Read of a 3-line file: %s (median)\n",
		runs, roundTrips, readCost)
	if floor, err := launchFloor(launcher, floorHello); err == nil {
		fmt.Printf("each program is started by bench/launch, whose own peak RSS, %s, is the lowest RSS it can report\n\n", mib(float64(floor)/1024))
	}

	hi, err := scenario(launcher, subjects, work, repo, "say hi", []llmtest.Turn{llmtest.Reply(llmtest.Text("hi"))}, runs)
	if err != nil {
		return fmt.Errorf("say hi: %w", err)
	}
	turns := make([]llmtest.Turn, 0, roundTrips+1)
	for i := range roundTrips {
		// Each call differs (limit), as a real session's would: the same
		// call over and over is what loop detection stops.
		turns = append(turns, llmtest.Reply(llmtest.ToolUse("Read", map[string]any{"file_path": target, "limit": 100 + i})))
	}
	turns = append(turns, llmtest.Reply(llmtest.Text("done")))
	rt, err := scenario(launcher, slices.DeleteFunc(slices.Clone(subjects), func(s subject) bool { return s.sayHiOnly }),
		work, repo, "read notes.txt", turns, runs)
	if err != nil {
		return fmt.Errorf("round trips: %w", err)
	}
	results := map[string][2][]sample{}
	for _, s := range subjects {
		results[s.name] = [2][]sample{hi[s.name], rt[s.name]}
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "metric (median)\ttack\t"
	for _, o := range subjects[1:] {
		header += o.name + "\t" + o.ratio + "\t"
	}
	fmt.Fprintln(tw, header+"target\t")
	rows := []struct {
		name   string
		target string
		get    func(s []sample) float64
		format func(float64) string
		which  int
	}{
		{"launch to first request", "≤ 5 ms", func(s []sample) float64 {
			return medianDur(s, func(x sample) time.Duration { return x.toFirstRequest })
		}, ms, 0},
		{"last response byte to exit", "≤ 2 ms", func(s []sample) float64 {
			return medianDur(s, func(x sample) time.Duration { return x.lastByteToExit })
		}, ms, 0},
		{"wall time, -p \"say hi\"", "", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.wall }) }, ms, 0},
		{"CPU time, -p \"say hi\"", "≤ 2× floor", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.cpu }) }, ms, 0},
		{"max RSS, -p \"say hi\"", "≤ 12 MB", func(s []sample) float64 { return medianInt(s, func(x sample) int64 { return x.maxRSSKB }) / 1024 }, mib, 0},
		{"first request size", "≤ 25 KB", func(s []sample) float64 {
			return medianInt(s, func(x sample) int64 { return int64(x.firstBytes) }) / 1024
		}, kb, 0},
		{"client time per round trip (incl. Read)", "", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.gap }) }, ms, 1},
	}
	for _, r := range rows {
		t := r.get(results["tack"][r.which])
		line := fmt.Sprintf("%s\t%s\t", r.name, r.format(t))
		for _, o := range subjects[1:] {
			if len(results[o.name][r.which]) == 0 {
				line += "–\t\t"
				continue
			}
			line += compare(o, t, r.get(results[o.name][r.which]), r.format)
		}
		fmt.Fprintln(tw, line+r.target+"\t")
	}
	gap := time.Duration(medianDur(results["tack"][1], func(x sample) time.Duration { return x.gap }) * float64(time.Millisecond))
	line := fmt.Sprintf("tack harness per round trip (excl. Read)\t%s\t", ms(float64(gap-readCost)/float64(time.Millisecond)))
	line += strings.Repeat("\t\t", len(subjects)-1)
	fmt.Fprintln(tw, line+"≤ 1 ms\t")
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := versionRuns(launcher, subjects, floorHello, runs); err != nil {
		return err
	}
	if err := printInits(tackPath, 10); err != nil {
		return err
	}
	if err := longRuns(launcher, work, repo, tackPath, baselinePath, target); err != nil {
		return err
	}
	return mcpRuns(work, repo, tackPath, 5)
}

// scenario runs prompt runs times with each subject, each against a fresh
// fake API of its own serving turns, and returns their samples by name.
// The subjects take turns run by run (tack, the floor, the baseline, tack
// again…), so that a machine whose speed drifts during the call moves
// their figures alike, as farm-bench's pairs do.
func scenario(launcher string, subjects []subject, work, repo, prompt string, turns []llmtest.Turn, runs int) (map[string][]sample, error) {
	runners := make([]*runner, 0, len(subjects))
	defer func() {
		for _, r := range runners {
			r.close()
		}
	}()
	for _, s := range subjects {
		r, err := newRunner(launcher, s, work, repo, prompt, turns)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		runners = append(runners, r)
	}
	out := map[string][]sample{}
	for i := range runs {
		for _, r := range runners {
			smp, err := r.run(i)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.s.name, err)
			}
			out[r.s.name] = append(out[r.s.name], smp)
		}
	}
	return out, nil
}

// runner runs one subject's scenario against its own fake API.
type runner struct {
	launcher, repo, prompt string
	s                      subject
	srv                    *llmtest.Server
	home                   string
	violations             []string
}

func newRunner(launcher string, s subject, work, repo, prompt string, turns []llmtest.Turn) (*runner, error) {
	r := &runner{launcher: launcher, repo: repo, prompt: prompt, s: s, home: filepath.Join(work, "home-"+s.name)}
	srv, err := llmtest.NewServer(llmtest.Options{
		Turns: turns, ByConversation: true, Loop: true, Lenient: s.name == "claude" || s.sayHiOnly,
		OnViolation: func(err error) {
			r.violations = append(r.violations, err.Error())
		},
	})
	if err != nil {
		return nil, err
	}
	r.srv = srv
	if err := os.MkdirAll(r.home, 0o755); err != nil {
		srv.Close()
		return nil, err
	}
	return r, nil
}

func (r *runner) close() {
	r.srv.Close()
	if len(r.violations) > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d requests differed from tack's invariants, e.g. %s\n", r.s.name, len(r.violations), r.violations[0])
	}
}

// run is the subject's run number i.
func (r *runner) run(i int) (sample, error) {
	s, srv := r.s, r.srv
	before := len(srv.Requests())
	cmd := exec.Command(r.launcher, append(append([]string{s.bin}, s.args...), r.prompt)...)
	cmd.Dir = r.repo
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + r.home, "SHELL=/bin/bash", "IS_SANDBOX=1",
		"ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + srv.URL(),
	}, s.env...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	rep, err := launched(cmd)
	if err != nil {
		return sample{}, fmt.Errorf("run %d: %w\n%s", i, err, stderr.String())
	}
	reqs := srv.Requests()[before:]
	reqs = slices.DeleteFunc(reqs, func(r llmtest.Request) bool { return r.Path != "/v1/messages" })
	if len(reqs) == 0 {
		return sample{}, fmt.Errorf("run %d made no request\n%s", i, stderr.String())
	}
	smp := rep.sample()
	smp.toFirstRequest = reqs[0].Received.Sub(rep.start())
	smp.lastByteToExit = rep.exit().Sub(reqs[len(reqs)-1].Done)
	smp.firstBytes = len(reqs[0].Body)
	smp.gap = roundTripGap(reqs)
	return smp, nil
}

// compare is the cells of o's figure c beside tack's t: the figure and
// the ratio o.ratio names.
func compare(o subject, t, c float64, format func(float64) string) string {
	if o.perTack() {
		return fmt.Sprintf("%s\t%.2f×\t", format(c), t/c)
	}
	return fmt.Sprintf("%s\t%.1f×\t", format(c), c/t)
}

// versionRuns times `--version` of each subject that has one, and the
// static hello as its floor, and prints them as a second table.
func versionRuns(launcher string, subjects []subject, hello string, runs int) error {
	fmt.Println()
	others := []subject{{name: "floor", ratio: "tack/floor", bin: hello, hello: hello}}
	for _, s := range subjects[1:] {
		switch {
		case s.hello != "":
			others = append(others, subject{name: s.name, ratio: s.ratio, bin: s.hello, hello: s.hello})
		case !s.sayHiOnly:
			others = append(others, s)
		}
	}
	// The subjects take turns run by run, as in scenario.
	got := map[string][]sample{}
	for range runs {
		for _, s := range append([]subject{subjects[0]}, others...) {
			args := []string{"--version"}
			if s.hello != "" {
				args = nil
			}
			cmd := exec.Command(launcher, append([]string{s.bin}, args...)...)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, s.env...)
			rep, err := launched(cmd)
			if err != nil {
				return fmt.Errorf("%s --version: %w", s.name, err)
			}
			got[s.name] = append(got[s.name], rep.sample())
		}
	}
	t := got[subjects[0].name]
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "--version (median)\ttack\t"
	for _, o := range others {
		header += o.name + "\t" + o.ratio + "\t"
	}
	fmt.Fprintln(tw, header+"target\t")
	for _, r := range []struct {
		name, target string
		get          func(s []sample) float64
		format       func(float64) string
	}{
		{"wall time", "", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.wall }) }, ms},
		{"CPU time", "≤ 2× floor", func(s []sample) float64 { return medianDur(s, func(x sample) time.Duration { return x.cpu }) }, ms},
		{"max RSS", "≤ 10 MB", func(s []sample) float64 { return medianInt(s, func(x sample) int64 { return x.maxRSSKB }) / 1024 }, mib},
	} {
		tv := r.get(t)
		line := fmt.Sprintf("%s\t%s\t", r.name, r.format(tv))
		for _, o := range others {
			line += compare(o, tv, r.get(got[o.name]), r.format)
		}
		fmt.Fprintln(tw, line+r.target+"\t")
	}
	return tw.Flush()
}

// buildStatic builds the package pkg of this module into work, with
// CGO_ENABLED=0 as the README builds tack, and with the build tags tags.
func buildStatic(work, pkg string, tags ...string) (string, error) {
	bin := filepath.Join(work, strings.Join(append([]string{filepath.Base(pkg)}, tags...), "-"))
	build := exec.Command("go", "build", "-tags", strings.Join(tags, ","), "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	return bin, nil
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

// launchReport is the line bench/launch writes for the run it watched.
type launchReport struct {
	StartUnixNano int64 `json:"start_unix_nano"`
	ExitUnixNano  int64 `json:"exit_unix_nano"`
	UserNanos     int64 `json:"user_nanos"`
	SystemNanos   int64 `json:"system_nanos"`
	MaxRSSKB      int64 `json:"max_rss_kb"`
	SelfMaxRSSKB  int64 `json:"self_max_rss_kb"`
	ExitCode      int   `json:"exit_code"`
}

func (r launchReport) start() time.Time { return time.Unix(0, r.StartUnixNano) }
func (r launchReport) exit() time.Time  { return time.Unix(0, r.ExitUnixNano) }

func (r launchReport) sample() sample {
	return sample{wall: r.exit().Sub(r.start()), cpu: time.Duration(r.UserNanos + r.SystemNanos), maxRSSKB: r.MaxRSSKB}
}

// launched runs cmd, a bench/launch command line, within two minutes, and
// returns launch's report of the program it started.
func launched(cmd *exec.Cmd) (launchReport, error) {
	var rep launchReport
	r, w, err := os.Pipe()
	if err != nil {
		return rep, err
	}
	defer r.Close()
	cmd.ExtraFiles = []*os.File{w}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return rep, err
	}
	line := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(r); line <- b }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := waitCtx(ctx, cmd); err != nil {
		return rep, err
	}
	if err := json.Unmarshal(<-line, &rep); err != nil {
		return rep, fmt.Errorf("launch report: %w", err)
	}
	if rep.ExitCode != 0 {
		return rep, fmt.Errorf("exit status %d", rep.ExitCode)
	}
	return rep, nil
}

// launchFloor is bench/launch's own peak RSS in KB.
func launchFloor(launcher, hello string) (int64, error) {
	rep, err := launched(exec.Command(launcher, hello))
	return rep.SelfMaxRSSKB, err
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
