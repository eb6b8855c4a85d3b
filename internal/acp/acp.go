// Package acp is the `tack acp` surface: an Agent Client Protocol agent
// over stdio (on github.com/coder/acp-go-sdk), so that editors speaking ACP
// (Zed, JetBrains, Neovim and Emacs clients) run tack with no adapter in
// between. Each ACP session is an agent.Client: prompts become its runs, its
// messages become session/update notifications (message and thought chunks,
// tool calls with their kind, locations and diffs, plans from the task
// list), calls that need approval become session/request_permission, and
// tack's permission modes are the session's modes.
//
// Like the other surfaces it is written against the public SDK only.
package acp

import (
	"context"
	"io"
	"log/slog"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// Options configure Serve.
type Options struct {
	// Base are the options every session starts from (credentials in Env,
	// model, settings, permission mode); session/new and session/load add
	// the working directory and the client's MCP servers.
	Base agent.Options
	// Version is what initialize reports as the agent's version.
	Version string
	// Logger receives the connection's diagnostics; nil discards them.
	Logger *slog.Logger
}

// Serve answers the client on in and out until it disconnects or ctx
// ends, then closes every session it opened.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	s := newServer(ctx, opts)
	conn := sdk.NewAgentSideConnection(s, out, in)
	if opts.Logger != nil {
		conn.SetLogger(opts.Logger)
	}
	s.conn = conn
	close(s.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	s.closeAll()
	return nil
}
