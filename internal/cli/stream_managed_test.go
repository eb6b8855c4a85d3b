package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// hostPolicy is what an SDK host imposes in these tests: echo in Bash
// denied (a rule on the command, so the tool stays and the call meets it), and
// keys that would widen access (a hook, bypass as the default mode, a
// model), which must be dropped with a notice naming each.
func hostPolicy(hookMark string) map[string]any {
	return map[string]any{
		"permissions": map[string]any{"deny": []any{"Bash(echo *)"}, "defaultMode": "bypassPermissions"},
		"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "", "hooks": []any{
			map[string]any{"type": "command", "command": "touch " + hookMark}}}}},
		"model": "haiku",
	}
}

// bashDenied checks that the scripted Bash call did not run: its file is
// not there and the model was told the call was refused.
func bashDenied(t *testing.T, srv *llmtest.Server, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error("Bash ran despite the host's deny rule")
	}
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if r := reqs[1].ToolResults()[0]; !r.IsError || !strings.Contains(llm.TextOf(r.Content), "in managed --managed-settings") {
		t.Errorf("tool result %+v", r)
	}
}

// droppedNotices checks that stderr names each widening key as dropped.
func droppedNotices(t *testing.T, stderr string) {
	t.Helper()
	for _, key := range []string{"hooks", "permissions.defaultMode", "model"} {
		if !strings.Contains(stderr, "--managed-settings") || !strings.Contains(stderr, key+": dropped") {
			t.Errorf("no notice that %s was dropped; stderr:\n%s", key, stderr)
		}
	}
}

func bashTurns() []llmtest.Turn {
	return []llmtest.Turn{
		llmtest.Reply(llmtest.ToolUse("Bash", map[string]any{"command": "echo ran > out.txt", "description": "write"})),
		llmtest.Reply(llmtest.Text("done")),
	}
}

// TestStreamManagedSettingsFlag: the Agent SDK's managedSettings on the
// command line. The deny rule holds against --allowedTools and
// bypassPermissions; the widening keys are dropped, each with a notice,
// and the host's hook never runs.
func TestStreamManagedSettingsFlag(t *testing.T) {
	srv := llmtest.New(t, bashTurns()...)
	t.Setenv("TACK_MANAGED_SETTINGS", filepath.Join(t.TempDir(), "absent.json"))
	mark := filepath.Join(t.TempDir(), "hook-ran")
	policy, _ := json.Marshal(hostPolicy(mark))
	p := startPeer(t, srv, "--managed-settings", string(policy), "--allowedTools", "Bash", "--permission-mode", "bypassPermissions")
	p.user("write it")
	if res := p.until(isType("result")); res["result"] != "done" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	bashDenied(t, srv, p.dir)
	droppedNotices(t, p.errOut.String())
	if _, err := os.Stat(mark); err == nil {
		t.Error("the host's hook ran")
	}
	if model := srv.Requests()[0].Model; strings.Contains(model, "haiku") {
		t.Errorf("the host's model was applied: %s", model)
	}
}

// TestStreamManagedSettingsInInitialize: managedSettingsDelivery
// 'initialize'. The answer confirms them (the SDK ends the session
// otherwise), and they hold as on the command line.
func TestStreamManagedSettingsInInitialize(t *testing.T) {
	srv := llmtest.New(t, bashTurns()...)
	t.Setenv("TACK_MANAGED_SETTINGS", filepath.Join(t.TempDir(), "absent.json"))
	mark := filepath.Join(t.TempDir(), "hook-ran")
	p := startPeer(t, srv, "--managed-settings-in-initialize", "--allowedTools", "Bash", "--permission-mode", "bypassPermissions")
	p.controlRequest("init1", map[string]any{"subtype": "initialize", "managedSettings": hostPolicy(mark)})
	resp := p.until(isResponseTo("init1"))["response"].(map[string]any)
	if resp["subtype"] != "success" || resp["response"].(map[string]any)["managed_settings_applied"] != true {
		t.Fatalf("initialize answer %v", resp)
	}
	p.user("write it")
	if res := p.until(isType("result")); res["result"] != "done" {
		t.Fatalf("result %v", res)
	}
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	bashDenied(t, srv, p.dir)
	droppedNotices(t, p.errOut.String())
	if _, err := os.Stat(mark); err == nil {
		t.Error("the host's hook ran")
	}
}

// TestStreamManagedSettingsInInitializeRequired: the flag promises managed
// settings in initialize; without them no session starts, as in Claude
// Code, and no model request is made.
func TestStreamManagedSettingsInInitializeRequired(t *testing.T) {
	for name, first := range map[string]func(p *sdkPeer){
		"initialize without them": func(p *sdkPeer) { p.controlRequest("init1", map[string]any{"subtype": "initialize"}) },
		"no initialize":           func(p *sdkPeer) { p.user("hi") },
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Reply(llmtest.Text("hi")))
			p := startPeer(t, srv, "--managed-settings-in-initialize")
			first(p)
			if code := p.finish(); code == 0 || !strings.Contains(p.errOut.String(), "--managed-settings-in-initialize requires initialize.managedSettings") {
				t.Errorf("exit %d: %s", code, p.errOut.String())
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests", n)
			}
		})
	}
}

// TestManagedSettingsInInitializeNeedsStreamJSON: in print mode with a
// prompt there is no initialize to carry them.
func TestManagedSettingsInInitializeNeedsStreamJSON(t *testing.T) {
	srv := llmtest.New(t)
	_, errOut, code := run(t, srv, "-p", "hi", "--managed-settings-in-initialize")
	if code != 1 || !strings.Contains(errOut, "--managed-settings-in-initialize needs --input-format stream-json") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestManagedSettingsNotAnObject: bad input is refused, naming the flag.
func TestManagedSettingsNotAnObject(t *testing.T) {
	srv := llmtest.New(t)
	t.Setenv("TACK_MANAGED_SETTINGS", filepath.Join(t.TempDir(), "absent.json"))
	_, errOut, code := run(t, srv, "-p", "hi", "--managed-settings", `["Bash"]`)
	if code == 0 || !strings.Contains(errOut, "--managed-settings") || !strings.Contains(errOut, "JSON object") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestStreamGetSettingsShowsTheHostLayer: get_settings lists the host's
// managed settings as the policy layer, as far as they apply.
func TestStreamGetSettingsShowsTheHostLayer(t *testing.T) {
	srv := llmtest.New(t)
	t.Setenv("TACK_MANAGED_SETTINGS", filepath.Join(t.TempDir(), "absent.json"))
	p := startPeer(t, srv, "--managed-settings", `{"permissions": {"deny": ["Bash"], "defaultMode": "bypassPermissions"}, "model": "haiku"}`)
	p.controlRequest("init1", map[string]any{"subtype": "initialize"})
	p.until(isResponseTo("init1"))
	got := p.ask("g", map[string]any{"subtype": "get_settings"})
	if code := p.finish(); code != 0 {
		t.Fatalf("exit %d: %s", code, p.errOut.String())
	}
	sources, _ := json.Marshal(got["sources"])
	if want := `[{"path":"--managed-settings","settings":{"permissions":{"deny":["Bash"]}},"source":"policySettings"}]`; string(sources) != want {
		t.Errorf("sources %s\nwant    %s", sources, want)
	}
}
