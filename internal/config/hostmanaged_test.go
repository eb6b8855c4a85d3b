package config

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// warned returns the keys of the warnings whose message contains part.
func warned(m *Merged, part string) []string {
	var keys []string
	for _, w := range m.Warnings {
		if strings.Contains(w.Msg, part) {
			keys = append(keys, w.Key)
		}
	}
	return keys
}

// TestHostManagedKeepsOnlyRestrictiveKeys gives the host's managed
// settings both kinds of key: the restrictive ones apply, as managed
// settings, and every other one is dropped with a warning naming it.
func TestHostManagedKeepsOnlyRestrictiveKeys(t *testing.T) {
	e := newEnv(t)
	e.write(ScopeProject, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
		"sandbox": {"enabled": true, "network": {"allowedDomains": ["example.com"]}}}`)
	m := e.load(func(o *LoadOptions) {
		o.HostManaged = `{"model": "opus", "env": {"A": "1"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo host"}]}]},
			"permissions": {"deny": ["Bash"], "ask": ["Write"], "defaultMode": "bypassPermissions", "disableBypassPermissionsMode": "disable"},
			"disableAllHooks": true, "enableAllProjectMcpServers": true, "deniedMcpServers": [{"serverName": "x"}],
			"sandbox": {"allowUnsandboxedCommands": false, "autoAllowBashIfSandboxed": true, "network": {"deniedDomains": ["evil.com"], "allowUnixSockets": ["/s"]}}}`
	})
	if got := Texts(m.Permissions.Deny); !reflect.DeepEqual(got, []string{"Bash"}) {
		t.Errorf("deny = %v", got)
	}
	if m.Permissions.Deny[0].Source.Scope != ScopeManaged || m.Permissions.Deny[0].Source.Path != HostManagedPath {
		t.Errorf("deny rule's source = %+v", m.Permissions.Deny[0].Source)
	}
	if got := Texts(m.Permissions.Ask); !reflect.DeepEqual(got, []string{"Write"}) {
		t.Errorf("ask = %v", got)
	}
	if !m.Permissions.DisableBypassPermissionsMode {
		t.Error("disableBypassPermissionsMode not applied")
	}
	if m.Model != "" || m.Env != nil || m.Permissions.DefaultMode != "" || m.EnableAllProjectMcpServers != nil {
		t.Errorf("widening keys applied: model %q env %v defaultMode %q enableAllProjectMcpServers %v",
			m.Model, m.Env, m.Permissions.DefaultMode, m.EnableAllProjectMcpServers)
	}
	// disableAllHooks binds as allowManagedHooksOnly: the project's hook
	// stops, and the host's own hook never was kept.
	if m.AllowManagedHooksOnly == nil || !*m.AllowManagedHooksOnly || len(m.Hooks) != 0 {
		t.Errorf("allowManagedHooksOnly %v, hooks %v", m.AllowManagedHooksOnly, m.Hooks)
	}
	widening := warned(m, "would widen access")
	for _, k := range []string{"model", "env", "hooks", "permissions.defaultMode", "enableAllProjectMcpServers"} {
		if !strings.Contains(strings.Join(widening, " "), k) {
			t.Errorf("no warning names %s (warned: %v)", k, widening)
		}
	}
	if got := warned(m, "does not implement"); !reflect.DeepEqual(got, []string{"deniedMcpServers"}) {
		t.Errorf("unimplemented restrictive keys warned: %v", got)
	}
	if got := warned(m, "sandbox's restrictive keys"); !reflect.DeepEqual(got, []string{"sandbox.autoAllowBashIfSandboxed", "sandbox.network.allowUnixSockets"}) {
		t.Errorf("sandbox keys warned: %v", got)
	}
	// What applies of them, as get_settings shows the layer.
	view, _ := json.Marshal(m.HostManaged)
	wantView := `{"allowManagedHooksOnly":true,"permissions":{"ask":["Write"],"deny":["Bash"],"disableBypassPermissionsMode":"disable"},` +
		`"sandbox":{"allowUnsandboxedCommands":false,"network":{"deniedDomains":["evil.com"]}}}`
	if string(view) != wantView {
		t.Errorf("HostManaged = %s\nwant         %s", view, wantView)
	}
	// The host's sandbox limits tighten the project's sandbox.
	var sb map[string]any
	if err := json.Unmarshal(m.Sandbox, &sb); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"enabled": true, "allowUnsandboxedCommands": false,
		"network": map[string]any{"allowedDomains": []any{"example.com"}, "deniedDomains": []any{"evil.com"}}}
	if !reflect.DeepEqual(sb, want) {
		t.Errorf("sandbox = %s", m.Sandbox)
	}
}

// TestHostManagedUnderTheManagedFile: the administrator's file is the
// policy tier, and the host's settings are left out unless it says merge;
// then they layer under it.
func TestHostManagedUnderTheManagedFile(t *testing.T) {
	host := func(o *LoadOptions) { o.HostManaged = `{"permissions": {"deny": ["Bash"]}}` }
	e := newEnv(t)
	e.write(ScopeManaged, `{"permissions": {"deny": ["Edit"]}}`)
	m := e.load(host)
	if got := Texts(m.Permissions.Deny); !reflect.DeepEqual(got, []string{"Edit"}) {
		t.Errorf("first-wins: deny = %v", got)
	}
	if got := warned(m, "left out"); !reflect.DeepEqual(got, []string{HostManagedPath}) {
		t.Errorf("first-wins: warnings %v", m.Warnings)
	}

	e.write(ScopeManaged, `{"parentSettingsBehavior": "merge", "permissions": {"deny": ["Edit"]}}`)
	m = e.load(host)
	if got := Texts(m.Permissions.Deny); !reflect.DeepEqual(got, []string{"Bash", "Edit"}) {
		t.Errorf("merge: deny = %v", got)
	}
	if n := len(m.Files); n != 2 || m.Files[0].Path != HostManagedPath || m.Files[1].Path != e.managed {
		t.Errorf("merge: files = %+v", m.Files)
	}
}

func TestHostManagedMustBeAnObject(t *testing.T) {
	e := newEnv(t)
	for _, bad := range []string{`["deny"]`, `{"permissions": {"deny": "Bash"}}`, `{`} {
		o := e.opts()
		o.HostManaged = bad
		_, err := Load(o)
		if err == nil || !strings.Contains(err.Error(), HostManagedPath) {
			t.Errorf("%s: err = %v, want one naming %s", bad, err, HostManagedPath)
		}
	}
}
