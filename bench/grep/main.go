package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == onceFlag {
		if err := once(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench/grep:", err)
			os.Exit(2)
		}
		return
	}
	root := flag.String("root", "", "tree to search (default $(go env GOROOT)/src)")
	runs := flag.Int("runs", 9, "timed runs of each search per tool, after one warm-up run")
	flag.Parse()
	if err := run(*root, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/grep:", err)
		os.Exit(1)
	}
}

func run(root string, runs int) error {
	if root == "" {
		var err error
		if root, err = goSrc(); err != nil {
			return err
		}
	}
	ctx := context.Background()
	g := grepTool()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	_, rgErr := exec.LookPath("rg")
	_, grepErr := exec.LookPath("grep")

	fmt.Printf("root %s, %d runs each (median), GOMAXPROCS %d\n", root, runs, runtime.GOMAXPROCS(0))
	if rgErr != nil {
		fmt.Println("rg not installed: skipped (apt-get install ripgrep)")
	} else if v, err := exec.Command("rg", "--version").Output(); err == nil {
		fmt.Println(strings.SplitN(string(v), "\n", 2)[0])
	}
	if grepErr != nil {
		fmt.Println("grep not installed: skipped")
	}
	fmt.Println()

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "search\ttack\ttack cmd\trg\tgrep -r\ttack/rg\tcmd/rg\tgrep/rg\tCPU tack/rg\tCPU cmd/rg\tfound tack/rg/grep\t")
	var ratios, execRatios, cpuRatios []float64
	for _, c := range cases {
		contenders := []*contender{
			{run: func() (int, time.Duration, error) {
				return inProcess(func() (int, error) { return runTack(ctx, g, root, c) })
			}},
			{run: func() (int, time.Duration, error) { return countFound(tackCommand(self, root, c), c) }},
		}
		rg, grep := &contender{}, &contender{}
		if rgErr == nil {
			rg.run = func() (int, time.Duration, error) { return countFound(rgCommand(root, c), c) }
			contenders = append(contenders, rg)
		}
		if grepErr == nil {
			grep.run = func() (int, time.Duration, error) { return countFound(grepCommand(root, c), c) }
			contenders = append(contenders, grep)
		}
		if err := race(contenders, runs); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		tack, tackExec := contenders[0], contenders[1]
		if tackExec.found != tack.found {
			return fmt.Errorf("%s: tack found %d in process, %d as a command", c, tack.found, tackExec.found)
		}
		r, re, rgr := tack.wallRatio(rg), tackExec.wallRatio(rg), grep.wallRatio(rg)
		rc, rec := tack.cpuRatio(rg), tackExec.cpuRatio(rg)
		if rg.run != nil {
			ratios, execRatios, cpuRatios = append(ratios, r), append(execRatios, re), append(cpuRatios, rec)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%s/%s\t\n", c,
			tack.median(), tackExec.median(), rg.median(), grep.median(),
			times(r), times(re), times(rgr), times(rc), times(rec),
			tack.found, count(rg), count(grep))
	}
	tw.Flush()
	if len(ratios) > 0 {
		fmt.Printf("\ntack/rg: median %.2f×, worst %.2f×; as a command: median %.2f×, worst %.2f×; CPU as a command: median %.2f×, worst %.2f×\n",
			medianOf(ratios), slices.Max(ratios), medianOf(execRatios), slices.Max(execRatios), medianOf(cpuRatios), slices.Max(cpuRatios))
	}
	fmt.Println("Ratios are medians of per-round ratios: each round runs every tool once, in turn, so load from other processes falls on all alike.")
	fmt.Println("CPU is user+system time: of the process for commands, of this process's run for tack in process.")
	fmt.Println("tack: Grep called in process; tack cmd: this program run as a command doing one search and printing it.")
	fmt.Println("rg, grep and tack cmd are timed as commands with their output read through a pipe.")
	return nil
}

// goSrc returns $(go env GOROOT)/src.
func goSrc() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	return strings.TrimSpace(string(out)) + "/src", nil
}

// contender is one tool's run of a search, and what it measured.
type contender struct {
	// run runs the search once and returns what it found and the CPU
	// time it took; nil for a tool that is not installed.
	run   func() (found int, cpu time.Duration, err error)
	wall  []float64 // per round
	cpu   []float64 // per round
	found int
}

// race runs each contender once to warm up, then runs them in turn, runs
// times, recording each round's wall and CPU time.
func race(cs []*contender, runs int) error {
	for round := -1; round < runs; round++ {
		for _, c := range cs {
			start := time.Now()
			n, cpu, err := c.run()
			if err != nil {
				return err
			}
			if round >= 0 {
				c.wall = append(c.wall, float64(time.Since(start)))
				c.cpu = append(c.cpu, float64(cpu))
			}
			c.found = n
		}
	}
	return nil
}

func (c *contender) median() string {
	if len(c.wall) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fms", medianOf(c.wall)/float64(time.Millisecond))
}

// wallRatio is the median over rounds of c's wall time over base's in the
// same round; 0 when either did not run.
func (c *contender) wallRatio(base *contender) float64 { return pairedRatio(c.wall, base.wall) }

// cpuRatio is wallRatio for CPU time.
func (c *contender) cpuRatio(base *contender) float64 { return pairedRatio(c.cpu, base.cpu) }

func pairedRatio(xs, base []float64) float64 {
	if len(xs) == 0 || len(xs) != len(base) {
		return 0
	}
	r := make([]float64, len(xs))
	for i := range xs {
		r[i] = xs[i] / base[i]
	}
	return medianOf(r)
}

func times(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", r)
}

// inProcess runs f, a search in this process, and measures the CPU time
// the process spent meanwhile.
func inProcess(f func() (int, error)) (int, time.Duration, error) {
	before := processCPU()
	n, err := f()
	return n, processCPU() - before, err
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// countFound runs cmd, a search for c, and counts what it found: the
// lines it prints, or in count mode the total of the per-file counts it
// prints. Output goes through a pipe, not /dev/null, which ripgrep would
// notice and stop early.
func countFound(cmd *exec.Cmd, c benchCase) (int, time.Duration, error) {
	out := lineCounter{sum: c.mode == "count"}
	cmd.Stdout = &out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		err = nil // no match
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w: %s", cmd, err, stderr.String())
	}
	if out.sum && len(out.partial) > 0 {
		out.add(out.partial)
	}
	return out.n, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// lineCounter counts lines written to it, or with sum adds up the
// numbers after the last colon of each line ("path:count").
type lineCounter struct {
	n       int
	sum     bool
	partial []byte
}

func (c *lineCounter) Write(p []byte) (int, error) {
	if !c.sum {
		c.n += bytes.Count(p, []byte{'\n'})
		return len(p), nil
	}
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		c.add(c.partial[:i])
		c.partial = c.partial[i+1:]
	}
	c.partial = append([]byte(nil), c.partial...)
	return len(p), nil
}

func (c *lineCounter) add(line []byte) {
	n, _ := strconv.Atoi(string(line[bytes.LastIndexByte(line, ':')+1:]))
	c.n += n
}

var _ io.Writer = (*lineCounter)(nil)

func count(c *contender) string {
	if c.run == nil {
		return "-"
	}
	return fmt.Sprint(c.found)
}
