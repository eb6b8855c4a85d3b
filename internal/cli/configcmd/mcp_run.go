package configcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/mcp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
	"github.com/tackcode/tack/internal/tool"
)

// probeMCP connects to one configured server and reports its status, for
// `tack mcp list` and `get`.
func probeMCP(ctx context.Context, srv mcpconfig.Server) (status, detail string) {
	cwd, _ := os.Getwd()
	st := mcp.Probe(ctx, mcp.ConfigOf(&srv), mcp.Options{Env: os.Environ(), Dir: cwd, Limits: mcp.LimitsFromEnv(os.Getenv)})
	switch st.Status {
	case mcp.StatusConnected:
		return "✓ Connected", fmt.Sprintf("%d tools", st.Tools)
	case mcp.StatusNeedsAuth:
		return "⚠ Needs authentication", st.Error
	}
	return "✗ Failed to connect", st.Error
}

// callMCP is `tack mcp call`: it connects to one server, calls one of its
// tools and prints the result's text; a result that is an error exits 1.
func callMCP(ctx context.Context, stdio cmdio.IO, srv mcpconfig.Server, toolName string, input json.RawMessage) error {
	cwd, _ := os.Getwd()
	reg := tool.NewRegistry()
	scratch, err := os.MkdirTemp("", "tack-mcp-call-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	m := mcp.New(mcp.Options{Registry: reg, Env: os.Environ(), Dir: cwd, Limits: mcp.LimitsFromEnv(os.Getenv), ClientName: "tack"})
	defer m.Close()
	m.Start(ctx, []mcp.ServerConfig{mcp.ConfigOf(&srv)})
	m.WaitReady(ctx, mcp.LimitsFromEnv(os.Getenv).StartTimeout)
	for _, st := range m.Statuses() {
		if st.Status != mcp.StatusConnected {
			return fmt.Errorf("MCP server %s: %s %s", srv.Name, st.Status, st.Error)
		}
	}
	var target tool.Tool
	for _, t := range m.Tools() {
		if t.Name() == toolName || strings.HasSuffix(t.Name(), "__"+toolName) {
			target = t
		}
	}
	if target == nil {
		var names []string
		for _, t := range m.Tools() {
			names = append(names, t.Name())
		}
		slices.Sort(names)
		return fmt.Errorf("MCP server %s has no tool %q (it has: %s)", srv.Name, toolName, strings.Join(names, ", "))
	}
	env := &tool.Env{ProjectDir: cwd, ScratchDir: filepath.Join(scratch, "s")}
	res, err := target.Run(tool.WithToolUseID(ctx, "toolu_cli"), env, input)
	if err != nil {
		return err
	}
	for _, blk := range res.Content {
		switch blk.Type {
		case llm.TypeText:
			fmt.Fprintln(stdio.Out, blk.Text)
		case llm.TypeImage:
			fmt.Fprintf(stdio.Out, "[image %s, %d bytes base64]\n", blk.Source.MediaType, len(blk.Source.Data))
		}
	}
	if res.IsError {
		return &cmdio.ExitError{Code: 1}
	}
	return nil
}
