package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/jsontree"
)

// The host's managed settings are the policy tier an embedding program
// passes (the Agent SDK's managedSettings option, as --managed-settings or
// in the initialize request). Claude Code takes of them only what can
// restrict a session, and so does tack:
//
//   - they apply only when no managed-settings.json is present, or when
//     that file says "parentSettingsBehavior": "merge" (the administrator's
//     file wins otherwise, and the host's are left out whole);
//   - of what they set, only the keys below are kept, each at its strict
//     value; every other key is dropped, with a warning naming it;
//   - they sit under managed-settings.json and above --settings.

// HostManagedPath is the Source.Path of the host's managed settings.
const HostManagedPath = "--managed-settings"

// hostManagedKeys are the keys tack takes from the host's managed
// settings. The allow rules and additionalDirectories are kept, as Claude
// Code keeps them when no administrator's file locks the rules: the host
// could grant the same on the command line.
var hostManagedKeys = []string{
	"permissions.deny", "permissions.ask", "permissions.allow", "permissions.additionalDirectories",
	"permissions.disableBypassPermissionsMode", "allowManagedHooksOnly", "availableModels", "sandbox",
}

// hostRestrictiveUnknown are restrictive keys of Claude Code's that its
// filter keeps and tack has no implementation of: the warning says they
// do not apply, rather than calling them widening.
var hostRestrictiveUnknown = []string{
	"allowManagedPermissionRulesOnly", "allowManagedMcpServersOnly", "allowedMcpServers", "deniedMcpServers",
	"deniedModels", "enforceAvailableModels", "availableModelsMatch", "allowedProviders", "strictKnownMarketplaces",
	"blockedMarketplaces", "strictPluginOnlyCustomization", "disableSkillShellExecution", "disableAutoMode",
	"permissions.disableAutoMode", "permissions.denyInsteadOfPrompting",
	"permissions.blockReadsOutsideWorkingDirectories", "permissions.blockWritesOutsideWorkingDirectories",
}

// hostManagedDoc reads the host's managed settings: a JSON object, checked
// as a settings file is, then restricted (restrict).
func hostManagedDoc(src string, opts *LoadOptions) (*document, *Error) {
	source := Source{Scope: ScopeManaged, Path: HostManagedPath}
	trimmed := strings.TrimSpace(src)
	if !strings.HasPrefix(trimmed, "{") {
		return nil, &Error{Source: source, Msg: "managed settings must be a JSON object"}
	}
	doc, err := parseDocument([]byte(trimmed), source, opts)
	if err != nil {
		return nil, err
	}
	root, _ := jsontree.Parse(doc.src, nil)
	doc.restrict(root)
	return doc, nil
}

// restrict keeps of the host's managed settings (checked already) only
// hostManagedKeys at their strict values, and warns of every key dropped.
func (d *document) restrict(root *jsontree.Node) {
	var view map[string]any
	_ = json.Unmarshal(d.src, &view) // checked already: an object
	drop := func(m jsontree.Member, key string) {
		v := m.Value
		if v.Kind == jsontree.Null || slices.Contains(hostManagedKeys, key) {
			return
		}
		deletePath(view, key)
		msg := "dropped: a host's managed settings may only restrict, and this key would widen access or restricts nothing"
		if slices.Contains(hostRestrictiveUnknown, key) {
			msg = "dropped: tack does not implement this policy key, so it does not apply"
		}
		d.warn(m.KeyOff, key, msg)
	}
	for _, m := range root.Members {
		if m.Key == "permissions" && m.Value.Kind == jsontree.Object {
			for _, pm := range m.Value.Members {
				drop(pm, "permissions."+pm.Key)
			}
			continue
		}
		if m.Key == "disableAllHooks" {
			delete(view, m.Key) // bound as allowManagedHooksOnly, below
			continue
		}
		drop(m, m.Key)
	}
	s := d.settings
	kept := Settings{Permissions: Permissions{Deny: s.Permissions.Deny, Ask: s.Permissions.Ask, Allow: s.Permissions.Allow,
		AdditionalDirectories: s.Permissions.AdditionalDirectories, DisableBypassPermissionsMode: s.Permissions.DisableBypassPermissionsMode},
		AvailableModels: s.AvailableModels}
	// disableAllHooks from a host binds as allowManagedHooksOnly, as in
	// Claude Code: the host may stop every hook but the administrator's.
	if b := s.AllowManagedHooksOnly; b != nil && *b || s.DisableAllHooks != nil && *s.DisableAllHooks {
		t := true
		kept.AllowManagedHooksOnly = &t
		d.origins["allowManagedHooksOnly"] = d.source
		view["allowManagedHooksOnly"] = true
	} else {
		delete(d.origins, "allowManagedHooksOnly")
		delete(view, "allowManagedHooksOnly")
	}
	kept.Sandbox = d.restrictSandbox(root.Lookup("sandbox"))
	delete(view, "sandbox")
	if kept.Sandbox != nil {
		var sb any
		_ = json.Unmarshal(kept.Sandbox, &sb)
		view["sandbox"] = sb
	}
	d.hostView = view
	d.settings = kept
	for k := range d.origins {
		if !slices.Contains(hostManagedKeys, k) {
			delete(d.origins, k)
		}
	}
	if kept.Sandbox == nil {
		delete(d.origins, "sandbox")
	}
}

// sandboxStrict are the sandbox keys a host may set, each with the one
// value that restricts (nil: a list, kept as written).
var sandboxStrict = map[string]any{
	"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false,
	"network.allowManagedDomainsOnly": true, "network.deniedDomains": nil, "network.allowedDomains": nil,
	"filesystem.allowManagedReadPathsOnly": true, "filesystem.denyRead": nil, "filesystem.denyWrite": nil,
	"filesystem.allowRead": nil,
}

// restrictSandbox keeps of the host's "sandbox" object the keys of
// sandboxStrict, at their strict values; nil when none is left. The rest
// is warned of.
func (d *document) restrictSandbox(n *jsontree.Node) json.RawMessage {
	if n == nil || n.Kind != jsontree.Object {
		return nil
	}
	out := map[string]any{}
	var walk func(n *jsontree.Node, path string)
	walk = func(n *jsontree.Node, path string) {
		for _, m := range n.Members {
			key := join(path, m.Key)
			want, known := sandboxStrict[key]
			if m.Value.Kind == jsontree.Object && !known && (key == "network" || key == "filesystem") {
				walk(m.Value, key)
				continue
			}
			var v any
			if err := json.Unmarshal(raw(d.src, m.Value), &v); err != nil || !known || want != nil && v != want {
				d.warn(m.KeyOff, "sandbox."+key, "dropped: only the sandbox's restrictive keys, at their strict values, are taken from a host's managed settings")
				continue
			}
			setPath(out, key, v)
		}
	}
	walk(n, "")
	if len(out) == 0 {
		return nil
	}
	enc, err := json.Marshal(out)
	if err != nil {
		return nil // values decoded from JSON always encode
	}
	return enc
}

// deletePath deletes the dotted key from m.
func deletePath(m map[string]any, key string) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
}

// setPath sets the dotted key in m, making the objects on the way.
func setPath(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// layerSandbox lays the host's sandbox limits over the sandbox of the
// files below: objects merged, lists joined, the host's scalars (each a
// strict value) winning.
func layerSandbox(below, host json.RawMessage) (json.RawMessage, error) {
	var b, h map[string]any
	if len(below) > 0 && string(below) != "null" {
		if err := json.Unmarshal(below, &b); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	if err := json.Unmarshal(host, &h); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return json.Marshal(deepMerge(b, h))
}

func deepMerge(below, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range below {
		out[k] = v
	}
	for k, v := range over {
		switch ov := v.(type) {
		case map[string]any:
			bv, _ := out[k].(map[string]any)
			out[k] = deepMerge(bv, ov)
		case []any:
			bv, _ := out[k].([]any)
			out[k] = union(bv, ov)
		default:
			out[k] = v
		}
	}
	return out
}

func union(a, b []any) []any {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.ContainsFunc(out, func(y any) bool { return fmt.Sprint(y) == fmt.Sprint(x) }) {
			out = append(out, x)
		}
	}
	return out
}

// parentMerge reports whether the administrator's file lets the host's
// managed settings layer under it ("parentSettingsBehavior": "merge").
func parentMerge(managed *document) bool {
	raw, ok := managed.settings.Unknown["parentSettingsBehavior"]
	if !ok {
		return false
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == "merge"
}

// layHost puts the host's managed settings into layers, under the
// administrator's file, or leaves them out with a warning when that file
// is present and does not ask for them to be merged.
func layHost(layers []*document, host *document) []*document {
	n := len(layers)
	if n == 0 || layers[n-1].source.Scope != ScopeManaged {
		return append(layers, host)
	}
	if admin := layers[n-1]; !parentMerge(admin) {
		admin.warnings = append(admin.warnings, &Error{Source: host.source, Key: HostManagedPath,
			Msg: fmt.Sprintf("left out: the managed settings file %s is the policy tier (set \"parentSettingsBehavior\": \"merge\" in it to layer the host's restrictive settings under it)", admin.source.Path)})
		return layers
	}
	return append(layers[:n-1:n-1], host, layers[n-1])
}
