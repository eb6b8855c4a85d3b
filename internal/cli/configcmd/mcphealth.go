package configcmd

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/tackcode/tack/internal/cli/cmdio"
)

// MCPHealth is one configured MCP server and how it answered, for `tack
// doctor`.
type MCPHealth struct {
	Name string
	// Where is its scope and file.
	Where string
	// Verdict is "ok" (connected), "warn" (not started: disabled, awaiting
	// approval, needing authentication) or "fail".
	Verdict string
	// Status and Detail are what `tack mcp list` shows for it.
	Status, Detail string
}

// CheckMCPServers starts or connects every MCP server configured for the
// working directory, as `tack mcp list` does (in parallel, each within
// the same timeout), and reports each; problems are the configuration's
// own (a malformed .mcp.json).
func CheckMCPServers(ctx context.Context, stdio cmdio.IO) (servers []MCPHealth, problems []error, err error) {
	set, _, err := loadMCP(stdio)
	if err != nil {
		return nil, nil, err
	}
	list := set.Servers()
	out := make([]MCPHealth, len(list))
	var wg sync.WaitGroup
	for i, srv := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, detail := status(ctx, set, srv, probeMCP)
			out[i] = MCPHealth{Name: srv.Name, Where: fmt.Sprintf("%s · %s", srv.Scope, srv.Source), Status: st, Detail: detail, Verdict: mcpVerdict(st)}
		}()
	}
	wg.Wait()
	for _, p := range set.Problems() {
		problems = append(problems, p)
	}
	return out, problems, nil
}

// mcpVerdict reads the mark `tack mcp list` gives a status.
func mcpVerdict(status string) string {
	switch {
	case strings.HasPrefix(status, "✓"):
		return "ok"
	case strings.HasPrefix(status, "✗"):
		return "fail"
	}
	return "warn"
}
