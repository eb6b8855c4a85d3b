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
	fmt.Fprintln(tw, "search\ttack\ttack cmd\trg\tgrep -r\ttack/rg\ttack cmd/rg\tgrep/rg\tfound tack/rg/grep\t")
	var ratios, execRatios []float64
	for _, c := range cases {
		contenders := []contender{
			{run: func() (int, error) { return runTack(ctx, g, root, c) }},
			{run: func() (int, error) { return countFound(tackCommand(self, root, c), c) }},
		}
		if rgErr == nil {
			contenders = append(contenders, contender{run: func() (int, error) { return countFound(rgCommand(root, c), c) }})
		}
		if grepErr == nil {
			contenders = append(contenders, contender{run: func() (int, error) { return countFound(grepCommand(root, c), c) }})
		}
		if err := race(contenders, runs); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		tack, tackExec := contenders[0], contenders[1]
		rg, grep := contender{time: -1}, contender{time: -1}
		if rgErr == nil {
			rg = contenders[2]
		}
		if grepErr == nil {
			grep = contenders[len(contenders)-1]
		}
		ratio, execRatio, grepRatio := "-", "-", "-"
		if rg.time > 0 {
			r := float64(tack.time) / float64(rg.time)
			ratios = append(ratios, r)
			ratio = fmt.Sprintf("%.2f×", r)
			re := float64(tackExec.time) / float64(rg.time)
			execRatios = append(execRatios, re)
			execRatio = fmt.Sprintf("%.2f×", re)
			if grep.time > 0 {
				grepRatio = fmt.Sprintf("%.2f×", float64(grep.time)/float64(rg.time))
			}
		}
		if tackExec.found != tack.found {
			return fmt.Errorf("%s: tack found %d in process, %d as a command", c, tack.found, tackExec.found)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%s/%s\t\n", c, ms(tack.time), ms(tackExec.time), ms(rg.time), ms(grep.time),
			ratio, execRatio, grepRatio, tack.found, count(rg.found, rgErr), count(grep.found, grepErr))
	}
	tw.Flush()
	if len(ratios) > 0 {
		fmt.Printf("\ntack/rg: median %.2f×, worst %.2f×; as a command: median %.2f×, worst %.2f×\n",
			medianOf(ratios), slices.Max(ratios), medianOf(execRatios), slices.Max(execRatios))
	}
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
	run   func() (found int, err error)
	time  time.Duration // median
	found int
}

// race runs each contender once to warm up, then runs them in turn, runs
// times, so that noise from other processes falls on all alike, and
// records each one's median wall time.
func race(cs []contender, runs int) error {
	times := make([][]float64, len(cs))
	for round := -1; round < runs; round++ {
		for i := range cs {
			start := time.Now()
			n, err := cs[i].run()
			if err != nil {
				return err
			}
			if round >= 0 {
				times[i] = append(times[i], float64(time.Since(start)))
			}
			cs[i].found = n
		}
	}
	for i := range cs {
		cs[i].time = time.Duration(medianOf(times[i]))
	}
	return nil
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
func countFound(cmd *exec.Cmd, c benchCase) (int, error) {
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
		return 0, fmt.Errorf("%s: %w: %s", cmd, err, stderr.String())
	}
	if out.sum && len(out.partial) > 0 {
		out.add(out.partial)
	}
	return out.n, nil
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

func ms(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
}

func count(n int, missing error) string {
	if missing != nil {
		return "-"
	}
	return fmt.Sprint(n)
}
