package configcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tackcode/tack/internal/cli/cmdio"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// MCPServeFunc runs `tack mcp serve`: tack itself as an MCP server on
// standard input and output.
type MCPServeFunc func(cmd *cobra.Command, stdio cmdio.IO) error

// MCPCallFunc runs `tack mcp call`: it calls tool of server with input (a
// JSON object) and prints the result.
type MCPCallFunc func(ctx context.Context, stdio cmdio.IO, server mcpconfig.Server, tool string, input json.RawMessage) error

// checkTimeout bounds one health check of `tack mcp list` and `get`, as
// Claude Code bounds a server's start-up (MCP_TIMEOUT, 30 s by default).
const checkTimeout = 30 * time.Second

// newMCPCmd is `tack mcp`: the MCP servers of this project and of the user.
// check connects to a server for `list` and `get` (nil: not checked); serve
// and call implement `mcp serve` and `mcp call` (nil: not available yet).
func newMCPCmd(stdio cmdio.IO, check mcpconfig.HealthCheck, serve MCPServeFunc, call MCPCallFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Configure and manage MCP servers",
		Long: `Manage the MCP servers tack starts, in the files Claude Code uses:

  local    ~/.claude.json, under this project (private to you; the default)
  project  .mcp.json in this directory (shared with your team through git;
           each server needs your approval once)
  user     ~/.claude.json, top level (all your projects)

A server defined in several scopes is taken from local, then project, then
user. --mcp-config adds servers for one launch and wins over all of them.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return mcpUsage(cmd, stdio, cmdio.Usagef("unknown command %q for \"tack mcp\"", args[0]))
			}
			return cmd.Help()
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return mcpUsage(c, stdio, cmdio.Usagef("%v", err))
	})
	cmd.AddCommand(
		newMCPAddCmd(stdio),
		newMCPAddJSONCmd(stdio),
		newMCPListCmd(stdio, check),
		newMCPGetCmd(stdio, check),
		newMCPRemoveCmd(stdio),
		newMCPApproveCmd(stdio, true),
		newMCPApproveCmd(stdio, false),
		newMCPResetCmd(stdio),
		newMCPServeCmd(stdio, serve),
		newMCPCallCmd(stdio, call),
	)
	return cmd
}

// mcpUsage reports a usage error the way tack does, pointing at the help of
// the command that was run, and turns every error into exit code 1.
func mcpUsage(cmd *cobra.Command, stdio cmdio.IO, err error) error {
	var ue *cmdio.UsageError
	if !errors.As(err, &ue) {
		return err
	}
	fmt.Fprintf(stdio.Err, "tack: %v\nRun '%s --help' for usage.\n", ue.Msg, cmd.CommandPath())
	return &cmdio.ExitError{Code: 1}
}

// mcpRun wraps a RunE so that its usage errors get the mcp hint.
func mcpRun(stdio cmdio.IO, fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return mcpUsage(cmd, stdio, fn(cmd, args))
	}
}

func scopeFlag(cmd *cobra.Command, def string) *string {
	var s string
	cmd.Flags().StringVarP(&s, "scope", "s", def, "configuration scope: local, project or user")
	return &s
}

// mcpLookup resolves ${VAR}: the settings' env first (Claude Code applies it
// to its environment before reading MCP configuration), then stdio.Getenv,
// then the process environment, which alone tells an empty variable from an
// unset one.
func mcpLookup(stdio cmdio.IO, settingsEnv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := settingsEnv[k]; ok {
			return v, true
		}
		if stdio.Getenv != nil {
			if v := stdio.Getenv(k); v != "" {
				return v, true
			}
		}
		return os.LookupEnv(k)
	}
}

func mcpFiles(stdio cmdio.IO) (mcpconfig.Files, error) {
	return mcpconfig.DefaultFiles(stdio.Env(), "")
}

// loadMCP reads the servers of this project as a session would, with the
// approvals and env of the settings files — of the project's own only when
// the folder is trusted: a cloned repository must not approve the servers
// that list and get would then start. A settings problem is a warning
// here: the servers can still be shown.
func loadMCP(stdio cmdio.IO) (*mcpconfig.Set, *config.Merged, error) {
	files, err := mcpFiles(stdio)
	if err != nil {
		return nil, nil, err
	}
	getenv := stdio.Env()
	untrusted := true
	if ws, err := agent.CheckWorkspace(agent.Options{Cwd: files.ProjectDir, Env: stdio.AgentEnv()}); err == nil {
		untrusted = !ws.Trusted
	}
	merged, err := config.Load(config.LoadOptions{Cwd: files.ProjectDir, ConfigDir: config.DefaultConfigDir(getenv), Untrusted: untrusted})
	if err == nil {
		for _, it := range merged.Ignored {
			if it.Text == "enableAllProjectMcpServers" || it.Text == "enabledMcpjsonServers" {
				fmt.Fprintf(stdio.Err, "tack: this folder is not trusted, so its settings do not approve its servers (%s): trust it with tack trust\n", it.Source)
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stdio.Err, "tack: warning: settings not applied: %v\n", err)
		merged = nil
	}
	opts := mcpconfig.Options{Files: files}
	var env map[string]string
	if merged != nil {
		env = merged.Env
		if b := merged.EnableAllProjectMcpServers; b != nil {
			opts.Settings.EnableAllProjectMcpServers = *b
		}
		opts.Settings.EnabledMcpjsonServers = config.Texts(merged.EnabledMcpjsonServers)
		opts.Settings.DisabledMcpjsonServers = config.Texts(merged.DisabledMcpjsonServers)
	}
	opts.LookupEnv = mcpLookup(stdio, env)
	set, err := mcpconfig.Load(opts)
	return set, merged, err
}

// fileModified is the line Claude Code prints after an edit.
func fileModified(files mcpconfig.Files, scope mcpconfig.Scope, path string) string {
	if scope == mcpconfig.ScopeLocal {
		return fmt.Sprintf("File modified: %s [project: %s]", path, files.Key())
	}
	return "File modified: " + path
}

func newMCPAddCmd(stdio cmdio.IO) *cobra.Command {
	var transport, clientID string
	var env, headers []string
	var callbackPort int
	cmd := &cobra.Command{
		Use:   "add [flags] NAME -- COMMAND [ARGS...]",
		Short: "Add an MCP server",
		Long: `Add an MCP server:

  tack mcp add [flags] NAME -- COMMAND [ARGS...]            a stdio server
  tack mcp add --transport http|sse [flags] NAME URL      a remote server

Options go before or after the name; "--" separates them from the command
that starts a stdio server (and is needed when that command has options).
${VAR} and ${VAR:-default} in values are kept as written and expanded when
the server starts.`,
		Example: `  tack mcp add --env AIRTABLE_API_KEY=KEY airtable -- npx -y airtable-mcp-server
  tack mcp add --transport http --scope user notion https://mcp.notion.com/mcp
  tack mcp add -t http -H "Authorization: Bearer ${TOKEN}" api https://api.example.com/mcp`,
		Args: cobra.ArbitraryArgs,
	}
	scope := scopeFlag(cmd, "local")
	fl := cmd.Flags()
	fl.StringVarP(&transport, "transport", "t", "stdio", "transport: stdio, http or sse")
	fl.StringArrayVarP(&env, "env", "e", nil, "environment variable of a stdio server, KEY=value (repeatable)")
	fl.StringArrayVarP(&headers, "header", "H", nil, `HTTP header of an http or sse server, "Name: value" (repeatable)`)
	fl.StringVar(&clientID, "client-id", "", "OAuth client ID registered with the server (http, sse)")
	fl.IntVar(&callbackPort, "callback-port", 0, "fixed port of the OAuth redirect (http, sse)")
	// Parsing stops at the name: what follows is read by optionsAfterName,
	// which tells tack's options from the start of the server's command.
	fl.SetInterspersed(false)
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		before, after := splitDash(cmd, args)
		before, err := leadingValues(before, &env, &headers)
		if err != nil {
			return err
		}
		if len(before) == 0 {
			if len(after) > 0 {
				return cmdio.Usagef("missing the server name before \"--\"")
			}
			return cmdio.Usagef("missing the server name")
		}
		name := before[0]
		tail, err := optionsAfterName(fl, before[1:], len(after) > 0, &env, &headers)
		if err != nil {
			return err
		}
		rest := append(tail, after...)
		sc, err := mcpconfig.ParseScope(*scope)
		if err != nil {
			return cmdio.Usagef("%v", err)
		}
		typ, err := mcpconfig.ParseType(transport)
		if err != nil || typ == mcpconfig.TypeWS {
			return cmdio.Usagef("invalid transport %q (want stdio, http or sse)", transport)
		}
		envKVs, err := parseKVs(env, "=", "environment variable", "-e KEY=value")
		if err != nil {
			return err
		}
		headerKVs, err := parseKVs(headers, ":", "header", `-H "Name: value"`)
		if err != nil {
			return err
		}
		var entry json.RawMessage
		var summary string
		if typ == mcpconfig.TypeStdio {
			if len(headerKVs) > 0 || clientID != "" || callbackPort != 0 {
				return cmdio.Usagef("--header, --client-id and --callback-port apply to http and sse servers (add --transport http)")
			}
			entry, summary, err = stdioEntry(name, rest, envKVs, sc)
		} else {
			if len(envKVs) > 0 {
				return cmdio.Usagef("--env applies to stdio servers; send values to an %s server with --header", typ)
			}
			entry, summary, err = remoteEntry(typ, name, rest, headerKVs, clientID, callbackPort, sc)
		}
		if err != nil {
			return err
		}
		return addEntry(stdio, sc, name, entry, summary, headerKVs)
	})
	return cmd
}

// leadingValues takes off the front of args the extra values of -e and -H
// written before the server name: Claude Code's -e and -H take several
// values each (-e A=1 B=2), and a server name has neither '=' nor ':'.
func leadingValues(args []string, env, headers *[]string) ([]string, error) {
	for len(args) > 0 && mcpconfig.ValidName(args[0]) != nil {
		switch v := args[0]; {
		case len(*env) > 0 && strings.Contains(v, "="):
			*env = append(*env, v)
		case len(*headers) > 0 && strings.Contains(v, ":"):
			*headers = append(*headers, v)
		default:
			if strings.HasPrefix(v, "-") {
				return nil, cmdio.Usagef("unknown option %q", v)
			}
			return nil, cmdio.Usagef("%v", mcpconfig.ValidName(v))
		}
		args = args[1:]
	}
	return args, nil
}

// stdioEntry is the configuration of a stdio server started by the command
// rest, and the line that says it was added.
func stdioEntry(name string, rest []string, env []mcpconfig.KV, sc mcpconfig.Scope) (json.RawMessage, string, error) {
	if len(rest) == 0 {
		return nil, "", cmdio.Usagef("missing the command that starts the server: tack mcp add %s -- COMMAND [ARGS...]", name)
	}
	if strings.Contains(rest[0], "://") {
		return nil, "", cmdio.Usagef("%q is a URL: add --transport http (or sse) before the name", rest[0])
	}
	summary := fmt.Sprintf("Added stdio MCP server %s with command: %s to %s config", name, strings.Join(rest, " "), sc)
	return mcpconfig.StdioEntry(rest[0], rest[1:], env), summary, nil
}

// remoteEntry is the configuration of an http or sse server at the URL
// rest holds, and the line that says it was added.
func remoteEntry(typ mcpconfig.Type, name string, rest []string, headers []mcpconfig.KV, clientID string, callbackPort int, sc mcpconfig.Scope) (json.RawMessage, string, error) {
	if len(rest) != 1 {
		return nil, "", cmdio.Usagef("want the server name and its URL: tack mcp add --transport %s %s URL", typ, name)
	}
	if callbackPort < 0 || callbackPort > 65535 {
		return nil, "", cmdio.Usagef("invalid --callback-port %d", callbackPort)
	}
	var oauth *mcpconfig.OAuth
	if clientID != "" || callbackPort != 0 {
		oauth = &mcpconfig.OAuth{ClientID: clientID, CallbackPort: callbackPort}
	}
	summary := fmt.Sprintf("Added %s MCP server %s with URL: %s to %s config", strings.ToUpper(string(typ)), name, rest[0], sc)
	return mcpconfig.RemoteEntry(typ, rest[0], headers, oauth), summary, nil
}

// optionsAfterName reads tack's options written between the server name and
// "--" or the command (NAME -s project -e K=V -- CMD), as Claude Code accepts
// them, and returns what is left: the start of the command, or the URL. The
// extra values of -e and -H (-e A=1 B=2) are theirs when a "--" follows. An
// option tack does not know is the command's own, which needs "--" before it.
func optionsAfterName(fl *pflag.FlagSet, args []string, dash bool, env, headers *[]string) ([]string, error) {
	fl.SetInterspersed(true)
	defer fl.SetInterspersed(false)
	if err := fl.Parse(args); err != nil {
		for _, a := range args {
			if strings.HasPrefix(a, "-") && a != "-" && !knownFlag(fl, a) {
				return nil, cmdio.Usagef("option %q after the server name is not one of tack's: put \"--\" before the command that starts the server", a)
			}
		}
		return nil, cmdio.Usagef("%v", err)
	}
	if !dash {
		return fl.Args(), nil
	}
	var rest []string
	for _, v := range fl.Args() {
		switch {
		case len(*env) > 0 && strings.Contains(v, "="):
			*env = append(*env, v)
		case len(*headers) > 0 && strings.Contains(v, ":"):
			*headers = append(*headers, v)
		default:
			rest = append(rest, v)
		}
	}
	return rest, nil
}

// knownFlag reports whether arg (-e, --env=A=1, -eA=1) names a flag of fl.
func knownFlag(fl *pflag.FlagSet, arg string) bool {
	if long, ok := strings.CutPrefix(arg, "--"); ok {
		name, _, _ := strings.Cut(long, "=")
		return fl.Lookup(name) != nil
	}
	return len(arg) > 1 && fl.ShorthandLookup(arg[1:2]) != nil
}

// splitDash splits args at the first "--" into what comes before it (the
// name, perhaps a command) and after it (the command and its arguments).
// cobra reports a "--" that comes before any argument, and leaves one in
// args when flag parsing stopped at the name.
func splitDash(cmd *cobra.Command, args []string) (before, after []string) {
	if n := cmd.ArgsLenAtDash(); n >= 0 {
		if n == 0 && len(args) > 0 {
			// "--" before the name: the name, then the command.
			return args[:1], args[1:]
		}
		return args[:n], args[n:]
	}
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

// parseKVs parses KEY=value or "Name: value" pairs.
func parseKVs(list []string, sep, what, form string) ([]mcpconfig.KV, error) {
	var out []mcpconfig.KV
	for _, s := range list {
		k, v, ok := strings.Cut(s, sep)
		if sep == ":" {
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		}
		if !ok || k == "" {
			return nil, cmdio.Usagef("invalid %s %q: write it as %s", what, s, form)
		}
		out = append(out, mcpconfig.KV{Key: k, Value: v})
	}
	return out, nil
}

// addEntry writes a new server and reports it as Claude Code does.
func addEntry(stdio cmdio.IO, sc mcpconfig.Scope, name string, entry json.RawMessage, summary string, headers []mcpconfig.KV) error {
	files, err := mcpFiles(stdio)
	if err != nil {
		return err
	}
	path, err := files.AddServer(sc, name, entry, false)
	if errors.Is(err, mcpconfig.ErrExists) {
		return fmt.Errorf("%w\nTo replace it, remove it first: tack mcp remove %q -s %s", err, name, sc)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdio.Out, summary)
	if len(headers) > 0 {
		fmt.Fprintln(stdio.Out, "Headers:")
		for _, h := range headers {
			fmt.Fprintf(stdio.Out, "  %s: %s\n", h.Key, mcpconfig.MaskValue(h.Value))
		}
	}
	fmt.Fprintln(stdio.Out, fileModified(files, sc, path))
	warnUnset(stdio, name, entry)
	return nil
}

// warnUnset warns about ${VAR} references to variables that are not set
// here: the server would not start.
func warnUnset(stdio cmdio.IO, name string, entry json.RawMessage) {
	s := mcpconfig.ParseEntry(name, entry, "", mcpconfig.Source{Path: name}, mcpLookup(stdio, nil))
	if s.Err != nil && len(s.Err.Missing) > 0 {
		fmt.Fprintf(stdio.Err, "Warning: %s not set in this environment; server %q will not start until %s.\n",
			plural(s.Err.Missing, "${%s} is", "${%s} are"), name, plural(s.Err.Missing, "it is", "they are"))
	}
}

func plural(names []string, one, many string) string {
	if len(names) == 1 {
		if strings.Contains(one, "%s") {
			return fmt.Sprintf(one, names[0])
		}
		return one
	}
	if strings.Contains(many, "%s") {
		return fmt.Sprintf(many, strings.Join(names, "}, ${"))
	}
	return many
}

func newMCPAddJSONCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "add-json [flags] NAME JSON",
		Short:   "Add an MCP server given as a JSON entry",
		Example: `  tack mcp add-json weather '{"type":"stdio","command":"/path/to/weather-cli","args":["--api-key","abc123"]}'`,
		Args:    cobra.ArbitraryArgs,
	}
	scope := scopeFlag(cmd, "local")
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) != 2 {
			return cmdio.Usagef("want a server name and its JSON entry, got %d arguments", len(args))
		}
		sc, err := mcpconfig.ParseScope(*scope)
		if err != nil {
			return cmdio.Usagef("%v", err)
		}
		name, raw := args[0], json.RawMessage(args[1])
		if err := mcpconfig.ValidName(name); err != nil {
			return cmdio.Usagef("%v", err)
		}
		if err := mcpconfig.CheckEntry(name, raw, "JSON argument"); err != nil {
			return err
		}
		s := mcpconfig.ParseEntry(name, raw, sc, mcpconfig.Source{}, func(string) (string, bool) { return "", true })
		return addEntry(stdio, sc, name, raw, fmt.Sprintf("Added %s MCP server %s to %s config", s.Type, name, sc), nil)
	})
	return cmd
}

// status is one server's line state for list and get.
func status(ctx context.Context, set *mcpconfig.Set, srv *mcpconfig.Server, check mcpconfig.HealthCheck) (string, string) {
	approved, decided := set.Approval(srv)
	switch {
	case srv.Err != nil:
		return "✗ Invalid configuration", srv.Err.Error()
	case srv.Disabled:
		return "○ Disabled for this project", ""
	case !decided:
		// Not started: running a command of a freshly cloned .mcp.json is
		// exactly what approval exists to prevent.
		return "⚠ Needs approval", fmt.Sprintf("approve it with: tack mcp approve %s", srv.Name)
	case !approved:
		return "✗ Rejected", fmt.Sprintf("allow it with: tack mcp approve %s", srv.Name)
	case check == nil:
		return "(not checked)", ""
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return check(ctx, *srv)
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

func newMCPListCmd(stdio cmdio.IO, check mcpconfig.HealthCheck) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers, where each is defined, and their health",
		Args:  cobra.ArbitraryArgs,
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdio.Usagef("list takes no arguments")
		}
		set, _, err := loadMCP(stdio)
		if err != nil {
			return err
		}
		servers := set.Servers()
		if len(servers) == 0 {
			fmt.Fprintln(stdio.Out, "No MCP servers configured. Use `tack mcp add` to add a server.")
			return reportProblems(stdio, set)
		}
		if check != nil {
			fmt.Fprint(stdio.Out, "Checking MCP server health...\n\n")
		}
		type result struct{ status, detail string }
		results := make([]result, len(servers))
		var wg sync.WaitGroup
		ctx := cmdContext(cmd)
		for i, srv := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, detail := status(ctx, set, srv, check)
				results[i] = result{st, detail}
			}()
		}
		wg.Wait()
		for i, srv := range servers {
			line := srv.Name + ":"
			if t := srv.Target(); srv.Err == nil && strings.TrimSpace(t) != "" {
				line += " " + t
			}
			fmt.Fprintf(stdio.Out, "%s - %s\n", line, results[i].status)
			fmt.Fprintf(stdio.Out, "    %s · %s\n", srv.Scope, srv.Source)
			for _, sh := range set.Definitions(srv.Name)[1:] {
				fmt.Fprintf(stdio.Out, "    overrides %s · %s\n", sh.Scope, sh.Source)
			}
			if d := results[i].detail; d != "" && srv.Err == nil {
				fmt.Fprintf(stdio.Out, "    %s\n", d)
			}
		}
		return reportProblems(stdio, set)
	})
	return cmd
}

// reportProblems prints the configuration problems, if any, and fails the
// command with exit code 1 when there are: a config linter's convention.
func reportProblems(stdio cmdio.IO, set *mcpconfig.Set) error {
	probs := set.Problems()
	for _, p := range probs {
		fmt.Fprintf(stdio.Err, "tack: %v\n", p)
	}
	if len(probs) > 0 {
		return &cmdio.ExitError{Code: 1}
	}
	return nil
}

func newMCPGetCmd(stdio cmdio.IO, check mcpconfig.HealthCheck) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show the details of an MCP server (secrets masked)",
		Args:  cobra.ArbitraryArgs,
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return cmdio.Usagef("want one server name")
		}
		set, _, err := loadMCP(stdio)
		if err != nil {
			return err
		}
		srv, ok := set.Lookup(args[0])
		if !ok {
			for _, p := range set.Problems() {
				fmt.Fprintf(stdio.Err, "tack: %v\n", p)
			}
			return fmt.Errorf("no MCP server found with name: %q", args[0])
		}
		st, detail := status(cmdContext(cmd), set, srv, check)
		w := stdio.Out
		fmt.Fprintf(w, "%s:\n", srv.Name)
		fmt.Fprintf(w, "  Scope: %s\n", srv.Scope.Describe())
		fmt.Fprintf(w, "  Defined in: %s\n", srv.Source)
		fmt.Fprintf(w, "  Status: %s\n", st)
		if detail != "" && srv.Err == nil {
			fmt.Fprintf(w, "  Detail: %s\n", detail)
		}
		if srv.Err != nil {
			fmt.Fprintf(w, "  Problem: %s\n", srv.Err)
		}
		if srv.Type != "" {
			fmt.Fprintf(w, "  Type: %s\n", srv.Type)
		}
		if srv.Type.Remote() {
			fmt.Fprintf(w, "  URL: %s\n", mcpconfig.MaskURL(srv.URL))
			printKVs(w, "Headers", ": ", srv.MaskedHeaders())
			if srv.HeadersHelper != "" {
				fmt.Fprintf(w, "  Headers helper: %s\n", srv.HeadersHelper)
			}
			if o := srv.OAuth; o != nil {
				if o.ClientID != "" {
					fmt.Fprintf(w, "  OAuth client ID: %s\n", o.ClientID)
				}
				if o.CallbackPort != 0 {
					fmt.Fprintf(w, "  OAuth callback port: %d\n", o.CallbackPort)
				}
			}
		} else if srv.Command != "" {
			fmt.Fprintf(w, "  Command: %s\n", srv.Command)
			fmt.Fprintf(w, "  Args: %s\n", strings.Join(srv.Args, " "))
			printKVs(w, "Environment", "=", srv.MaskedEnv())
		}
		for _, sh := range set.Definitions(srv.Name)[1:] {
			fmt.Fprintf(w, "  Overrides: %s definition at %s\n", sh.Scope, sh.Source)
		}
		if srv.Scope.Editable() {
			fmt.Fprintf(w, "\nTo remove this server, run: tack mcp remove %q -s %s\n", srv.Name, srv.Scope)
		}
		if srv.Err != nil {
			return &cmdio.ExitError{Code: 1}
		}
		return nil
	})
	return cmd
}

func printKVs(w interface{ Write([]byte) (int, error) }, title, sep string, kvs []mcpconfig.KV) {
	if len(kvs) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", title)
	for _, kv := range kvs {
		fmt.Fprintf(w, "    %s%s%s\n", kv.Key, sep, kv.Value)
	}
}

func newMCPRemoveCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "remove [flags] NAME",
		Short: "Remove an MCP server",
		Long: `Remove an MCP server from the scope given, or from the one scope that
defines it.`,
		Args: cobra.ArbitraryArgs,
	}
	scope := scopeFlag(cmd, "")
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return cmdio.Usagef("want one server name")
		}
		var sc mcpconfig.Scope
		if *scope != "" {
			var err error
			if sc, err = mcpconfig.ParseScope(*scope); err != nil {
				return cmdio.Usagef("%v", err)
			}
		}
		files, err := mcpFiles(stdio)
		if err != nil {
			return err
		}
		name := args[0]
		sc, path, err := files.RemoveServer(sc, name)
		var amb *mcpconfig.AmbiguousError
		switch {
		case errors.As(err, &amb):
			fmt.Fprintf(stdio.Err, "MCP server %q exists in several scopes:\n", name)
			for _, s := range amb.Scopes {
				fmt.Fprintf(stdio.Err, "  - %s (%s)\n", s, files.Path(s))
			}
			fmt.Fprintln(stdio.Err, "\nTo remove it from one scope, run:")
			for _, s := range amb.Scopes {
				fmt.Fprintf(stdio.Err, "  tack mcp remove %q -s %s\n", name, s)
			}
			return &cmdio.ExitError{Code: 1}
		case errors.Is(err, mcpconfig.ErrNotFound) && *scope == "":
			return fmt.Errorf("no MCP server found with name: %q", name)
		case err != nil:
			return err
		}
		fmt.Fprintf(stdio.Out, "Removed MCP server %q from %s config\n", name, sc)
		fmt.Fprintln(stdio.Out, fileModified(files, sc, path))
		return nil
	})
	return cmd
}

func newMCPApproveCmd(stdio cmdio.IO, approve bool) *cobra.Command {
	use, short, verb := "approve NAME...", "Approve project (.mcp.json) servers for this project", "Approved"
	if !approve {
		use, short, verb = "reject NAME...", "Refuse project (.mcp.json) servers for this project", "Rejected"
	}
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmdio.Usagef("want the names of .mcp.json servers")
		}
		set, _, err := loadMCP(stdio)
		if err != nil {
			return err
		}
		for _, name := range args {
			found := false
			for _, d := range set.Definitions(name) {
				found = found || d.Scope == mcpconfig.ScopeProject
			}
			if !found {
				return fmt.Errorf("%s has no server named %q", set.Files().MCPJSON(), name)
			}
			if err := set.SetApproval(name, approve); err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "%s MCP server %q of .mcp.json for %s\n", verb, name, set.Files().Key())
			if approved, _ := set.Approval(&mcpconfig.Server{Name: name, Scope: mcpconfig.ScopeProject}); approved != approve {
				// A refusal anywhere wins, and settings can approve all.
				fmt.Fprintf(stdio.Err, "Note: your settings files decide otherwise for %q (disabledMcpjsonServers, enableAllProjectMcpServers).\n", name)
			}
		}
		fmt.Fprintln(stdio.Out, "File modified: "+set.Files().ClaudeJSON)
		return nil
	})
	return cmd
}

func newMCPResetCmd(stdio cmdio.IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset-project-choices",
		Short: "Forget your approvals and refusals of this project's .mcp.json servers",
		Args:  cobra.ArbitraryArgs,
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdio.Usagef("reset-project-choices takes no arguments")
		}
		files, err := mcpFiles(stdio)
		if err != nil {
			return err
		}
		if _, err := files.ResetProjectChoices(); err != nil {
			return err
		}
		fmt.Fprintln(stdio.Out, "All project-scoped (.mcp.json) server approvals and rejections have been reset.")
		fmt.Fprintln(stdio.Out, "You will be prompted for approval next time you start tack.")
		return nil
	})
	return cmd
}

func newMCPServeCmd(stdio cmdio.IO, serve MCPServeFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run tack as an MCP server on standard input and output",
		Args:  cobra.ArbitraryArgs,
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdio.Usagef("serve takes no arguments")
		}
		if serve == nil {
			return errors.New("tack mcp serve is not available in this build yet")
		}
		return serve(cmd, stdio)
	})
	return cmd
}

func newMCPCallCmd(stdio cmdio.IO, call MCPCallFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "call NAME TOOL [JSON]",
		Short:   "Call a tool of an MCP server and print the result",
		Example: `  tack mcp call github search_repositories '{"query":"tack"}'`,
		Args:    cobra.ArbitraryArgs,
	}
	cmd.RunE = mcpRun(stdio, func(cmd *cobra.Command, args []string) error {
		if len(args) < 2 || len(args) > 3 {
			return cmdio.Usagef("want a server name, a tool name and optionally the tool's input as a JSON object")
		}
		input := json.RawMessage("{}")
		if len(args) == 3 {
			input = json.RawMessage(args[2])
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
				return cmdio.Usagef("the tool's input must be a JSON object, such as '{\"query\":\"x\"}'")
			}
		}
		if call == nil {
			return errors.New("tack mcp call is not available in this build yet")
		}
		set, _, err := loadMCP(stdio)
		if err != nil {
			return err
		}
		srv, ok := set.Lookup(args[0])
		switch approved, decided := false, false; {
		case !ok:
			return fmt.Errorf("no MCP server found with name: %q", args[0])
		case srv.Err != nil:
			return srv.Err
		default:
			if approved, decided = set.Approval(srv); !approved {
				if !decided {
					return fmt.Errorf("MCP server %q of .mcp.json is not approved: run tack mcp approve %s first", srv.Name, srv.Name)
				}
				return fmt.Errorf("MCP server %q of .mcp.json was rejected: run tack mcp approve %s to allow it", srv.Name, srv.Name)
			}
		}
		return call(cmdContext(cmd), stdio, *srv, args[1], input)
	})
	return cmd
}
