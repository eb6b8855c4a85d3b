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
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	root := flag.String("root", "", "tree to search (default $(go env GOROOT)/src)")
	runs := flag.Int("runs", 7, "timed runs of each search per tool, after one warm-up run")
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
	fmt.Fprintln(tw, "search\ttack\trg\tgrep -r\ttack/rg\tgrep/rg\tfound tack/rg/grep\t")
	var ratios []float64
	for _, c := range cases {
		var nTack, nRg, nGrep int
		tTack, err := median(runs, func() error {
			var err error
			nTack, err = runTack(ctx, g, root, c)
			return err
		})
		if err != nil {
			return err
		}
		tRg, tGrep := time.Duration(-1), time.Duration(-1)
		if rgErr == nil {
			if tRg, err = median(runs, func() (err error) { nRg, err = countLines(rgCommand(root, c)); return err }); err != nil {
				return err
			}
		}
		if grepErr == nil {
			if tGrep, err = median(runs, func() (err error) { nGrep, err = countLines(grepCommand(root, c)); return err }); err != nil {
				return err
			}
		}
		ratio := "-"
		if tRg > 0 {
			r := float64(tTack) / float64(tRg)
			ratios = append(ratios, r)
			ratio = fmt.Sprintf("%.2f×", r)
		}
		grepRatio := "-"
		if tRg > 0 && tGrep > 0 {
			grepRatio = fmt.Sprintf("%.2f×", float64(tGrep)/float64(tRg))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%s/%s\t\n", c, ms(tTack), ms(tRg), ms(tGrep), ratio, grepRatio,
			nTack, count(nRg, rgErr), count(nGrep, grepErr))
	}
	tw.Flush()
	if len(ratios) > 0 {
		fmt.Printf("\ntack/rg: median %.2f×, worst %.2f×\n", medianOf(ratios), slices.Max(ratios))
	}
	fmt.Println("tack runs in process (no process start); rg and grep are timed as commands with output read through a pipe.")
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

// median runs f once to warm up, then runs more times, and returns the
// median wall time.
func median(runs int, f func() error) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	times := make([]float64, runs)
	for i := range times {
		start := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		times[i] = float64(time.Since(start))
	}
	return time.Duration(medianOf(times)), nil
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// countLines runs cmd and counts the lines it prints. Output goes through
// a pipe, not /dev/null, which ripgrep would notice and stop early.
func countLines(cmd *exec.Cmd) (int, error) {
	var c lineCounter
	cmd.Stdout = &c
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
	return c.n, nil
}

type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
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
