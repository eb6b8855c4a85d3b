package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/cli/configcmd"
	"github.com/tackcode/tack/internal/version"
)

// The verdicts of a check.
const (
	verdictOK   = "ok"
	verdictWarn = "warn"
	verdictFail = "fail"
)

// pingTimeout bounds the request to the API: a health check must answer
// fast, and a host that does not answer in this time is the finding.
const pingTimeout = 5 * time.Second

// checkResult is one line of `tack doctor`.
type checkResult struct {
	Check   string `json:"check"`
	Verdict string `json:"verdict"`
	Detail  string `json:"detail"`
	// Fix says what to do, for a warning or a failure.
	Fix string `json:"fix,omitempty"`
}

// doctorCheck is one check: it finds its lines (several for a check per
// file or per server). A new check (language servers…) is one more entry
// of doctorChecks.
type doctorCheck func(ctx context.Context, stdio IO, opts agent.Options) []checkResult

// doctorChecks are the checks, in the order they are shown.
func doctorChecks() []doctorCheck {
	return []doctorCheck{checkInstallation, checkCredentials, checkNetwork, checkAPI, checkProviders, checkSettings, checkMCP, checkLSP, checkSandbox}
}

// newDoctorCmd is `tack doctor`: one line per check, exit 1 when one
// fails.
func newDoctorCmd(stdio IO) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the installation, credentials, API, settings, MCP and language servers, and sandbox (exit 1 when a check fails)",
		Long: `Checks what a session in this directory needs, one line per check with its
verdict (ok, warn or fail) and, when it is not ok, what to do: whether the folder
is trusted (an untrusted folder's own settings are checked but not used: its
apiKeyHelper is not run), the installation,
the credentials in use, whether the API answers (one GET /v1/models on
ANTHROPIC_BASE_URL, within 5 s), every OpenAI-compatible provider of the
settings (its key, and one GET {baseURL}/models), every settings file, every configured MCP server
(started or connected, as tack mcp list does), every configured language server
(started, then stopped) and the sandbox. The exit status is
1 when a check fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, trust := doctorOptions(stdio)
			results := []checkResult{trust}
			for _, c := range doctorChecks() {
				results = append(results, c(cmd.Context(), stdio, opts)...)
			}
			if err := writeDoctor(stdio, results, asJSON); err != nil {
				return err
			}
			for _, r := range results {
				if r.Verdict == verdictFail {
					return &cmdio.ExitError{Code: 1}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as a JSON array")
	return cmd
}

func writeDoctor(stdio IO, results []checkResult, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdio.Out, "%s\n", b)
		return err
	}
	for _, r := range results {
		line := fmt.Sprintf("%-4s  %s: %s", r.Verdict, r.Check, r.Detail)
		if r.Fix != "" {
			line += " → " + r.Fix
		}
		fmt.Fprintln(stdio.Out, line)
	}
	return nil
}

// doctorOptions are the options the checks read the settings with, and
// the line that says why: the settings of a folder the user has not
// trusted are checked but not used, so that a cloned repository's
// apiKeyHelper does not run because its owner asked for a check-up.
func doctorOptions(stdio IO) (agent.Options, checkResult) {
	opts := agent.Options{Env: stdio.AgentEnv()}
	r := checkResult{Check: "trust", Verdict: verdictOK}
	ws, err := agent.CheckWorkspace(opts)
	switch {
	case err != nil:
		r.Verdict, r.Detail, r.Fix = verdictFail, err.Error(), "fix the file named"
	case ws.Trusted:
		r.Detail = ws.Dir + " is trusted"
	case len(ws.Brings) == 0:
		r.Detail = ws.Dir + " is not trusted, and brings no code of its own"
	default:
		opts.Untrusted = true
		r.Verdict = verdictWarn
		r.Detail = fmt.Sprintf("%s is not trusted: what it brings (%s) is left out of these checks", ws.Dir, strings.Join(ws.Brings, "; "))
		r.Fix = "trust it with tack trust " + ws.Dir
	}
	return opts, r
}

func checkInstallation(context.Context, IO, agent.Options) []checkResult {
	r := checkResult{Check: "installation", Verdict: verdictOK}
	exe, err := os.Executable()
	if err != nil {
		r.Verdict, r.Detail = verdictFail, fmt.Sprintf("tack %s, but its own path is unknown: %v", version.Version, err)
		r.Fix = "run tack from a file on disk"
		return []checkResult{r}
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	r.Detail = fmt.Sprintf("tack %s at %s", version.Version, exe)
	onPath, err := exec.LookPath("tack")
	if real, rerr := filepath.EvalSymlinks(onPath); rerr == nil {
		onPath = real
	}
	switch {
	case err != nil:
		r.Verdict, r.Fix = verdictWarn, "tack is not on PATH: add "+filepath.Dir(exe)+" to PATH"
	case onPath != exe:
		r.Verdict, r.Fix = verdictWarn, "PATH finds another tack first ("+onPath+")"
	}
	return []checkResult{r}
}

func checkCredentials(ctx context.Context, _ IO, opts agent.Options) []checkResult {
	// A cloud platform has its own credentials: the provider check is them.
	if desc, ok, err := agent.CheckProvider(ctx, opts); ok {
		r := checkResult{Check: "provider", Verdict: verdictOK, Detail: desc}
		if err != nil {
			r.Verdict, r.Detail, r.Fix = verdictFail, err.Error(), "set the variable named"
		}
		return []checkResult{r}
	}
	r := checkResult{Check: "credentials", Verdict: verdictOK}
	st, err := agent.GetAuthStatus(ctx, opts)
	switch {
	case err != nil:
		r.Verdict, r.Detail, r.Fix = verdictFail, err.Error(), "fix the file named"
	case !st.LoggedIn:
		r.Verdict, r.Detail = verdictFail, "no API key, token or apiKeyHelper"
		r.Fix = "set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), an apiKeyHelper in settings, or run tack auth login"
	case st.Helper != "":
		r.Detail = fmt.Sprintf("%s %q (%s)", st.Source, st.Helper, st.Origin)
	default:
		r.Detail = fmt.Sprintf("%s %s (%s)", st.Source, st.Masked, st.Origin)
	}
	return []checkResult{r}
}

func checkAPI(ctx context.Context, _ IO, opts agent.Options) []checkResult {
	if _, ok, _ := agent.CheckProvider(ctx, opts); ok {
		return nil // the platforms serve no cheap request to ping
	}
	r := checkResult{Check: "api", Verdict: verdictOK}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	base, status, err := agent.PingAPI(ctx, opts)
	switch {
	case errors.Is(err, agent.ErrNoCredentials):
		r.Verdict, r.Detail, r.Fix = verdictWarn, base+" not checked: no credentials", "see credentials"
	case status == 401 || status == 403:
		r.Verdict, r.Detail, r.Fix = verdictFail, fmt.Sprintf("%s refused the credentials: %v", base, err), "check the API key or token"
	case status != 0:
		r.Verdict, r.Detail, r.Fix = verdictFail, fmt.Sprintf("%s answered %v", base, err), "check ANTHROPIC_BASE_URL (a gateway must serve the Messages API)"
	case ctx.Err() != nil:
		r.Verdict, r.Detail, r.Fix = verdictFail, fmt.Sprintf("%s did not answer within %s", base, pingTimeout), "check ANTHROPIC_BASE_URL, the network and any proxy"
	case err != nil:
		r.Verdict, r.Detail, r.Fix = verdictFail, fmt.Sprintf("cannot reach %s: %v", base, err), "check ANTHROPIC_BASE_URL, the network and any proxy"
	default:
		r.Detail = base + " answers"
	}
	return []checkResult{r}
}

// checkProviders is one line per OpenAI-compatible provider of the
// settings: its key resolves, and its server answers GET /models with it.
func checkProviders(ctx context.Context, _ IO, opts agent.Options) []checkResult {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	checks, err := agent.CheckProviders(ctx, opts)
	if err != nil {
		return []checkResult{{Check: "providers", Verdict: verdictFail, Detail: err.Error(), Fix: "fix the file named"}}
	}
	var out []checkResult
	for _, c := range checks {
		r := checkResult{Check: "providers." + c.Name, Verdict: verdictOK}
		models := "no models configured"
		if len(c.Models) > 0 {
			models = "models " + strings.Join(c.Models, ", ")
		}
		switch {
		case c.Status == 401 || c.Status == 403:
			r.Verdict = verdictFail
			r.Detail = fmt.Sprintf("%s refused the key from %s: HTTP %d", c.BaseURL, c.Credential, c.Status)
			r.Fix = "check the key of " + c.Where
		case c.Status == 404:
			r.Verdict = verdictWarn
			r.Detail = fmt.Sprintf("%s answers but serves no /models (HTTP 404); %s", c.BaseURL, models)
			r.Fix = "check baseURL in " + c.Where + " (it usually ends in /v1)"
		case c.Status >= 300:
			r.Verdict = verdictFail
			r.Detail = fmt.Sprintf("%s answered GET /models with HTTP %d", c.BaseURL, c.Status)
			r.Fix = "check baseURL in " + c.Where + " and the server's log"
		case c.Err != nil && c.Status == 0 && ctx.Err() != nil:
			r.Verdict = verdictFail
			r.Detail = fmt.Sprintf("%s did not answer within %s", c.BaseURL, pingTimeout)
			r.Fix = "start the server, or check baseURL in " + c.Where + ", the network and any proxy"
		case c.Err != nil:
			r.Verdict = verdictFail
			r.Detail = fmt.Sprintf("%s: %v", c.BaseURL, c.Err)
			r.Fix = "start the server, or check baseURL and the key in " + c.Where
		default:
			r.Detail = fmt.Sprintf("%s answers (key from %s); %s", c.BaseURL, c.Credential, models)
		}
		out = append(out, r)
	}
	return out
}

func checkSettings(_ context.Context, _ IO, opts agent.Options) []checkResult {
	files, err := agent.CheckSettingsFiles(opts)
	if err != nil {
		return []checkResult{{Check: "settings", Verdict: verdictFail, Detail: err.Error(), Fix: "fix the file named"}}
	}
	var out []checkResult
	for _, f := range files {
		r := checkResult{Check: "settings " + cmdio.Dash(f.Scope), Verdict: verdictOK, Detail: f.Path}
		switch {
		case len(f.Errs) > 0:
			r.Verdict, r.Detail, r.Fix = verdictFail, errors.Join(f.Errs...).Error(), "fix the file at the line and column named"
		case !f.Exists:
			r.Detail += " (none)"
		default:
			r.Detail += " (valid)"
		}
		out = append(out, r)
	}
	return out
}

func checkMCP(ctx context.Context, stdio IO, _ agent.Options) []checkResult {
	servers, problems, err := configcmd.CheckMCPServers(ctx, stdio)
	if err != nil {
		return []checkResult{{Check: "mcp", Verdict: verdictFail, Detail: err.Error(), Fix: "fix the file named"}}
	}
	var out []checkResult
	for _, p := range problems {
		out = append(out, checkResult{Check: "mcp", Verdict: verdictFail, Detail: p.Error(), Fix: "fix the file at the line and column named"})
	}
	for _, s := range servers {
		r := checkResult{Check: "mcp " + s.Name, Verdict: s.Verdict, Detail: s.Status + " (" + s.Where + ")"}
		if s.Detail != "" {
			if s.Verdict == verdictOK {
				r.Detail += ": " + s.Detail
			} else {
				r.Fix = s.Detail
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		out = append(out, checkResult{Check: "mcp", Verdict: verdictOK, Detail: "no servers configured"})
	}
	return out
}

// checkLSP starts each configured language server once (none configured:
// no line, as most folders have none).
func checkLSP(ctx context.Context, _ IO, opts agent.Options) []checkResult {
	servers, err := agent.CheckLanguageServers(ctx, opts)
	if err != nil {
		return []checkResult{{Check: "lsp", Verdict: verdictFail, Detail: err.Error(), Fix: "fix the file named"}}
	}
	var out []checkResult
	for _, s := range servers {
		r := checkResult{Check: "lsp " + s.Name, Verdict: verdictOK, Detail: s.Command + " starts (" + s.Source + ")"}
		if s.Err != nil {
			r.Verdict, r.Detail, r.Fix = verdictFail, s.Err.Error(), "install the server or fix its command in "+s.Source
		}
		out = append(out, r)
	}
	return out
}

func checkSandbox(_ context.Context, _ IO, opts agent.Options) []checkResult {
	r := checkResult{Check: "sandbox", Verdict: verdictOK}
	st, err := agent.CheckSandbox(opts)
	if err != nil {
		r.Verdict, r.Detail, r.Fix = verdictFail, err.Error(), "fix the sandbox settings"
		return []checkResult{r}
	}
	state := "off in settings"
	if st.Enabled {
		state = "enabled in settings"
	}
	switch {
	case st.Err != nil && st.Enabled:
		r.Verdict, r.Detail = verdictFail, fmt.Sprintf("%s, but unavailable: %v", state, st.Err)
		r.Fix = "install bubblewrap and allow unprivileged user namespaces, or set sandbox.enabled to false"
	case st.Err != nil:
		r.Verdict, r.Detail = verdictWarn, fmt.Sprintf("unavailable (%s): %v", state, st.Err)
		r.Fix = "install bubblewrap to be able to turn it on"
	case st.Gaps != "":
		r.Detail = fmt.Sprintf("%s (%s): %s", st.Backend, state, strings.TrimPrefix(st.Gaps, "sandbox: "))
		if st.Enabled {
			r.Verdict, r.Fix = verdictWarn, "install bubblewrap (apt-get install bubblewrap) for the full sandbox"
		}
	default:
		r.Detail = fmt.Sprintf("%s (%s)", st.Backend, state)
	}
	return []checkResult{r}
}
