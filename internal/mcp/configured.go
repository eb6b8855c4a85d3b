package mcp

import "github.com/tackcode/tack/internal/mcp/mcpconfig"

// ConfigOf is a server of the configuration files (mcpconfig) as the
// Manager starts it.
func ConfigOf(srv *mcpconfig.Server) ServerConfig {
	return ServerConfig{Name: srv.Name, Type: string(srv.Type), Command: srv.Command, Args: srv.Args,
		Env: srv.Env, URL: srv.URL, Headers: srv.Headers, Scope: string(srv.Scope), Disabled: srv.Disabled}
}
