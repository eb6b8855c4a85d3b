package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
)

// newAuthCmd is `tack auth`: which credentials sessions use (status), and
// the API key tack keeps for them (login, logout).
func newAuthCmd(stdio IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Show the credentials sessions use; store or remove an API key",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newAuthStatusCmd(stdio), newAuthLoginCmd(stdio), newAuthLogoutCmd(stdio))
	return cmd
}

// authStatusJSON is `auth status --json`, field for field what Claude Code
// prints (the ACP adapters read loggedIn, apiProvider and apiKeySource).
type authStatusJSON struct {
	LoggedIn                    bool    `json:"loggedIn"`
	AuthMethod                  string  `json:"authMethod"`
	APIProvider                 string  `json:"apiProvider"`
	AnalyticsDisabled           bool    `json:"analyticsDisabled"`
	ProjectsDirectory           string  `json:"projectsDirectory"`
	ConfigDirectory             string  `json:"configDirectory"`
	LoginExpiresAt              *string `json:"loginExpiresAt"`
	ConsoleProfileSignInOffered bool    `json:"consoleProfileSignInOffered"`
	APIKeySource                string  `json:"apiKeySource,omitempty"`
}

func newAuthStatusCmd(stdio IO) *cobra.Command {
	var asJSON, asText bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say which credentials sessions here use and where they come from (JSON by default; exit 1 when none)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asText {
				return cmdio.Usagef("--json and --text exclude each other")
			}
			st, err := agent.GetAuthStatus(cmd.Context(), agent.Options{Env: stdio.AgentEnv()})
			if err != nil {
				return err
			}
			if asText {
				writeAuthText(stdio.Out, st)
			} else if err := writeAuthJSON(stdio.Out, st); err != nil {
				return err
			}
			if !st.LoggedIn {
				return &cmdio.ExitError{Code: 1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON, as Claude Code does (the default)")
	cmd.Flags().BoolVar(&asText, "text", false, "print plain text: the method, where it comes from, the masked key")
	return cmd
}

func writeAuthJSON(w io.Writer, st agent.AuthStatus) error {
	out := authStatusJSON{
		LoggedIn: st.LoggedIn, AuthMethod: st.Method, APIProvider: "firstParty",
		// tack sends no analytics, and offers no Console sign-in.
		AnalyticsDisabled: true, ProjectsDirectory: st.ProjectsDir, ConfigDirectory: st.ConfigDir,
	}
	// Claude Code names no key source for a bearer token.
	if st.Source != agent.AuthSourceToken {
		out.APIKeySource = st.Source
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// authMethodNames are the methods as the text form says them.
var authMethodNames = map[string]string{
	agent.AuthMethodAPIKey: "API key",
	agent.AuthMethodToken:  "bearer token",
	agent.AuthMethodHelper: "API key from a helper command",
}

func writeAuthText(w io.Writer, st agent.AuthStatus) {
	if !st.LoggedIn {
		fmt.Fprintf(w, "Not logged in. Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), an apiKeyHelper in settings, or run tack auth login.\n")
		return
	}
	fmt.Fprintf(w, "%s: %s\n", authMethodNames[st.Method], st.Source)
	fmt.Fprintf(w, "From: %s\n", st.Origin)
	if st.Helper != "" {
		fmt.Fprintf(w, "Helper: %s\n", st.Helper)
	}
	if st.Masked != "" {
		fmt.Fprintf(w, "Key: %s\n", st.Masked)
	}
}

func newAuthLoginCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "login",
		Short: "Store an API key (read from standard input) for sessions that have no other credentials",
		Long: `tack has no account sign-in: it authenticates with an API key. login reads a key
from standard input (or asks for it at a terminal, without echo) and stores it in
tack-credentials.json in the config dir (~/.claude, or $CLAUDE_CONFIG_DIR),
readable by you only. Sessions use it when no ANTHROPIC_API_KEY,
ANTHROPIC_AUTH_TOKEN or apiKeyHelper is set. tack auth logout removes it.`,
		Example: `  printf '%s' "$KEY" | tack auth login`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := readKey(stdio)
			if err != nil {
				return err
			}
			opts := agent.Options{Env: stdio.AgentEnv()}
			path, err := agent.StoreAPIKey(opts, key)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdio.Out, "Stored the API key in %s.\n", path)
			if st, err := agent.GetAuthStatus(cmd.Context(), opts); err == nil && st.Source != agent.AuthSourceStored {
				fmt.Fprintf(stdio.Out, "Sessions here still use %s (%s), which comes first.\n", st.Source, st.Origin)
			}
			return nil
		},
	}
}

// readKey reads the key: one line asked for without echo at a terminal,
// else the whole of standard input.
func readKey(stdio IO) (string, error) {
	var key string
	if f, ok := stdio.In.(*os.File); ok && stdio.StdinIsTerminal {
		fmt.Fprint(stdio.Err, "API key: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stdio.Err)
		if err != nil {
			return "", fmt.Errorf("read the key: %w", err)
		}
		key = string(b)
	} else {
		b, err := io.ReadAll(bufio.NewReader(io.LimitReader(stdio.In, 64<<10)))
		if err != nil {
			return "", fmt.Errorf("read the key from standard input: %w", err)
		}
		key = string(b)
	}
	if key = strings.TrimSpace(key); key == "" {
		return "", cmdio.Usagef("no key given: pipe it in, e.g. printf '%%s' \"$KEY\" | tack auth login")
	}
	return key, nil
}

func newAuthLogoutCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Remove the API key tack auth login stored",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := agent.Options{Env: stdio.AgentEnv()}
			path, removed, err := agent.RemoveStoredAPIKey(opts)
			if err != nil {
				return err
			}
			if removed {
				fmt.Fprintf(stdio.Out, "Removed the stored API key (%s).\n", path)
			} else {
				fmt.Fprintf(stdio.Out, "No API key was stored (%s).\n", path)
			}
			if st, err := agent.GetAuthStatus(cmd.Context(), opts); err == nil && st.LoggedIn {
				fmt.Fprintf(stdio.Out, "Sessions here still have %s (%s): logout does not change the environment or settings.\n", st.Source, st.Origin)
			}
			return nil
		},
	}
}
