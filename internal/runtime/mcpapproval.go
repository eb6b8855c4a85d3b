package runtime

import (
	"fmt"
	"os"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// A project's .mcp.json servers start only once the user approved them.
// An interactive surface asks before the session starts, with these
// functions, and records the answer where `tack mcp approve` does (this
// project's entry of ~/.claude.json); print mode leaves them pending.

// PendingMCPServer is a server of the project's .mcp.json the user has
// neither approved nor refused.
type PendingMCPServer struct {
	Name string
	// Source is where it is defined (file:line:col); Launch what it
	// runs or reaches (the command line, or the URL).
	Source, Launch string
}

// PendingMCPServers lists the project servers a session with cfg would
// leave waiting for approval: none when the folder's code is off
// (Untrusted) or only --mcp-config is read.
func PendingMCPServers(cfg Config) ([]PendingMCPServer, error) {
	if cfg.Untrusted || cfg.StrictMCPConfig {
		return nil, nil
	}
	pl, err := placeOf(cfg)
	if err != nil {
		return nil, err
	}
	getenv := optionsEnv(cfg.Env)
	settings, err := readSettings(cfg, pl, getenv)
	if err != nil {
		return nil, err
	}
	files, err := mcpFiles(getenv, pl)
	if err != nil {
		return nil, err
	}
	set, err := mcpconfig.Load(mcpconfig.Options{
		Files:     files,
		LookupEnv: func(k string) (string, bool) { v := getenv(k); return v, v != "" || os.Getenv(k) != "" },
		Settings:  approvalSettings(settings),
	})
	if err != nil {
		return nil, fmt.Errorf("read the MCP configuration: %w", err)
	}
	var out []PendingMCPServer
	for _, srv := range set.Plan().Pending {
		launch := srv.URL
		if srv.Type == mcpconfig.TypeStdio {
			launch = strings.Join(append([]string{srv.Command}, srv.Args...), " ")
		}
		out = append(out, PendingMCPServer{Name: srv.Name, Source: srv.Source.String(), Launch: launch})
	}
	return out, nil
}

// DecideMCPServer records the user's answer for the project server name:
// approved or refused.
func DecideMCPServer(cfg Config, name string, approved bool) error {
	files, err := projectFiles(cfg)
	if err != nil {
		return err
	}
	return files.SetApproval(name, approved)
}

// ApproveAllMCPServers records that every server of the project's
// .mcp.json, now and to come, may start.
func ApproveAllMCPServers(cfg Config) error {
	files, err := projectFiles(cfg)
	if err != nil {
		return err
	}
	return files.ApproveAllProjectServers()
}

func projectFiles(cfg Config) (mcpconfig.Files, error) {
	pl, err := placeOf(cfg)
	if err != nil {
		return mcpconfig.Files{}, err
	}
	return mcpFiles(optionsEnv(cfg.Env), pl)
}

// approvalSettings are the keys of the merged settings that approve or
// refuse project servers.
func approvalSettings(settings *config.Merged) mcpconfig.ApprovalSettings {
	return mcpconfig.ApprovalSettings{
		EnableAllProjectMcpServers: settings.EnableAllProjectMcpServers != nil && *settings.EnableAllProjectMcpServers,
		EnabledMcpjsonServers:      config.Texts(settings.EnabledMcpjsonServers),
		DisabledMcpjsonServers:     config.Texts(settings.DisabledMcpjsonServers),
	}
}
