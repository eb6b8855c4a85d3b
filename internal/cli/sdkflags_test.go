package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

// sdkBundles are the Agent SDK builds the test fixtures install: the SDK's
// own (test/sdk) and the one the AI SDK provider runs on (test/aisdk).
var sdkBundles = []string{
	"../../test/sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs",
	"../../test/aisdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs",
}

// otherClientFlags are flags official clients pass that the installed
// bundles do not build: the ACP adapters' extraArgs
// (@zed-industries/claude-agent-acp 0.23.1 and
// @agentclientprotocol/claude-agent-acp 0.101.0 both add
// replay-user-messages), and those of the Agent SDK 0.2.83 that the Zed
// adapter bundles.
var otherClientFlags = []string{"replay-user-messages", "assistant", "proactive", "debug-to-stderr"}

var (
	// argvFlag is a flag literal in the SDK's argv builder: "--name" or
	// `--name`.
	argvFlag = regexp.MustCompile("[\"`]--([a-zA-Z][a-zA-Z0-9-]*)")
	// extraArg is an option the builder passes through extraArgs, as
	// `if(this.options.settings)x.settings=this.options.settings`.
	extraArg = regexp.MustCompile(`if\(this\.options\.(\w+)\)\w+\.(\w+)=this\.options\.\w+`)
)

// sdkArgvFlags reads the flags the SDK's spawn code builds: the part of
// the bundle from its first argument (--output-format stream-json) to the
// spawn, which logs "Spawning Claude Code".
func sdkArgvFlags(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the Agent SDK bundle (install the fixtures: scripts/test, or npm ci --prefix %s): %v", filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path)))), err)
	}
	start := bytes.Index(src, []byte(`["--output-format","stream-json"`))
	end := bytes.Index(src[max(start, 0):], []byte("Spawning Claude Code"))
	if start < 0 || end < 0 {
		t.Fatalf("%s: the argv builder is not where it was (between --output-format stream-json and \"Spawning Claude Code\"): read the new bundle", path)
	}
	region := src[start : start+end]
	var flags []string
	for _, m := range argvFlag.FindAllSubmatch(region, -1) {
		flags = append(flags, string(m[1]))
	}
	for _, m := range extraArg.FindAllSubmatch(region, -1) {
		flags = append(flags, string(m[2]))
	}
	slices.Sort(flags)
	return slices.Compact(flags)
}

// Every flag the official clients pass is one tack has: implemented
// (registered in flags.go) or in the table of flags it accepts for a
// reason. The extraction is checked to find flags it must find, so a
// bundle laid out anew fails here rather than passing with nothing read.
func TestSDKFlagsAreImplementedOrDocumented(t *testing.T) {
	root := newRootCmd(IO{})
	table := map[string]bool{}
	for _, f := range sdkFlags() {
		table[f.Name] = true
	}
	seen := slices.Clone(otherClientFlags)
	for _, path := range sdkBundles {
		flags := sdkArgvFlags(t, path)
		for _, must := range []string{"output-format", "input-format", "model", "resume", "mcp-config", "settings"} {
			if !slices.Contains(flags, must) {
				t.Errorf("%s: --%s not found among the flags read (%v): the extraction is broken", path, must, flags)
			}
		}
		seen = append(seen, flags...)
	}
	slices.Sort(seen)
	for _, name := range slices.Compact(seen) {
		fl := root.Flags().Lookup(name)
		switch {
		case fl == nil:
			t.Errorf("--%s: passed by an official client, neither implemented nor in sdkFlags()", name)
		case table[name] && !fl.Hidden:
			t.Errorf("--%s: in sdkFlags() but shown in --help as if implemented", name)
		}
	}
}

// The README's table of those flags is sdkFlags(): the same flags, the
// same reasons, nothing more.
func TestSDKFlagsREADMETable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### "+readmeSection+"\n")
	if !ok {
		t.Fatalf("README has no section %q", readmeSection)
	}
	if next := strings.Index(section, "\n#"); next >= 0 {
		section = section[:next]
	}
	row := regexp.MustCompile("(?m)^\\| `--([a-z0-9-]+)` \\| (.+) \\|$")
	got := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		got[m[1]] = m[2]
	}
	for _, f := range sdkFlags() {
		want := f.Reason
		if r, ok := got[f.Name]; !ok {
			t.Errorf("README lacks --%s (reason: %s)", f.Name, want)
		} else if r != want {
			t.Errorf("README --%s:\n got %s\nwant %s", f.Name, r, want)
		}
		delete(got, f.Name)
	}
	for name := range got {
		t.Errorf("README lists --%s, which sdkFlags() does not", name)
	}
}

// Every flag of the table, given as a client gives it, leaves a print-mode
// run as it was: it starts, answers, and says nothing about the flag.
func TestSDKFlagsChangeNothing(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("fine")))
	args := []string{"-p", "hi"}
	for _, f := range sdkFlags() {
		if f.Value {
			args = append(args, "--"+f.Name, "x")
		} else {
			args = append(args, "--"+f.Name)
		}
	}
	out, errOut, code := run(t, srv, args...)
	if code != 0 || strings.TrimSpace(out) != "fine" {
		t.Fatalf("exit %d, out %q, stderr %q", code, out, errOut)
	}
	for _, f := range sdkFlags() {
		if strings.Contains(errOut, f.Name) {
			t.Errorf("stderr mentions --%s: %q", f.Name, errOut)
		}
	}
}

// --permission-prompts none: with --permission-prompt-tool=stdio as the
// SDK passes it, nobody is asked; the call that needs approval is denied.
func TestPermissionPromptsNone(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "touch made.txt"})),
		llmtest.Reply(llmtest.Text("done")))
	p := startPeer(t, srv, "--permission-prompt-tool=stdio", "--permission-prompts", "none")
	p.controlRequest("i", map[string]any{"subtype": "initialize"})
	p.user("make a file")
	res := p.until(func(m map[string]any) bool { return isType("result")(m) || isControl("can_use_tool")(m) })
	if res["type"] != "result" {
		t.Fatalf("the host was asked: %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	if denials, _ := res["permission_denials"].([]any); len(denials) != 1 {
		t.Errorf("permission_denials %v", res["permission_denials"])
	}
	if _, err := os.Stat(filepath.Join(p.dir, "made.txt")); err == nil {
		t.Error("the call ran")
	}
}

// --task-budget and --debug-to-stderr act; a bad choice is a usage error
// naming the flag and what it takes.
func TestTaskBudgetDebugToStderrAndBadChoices(t *testing.T) {
	srv := llmtest.New(t, llmtest.Reply(llmtest.Text("ok")))
	_, errOut, code := run(t, srv, "-p", "hi", "--task-budget", "4000", "--debug-to-stderr")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if body := string(srv.Requests()[0].Body); !strings.Contains(body, `"task_budget":{"type":"tokens","total":4000}`) {
		t.Errorf("no task budget in %.400s", body)
	}
	if !strings.Contains(errOut, "[api]") {
		t.Errorf("no debug log on stderr: %s", errOut)
	}
	for flag, want := range map[string]string{
		"--effort=extreme":           `invalid --effort "extreme": want low, medium, high, xhigh, max`,
		"--thinking=sometimes":       `invalid --thinking "sometimes": want enabled, adaptive, disabled`,
		"--thinking-display=full":    `invalid --thinking-display "full": want summarized, omitted`,
		"--permission-prompts=other": `invalid --permission-prompts "other": want host, none`,
	} {
		_, errOut, code := run(t, srv, "-p", "hi", flag)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q", flag, code, errOut)
		}
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want the first run's only", n)
	}
}
