package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
	"github.com/tackcode/tack/internal/mcp"
)

// mcpRuns measures the start-up cost of MCP servers: launch to the first
// API request with five real servers (they start in parallel, so this
// should be about one server's own start), and with a server that never
// answers (held back by the start-up deadline at most).
func mcpRuns(work, repo, tackPath string, runs int) error {
	js, err := filepath.Abs(filepath.Join("test", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(js); err != nil {
		fmt.Println("\nMCP start-up: skipped (test/mcp/node_modules is missing: run scripts/test)")
		return nil
	}
	server := mcp.ServerConfig{Name: "everything", Command: "node", Args: []string{js, "stdio"}}
	var own []time.Duration
	for range runs {
		t0 := time.Now()
		st := mcp.Probe(context.Background(), server, mcp.Options{Env: os.Environ(), Dir: repo, Limits: mcp.LimitsFromEnv(os.Getenv)})
		if st.Status != mcp.StatusConnected {
			return fmt.Errorf("probe: %s %s", st.Status, st.Error)
		}
		own = append(own, time.Since(t0))
	}
	// The same five servers started at once, without tack: on a machine
	// with fewer cores than servers, each one's own start is slower than
	// alone, and the slowest is what tack can at best match.
	var parallel []time.Duration
	for range runs {
		t0 := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var slowest time.Duration
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mcp.Probe(context.Background(), server, mcp.Options{Env: os.Environ(), Dir: repo, Limits: mcp.LimitsFromEnv(os.Getenv)})
				d := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
		parallel = append(parallel, slowest)
	}
	five := map[string]any{}
	for i := range 5 {
		five[fmt.Sprintf("ev%d", i)] = map[string]any{"command": "node", "args": []string{js, "stdio"}}
	}
	silent := map[string]any{"silent": map[string]any{"command": "sleep", "args": []string{"600"}}}
	none, err := firstRequest(work, repo, tackPath, nil, runs)
	if err != nil {
		return err
	}
	withFive, err := firstRequest(work, repo, tackPath, five, runs)
	if err != nil {
		return err
	}
	withSilent, err := firstRequest(work, repo, tackPath, silent, runs)
	if err != nil {
		return err
	}
	fmt.Printf("\nMCP start-up, launch to first API request (median of %d):\n", runs)
	fmt.Printf("  no MCP server:                          %s\n", median(none))
	fmt.Printf("  one server-everything's own start:      %s (connect, initialize, list tools)\n", median(own))
	fmt.Printf("  slowest of 5 started at once, no tack:  %s\n", median(parallel))
	fmt.Printf("  tack with 5 server-everything:          %s (target: no slower than the slowest server's own start)\n", median(withFive))
	fmt.Printf("  tack with 1 server that never answers:  %s (target: at most the %s deadline later than no server)\n",
		median(withSilent), agent.DefaultMCPStartupDeadline)
	return nil
}

// firstRequest times tack from launch to its first API request with the
// given MCP servers.
func firstRequest(work, repo, tackPath string, servers map[string]any, runs int) ([]time.Duration, error) {
	srv, err := llmtest.NewServer(llmtest.Options{Turns: []llmtest.Turn{llmtest.Reply(llmtest.Text("hi"))}, Loop: true,
		ByConversation: true, OnViolation: func(error) {}})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	home := filepath.Join(work, "home-mcp")
	os.MkdirAll(home, 0o755)
	args := []string{"-p", "say hi", "--no-session-persistence"}
	if servers != nil {
		cfg, _ := json.Marshal(map[string]any{"mcpServers": servers})
		args = append(args, "--mcp-config", string(cfg))
	}
	var out []time.Duration
	for range runs {
		before := len(srv.Requests())
		cmd := exec.Command(tackPath, args...)
		cmd.Dir = repo
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_API_KEY=bench", "ANTHROPIC_BASE_URL=" + srv.URL()}
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return nil, err
		}
		reqs := srv.Requests()[before:]
		if len(reqs) == 0 {
			return nil, fmt.Errorf("no request")
		}
		out = append(out, reqs[0].Received.Sub(start))
	}
	return out, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(100 * time.Microsecond)
}
