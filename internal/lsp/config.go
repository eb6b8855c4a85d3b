// Package lsp runs language servers for a session: configured in Claude
// Code's format (settings' and plugins' lspServers, a plugin's .lsp.json),
// started lazily the first time a file of their language is touched, and
// restarted within limits when they crash.
package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ServerConfig is one entry of an lspServers map, with Claude Code's fields.
type ServerConfig struct {
	Name                  string            `json:"-"`
	Source                string            `json:"-"` // file the entry came from, for messages
	Command               string            `json:"command"`
	Args                  []string          `json:"args,omitempty"`
	ExtensionToLanguage   map[string]string `json:"extensionToLanguage"`
	Env                   map[string]string `json:"env,omitempty"`
	InitializationOptions json.RawMessage   `json:"initializationOptions,omitempty"`
	Settings              json.RawMessage   `json:"settings,omitempty"`
	WorkspaceFolder       string            `json:"workspaceFolder,omitempty"`
	StartupTimeout        int               `json:"startupTimeout,omitempty"` // milliseconds
	RestartOnCrash        *bool             `json:"restartOnCrash,omitempty"`
	MaxRestarts           *int              `json:"maxRestarts,omitempty"`
}

// restartLimit is how many times a crashed server is started again; Claude
// Code's default is to restart, a few times.
func (c ServerConfig) restartLimit() int {
	if c.RestartOnCrash != nil && !*c.RestartOnCrash {
		return 0
	}
	if c.MaxRestarts != nil {
		return *c.MaxRestarts
	}
	return 3
}

// ParseServers reads an lspServers object (a .lsp.json file, or the value of
// an lspServers key). A malformed one is reported with source and line.
func ParseServers(data []byte, source string) ([]ServerConfig, error) {
	return ParseServersAt(data, source, 1)
}

// ParseServersAt is ParseServers for a value that starts at line first of
// source (the lspServers key of a settings file or manifest).
func ParseServersAt(data []byte, source string, first int) ([]ServerConfig, error) {
	cfgs, err := parseServers(data, source, first-1)
	return cfgs, err
}

func parseServers(data []byte, source string, shift int) ([]ServerConfig, error) {
	lineOf := func(data []byte, off int) int { return lineOf(data, off) + shift }
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s:%d: lspServers: %w", source, errLine(data, err)+shift, err)
	}
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []ServerConfig
	for _, name := range names {
		entry := raw[name]
		line := lineOf(data, bytes.Index(data, entry))
		var c ServerConfig
		dec := json.NewDecoder(bytes.NewReader(entry))
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: lsp server %q: %w", source, line+errLine(entry, err)-1, name, err)
		}
		switch {
		case strings.TrimSpace(c.Command) == "":
			return nil, fmt.Errorf("%s:%d: lsp server %q: command is required", source, line, name)
		case len(c.ExtensionToLanguage) == 0:
			return nil, fmt.Errorf("%s:%d: lsp server %q: extensionToLanguage is required", source, line, name)
		case c.StartupTimeout < 0:
			return nil, fmt.Errorf("%s:%d: lsp server %q: startupTimeout must not be negative", source, line, name)
		}
		c.Name, c.Source = name, source
		out = append(out, c)
	}
	return out, nil
}

// errLine finds the line of a decoding error, 1 when it has no offset.
func errLine(data []byte, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return lineOf(data, int(se.Offset))
	case errors.As(err, &te):
		return lineOf(data, int(te.Offset))
	}
	return 1
}

func lineOf(data []byte, off int) int {
	if off < 0 {
		return 1
	}
	if off > len(data) {
		off = len(data)
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}
