package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

func TestSplitRules(t *testing.T) {
	cases := map[string][]string{
		"Bash,Read":                       {"Bash", "Read"},
		"Bash Read":                       {"Bash", "Read"},
		"Bash(git log *), Read":           {"Bash(git log *)", "Read"},
		"Bash(npm run test:*) Edit(*.ts)": {"Bash(npm run test:*)", "Edit(*.ts)"},
		"":                                nil,
	}
	for in, want := range cases {
		if got := splitRules([]string{in}); !slices.Equal(got, want) {
			t.Errorf("splitRules(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadPrompt(t *testing.T) {
	got, err := readPrompt(IO{In: strings.NewReader("log line\n\n")}, []string{"what?"})
	if err != nil || got != "log line\n\nwhat?" {
		t.Errorf("%q %v", got, err)
	}
	if got, _ := readPrompt(IO{In: strings.NewReader("ignored"), StdinIsTerminal: true}, []string{"q"}); got != "q" {
		t.Errorf("a terminal was read: %q", got)
	}
	// Blank input is no prompt: a SessionStart hook may give the first
	// message, and the session says when none does (TestNoPrompt).
	if got, err := readPrompt(IO{In: strings.NewReader("  \n")}, nil); err != nil || got != "" {
		t.Errorf("blank input: %q %v", got, err)
	}
}

// TestNoPrompt: print mode without a prompt, and without a SessionStart
// hook giving a first message, is a usage error; nothing is asked.
func TestNoPrompt(t *testing.T) {
	srv := llmtest.New(t)
	_, errOut, code := run(t, srv, "-p")
	if code != 1 || !strings.Contains(errOut, "no prompt: give one as an argument") || len(srv.Requests()) != 0 {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// run runs the command in-process against a fake API.
func run(t *testing.T, srv *llmtest.Server, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("ANTHROPIC_API_KEY", "k")
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL())
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func TestJSONVerboseIsAnArrayOfEveryMessage(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("a"), llmtest.Text("b")))
	out, errOut, code := run(t, srv, "-p", "hi", "--output-format", "json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(out), &msgs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var types []string
	for _, m := range msgs {
		types = append(types, m["type"].(string))
	}
	if strings.Join(types, " ") != "system assistant assistant result" || msgs[3]["result"] != "ab" {
		t.Errorf("messages %v", msgs)
	}
}

func TestTextModeErrorGoesToStderr(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.ToolUse("Read", map[string]string{"file_path": "/etc/hostname"})))
	out, errOut, code := run(t, srv, "-p", "hi", "--max-turns", "1")
	if code != 1 || out != "" || !strings.Contains(errOut, "Reached maximum number of turns (1)") {
		t.Errorf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestFlagsBecomeOptions(t *testing.T) {
	cmd := newRootCmd(IO{})
	f := &printFlags{}
	cmd.ResetFlags()
	f.register(cmd)
	if err := cmd.ParseFlags([]string{"--tools", "", "--allowedTools", "Bash(git *),Read", "--disallowedTools=Write",
		"--dangerously-skip-permissions", "--system-prompt", "", "--max-turns=3"}); err != nil {
		t.Fatal(err)
	}
	opts, err := f.options(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Tools == nil || len(opts.Tools) != 0 {
		t.Errorf("--tools \"\" gives %v, want none", opts.Tools)
	}
	if !slices.Equal(opts.AllowedTools, []string{"Bash(git *)", "Read"}) || !slices.Equal(opts.DisallowedTools, []string{"Write"}) {
		t.Errorf("lists %v %v", opts.AllowedTools, opts.DisallowedTools)
	}
	// A rule list on several lines (as a workflow's YAML block gives it) or
	// with quotes inside a rule is split by tack's rule grammar, not read as
	// CSV, which kept only the first line and refused a bare quote.
	lines := newRootCmd(IO{})
	lf := &printFlags{}
	lines.ResetFlags()
	lf.register(lines)
	if err := lines.ParseFlags([]string{"--allowedTools", "Read\nBash(touch:*)\r\nBash(git commit -m \"a, b\")", "--allowedTools", "Glob",
		"--disallowedTools", "Write\nEdit"}); err != nil {
		t.Fatal(err)
	}
	lopts, err := lf.options(lines)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Read", "Bash(touch:*)", `Bash(git commit -m "a, b")`, "Glob"}; !slices.Equal(lopts.AllowedTools, want) {
		t.Errorf("allowed %q, want %q", lopts.AllowedTools, want)
	}
	if want := []string{"Write", "Edit"}; !slices.Equal(lopts.DisallowedTools, want) {
		t.Errorf("disallowed %q, want %q", lopts.DisallowedTools, want)
	}
	if opts.PermissionMode != agent.PermissionBypass || opts.SystemPrompt == nil || *opts.SystemPrompt != "" || opts.MaxTurns != 3 {
		t.Errorf("options %+v", opts)
	}
}

func TestPermissionModeAuto(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	out, errOut, code := run(t, srv, "-p", "--permission-mode", "auto", "--output-format", "stream-json", "--verbose", "hi")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `"permissionMode":"auto"`) || !strings.Contains(out, `"subtype":"success"`) {
		t.Errorf("output %s", out)
	}
}

// TestMCPThroughMain runs `tack mcp` as users do: mounted in the root
// command, with its usage errors and exit codes.
func TestMCPThroughMain(t *testing.T) {
	if c, _, err := newRootCmd(IO{}).Find([]string{"mcp", "list"}); err != nil || c.Name() != "list" {
		t.Fatalf("tack mcp list is not registered in newRootCmd: %v", err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Chdir(t.TempDir())
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"mcp", "add", "-t", "http"}, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 1 || errOut.String() != "tack: missing the server name\nRun 'tack mcp add --help' for usage.\n" {
		t.Errorf("exit %d: %q", code, errOut.String())
	}
	code = Main(context.Background(), []string{"mcp", "list"}, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 0 || !strings.Contains(out.String(), "No MCP servers configured") {
		t.Errorf("exit %d: %s %s", code, out.String(), errOut.String())
	}
}

// tack --version, alone, is answered before the command tree is built;
// with other arguments, by the flag: both say the same.
func TestVersionWithAndWithoutTheCommandTree(t *testing.T) {
	srv := llmtest.New(t)
	for _, alone := range []string{"--version", "-v"} {
		fast, _, code := run(t, srv, alone)
		flag, _, flagCode := run(t, srv, alone, "--verbose")
		if code != 0 || flagCode != 0 || fast != flag || !strings.HasSuffix(fast, " (tack)\n") {
			t.Errorf("%s: %d %q; through the flag: %d %q", alone, code, fast, flagCode, flag)
		}
	}
	if len(srv.Requests()) != 0 {
		t.Error("--version made a request")
	}
}
