package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/gitroot"
	"github.com/tackcode/tack/internal/jsontree"
)

// Workspace trust, kept where Claude Code keeps it, so that a folder
// trusted in one is trusted in the other: ~/.claude.json (ClaudeJSONPath)
// holds
//
//	{"projects": {"/abs/path": {"hasTrustDialogAccepted": true, …}, …}, …}
//
// The store lives here, beside the settings it governs, rather than in
// internal/permission, which reads no files.

// trustField is the member of a project's entry that records trust.
const trustField = "hasTrustDialogAccepted"

// TrustKey is the key under "projects" that the trust of the folder dir is
// recorded under: the canonical root of the git repository holding dir,
// else dir itself. The path is absolute with its symbolic links resolved,
// the working directory the kernel (and so Claude Code) reports. The
// repository root is the nearest folder at or above dir holding a .git
// entry (a directory, or the file of a worktree or submodule); a linked
// worktree's canonical root is its main checkout (see canonicalRoot), so
// that trusting a repository once covers its worktrees, as in Claude Code.
// All of it is found without running git, which would read the
// repository's own configuration.
func TrustKey(dir string) (string, error) {
	dir, err := physical(dir)
	if err != nil {
		return "", err
	}
	if root := gitroot.Find(dir); root != "" {
		return canonicalRoot(root), nil
	}
	return dir, nil
}

// canonicalRoot is the main checkout of the linked worktree root (the
// folder whose .git is a file), or the bare repository it belongs to; root
// itself for anything else: a main checkout, a submodule, or a .git file
// whose links do not agree. The links must agree both ways — root/.git
// names a gitdir inside <common>/worktrees/, whose gitdir file names
// root/.git back — because a cloned folder can hold any .git file it likes:
// without the back link, one could claim a trusted repository as its main
// checkout and inherit that trust.
func canonicalRoot(root string) string {
	dotGit := filepath.Join(root, ".git")
	gitDir, ok := linkFile(dotGit, "gitdir: ", root)
	if !ok {
		return root
	}
	common, ok := linkFile(filepath.Join(gitDir, "commondir"), "", gitDir)
	if !ok || filepath.Dir(gitDir) != filepath.Join(common, "worktrees") {
		return root
	}
	back, ok := linkFile(filepath.Join(gitDir, "gitdir"), "", gitDir)
	if !ok || back != dotGit {
		return root
	}
	if filepath.Base(common) != ".git" {
		return common // a worktree of a bare repository
	}
	return filepath.Dir(common)
}

// linkFile reads the path a small regular file of git's holds after
// prefix, made absolute against dir and physical; ok is false for anything
// else (missing, a symbolic link, no prefix, a path that does not exist).
func linkFile(path, prefix, dir string) (string, bool) {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), prefix)
	if !ok || target == "" || strings.ContainsRune(target, 0) {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return "", false
	}
	return real, true
}

// physical is dir made absolute, its symbolic links resolved.
func physical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", dir, cause(err))
	}
	return real, nil
}

// TrustedBy returns the folder whose entry in claudeJSON trusts the folder
// dir, or "" when none does. As in Claude Code, the entry of dir's TrustKey
// counts, then dir's own; when exact is false — the folder brings no code of
// its own (hooks, MCP servers, allow rules, plugins…) — a trusted folder
// above dir counts too, the nearest first. exact keeps a repository placed
// under a trusted folder (a clone in ~/src) from being trusted with it.
//
// A missing file trusts nothing. A file that is not valid JSON is an *Error
// naming its line and column.
func TrustedBy(claudeJSON, dir string, exact bool) (string, error) {
	dir, err := physical(dir)
	if err != nil {
		return "", err
	}
	cands := []string{dir}
	if root := gitroot.Find(dir); root != "" {
		// The canonical root first (a worktree's main checkout), then the
		// worktree's own root, then dir.
		if canon := canonicalRoot(root); canon != root {
			cands = []string{canon, root}
		} else {
			cands = []string{root}
		}
		if root != dir {
			cands = append(cands, dir)
		}
	}
	if !exact {
		for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
			cands = append(cands, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	projects, err := readProjects(claudeJSON, cands)
	if err != nil || projects == nil {
		return "", err
	}
	for _, c := range cands {
		if v := projects.Lookup(c).Lookup(trustField); v != nil && v.Kind == jsontree.Bool && v.Bool {
			return c, nil
		}
	}
	return "", nil
}

// readProjects parses of claudeJSON only the trust fields of the entries
// keys; nil when the file or its "projects" object is missing. The rest of
// the file (Claude Code's history of every project) is checked, not built.
func readProjects(claudeJSON string, keys []string) (*jsontree.Node, error) {
	src, exists, err := ReadJSONFile(claudeJSON, MaxClaudeJSONSize)
	if err != nil {
		return nil, &Error{Source: Source{Path: claudeJSON}, Msg: "cannot read Claude Code's configuration", Err: err}
	}
	if !exists {
		return nil, nil
	}
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	root, serr := jsontree.Parse(src, func(p []string) jsontree.Build {
		switch {
		case len(p) == 1 && p[0] == "projects",
			len(p) == 2 && p[0] == "projects" && slices.Contains(keys, p[1]):
			return jsontree.Filtered
		case len(p) == 3 && p[0] == "projects" && p[2] == trustField && slices.Contains(keys, p[1]):
			return jsontree.Full
		}
		return jsontree.Shallow
	})
	if serr != nil {
		line, col := jsontree.NewLines(src).Pos(serr.Off)
		return nil, &Error{Source: Source{Path: claudeJSON, Line: line, Col: col}, Msg: "invalid JSON: " + serr.Msg}
	}
	if root == nil {
		return nil, nil
	}
	if root.Kind != jsontree.Object {
		return nil, &Error{Source: Source{Path: claudeJSON}, Msg: fmt.Sprintf("expected a JSON object, got %s", root.Kind)}
	}
	return root.Lookup("projects"), nil
}

// Trust records in claudeJSON that the user trusts the folder key (a
// TrustKey): projects[key].hasTrustDialogAccepted becomes true. Only those
// bytes change; the rest of the file, and of the project's entry, stays as
// it was. The edit holds Claude Code's lock on the file.
func Trust(claudeJSON, key string) error {
	return EditClaudeJSON(claudeJSON, func(e *jsontree.Editor) (bool, error) {
		path := []string{"projects", key, trustField}
		v, err := e.Lookup(path)
		if err == nil && v != nil && v.Kind == jsontree.Bool && v.Bool {
			return false, nil
		}
		if err == nil {
			err = e.Set(path, []byte("true"))
		}
		if err != nil {
			return false, fmt.Errorf("%s: %w", claudeJSON, err)
		}
		return true, nil
	})
}

// untrustedKeys are what the settings of an untrusted folder still set:
// rules and a switch that can only restrict the session.
var untrustedKeys = []string{"permissions.deny", "permissions.ask", "permissions.disableBypassPermissionsMode"}

// codeKeys are keys of Claude Code's that tack does not act on, but that
// name commands Claude Code runs: an untrusted folder's are reported as
// left out, which they are, so that the user hears of them.
var codeKeys = []string{"otelHeadersHelper", "awsAuthRefresh", "awsCredentialExport"}

// distrust keeps of the document (checked already) only untrustedKeys,
// and records every other key it sets in d.ignored.
func (d *document) distrust(root *jsontree.Node) {
	ignore := func(m jsontree.Member, key string) {
		v := m.Value
		empty := v.Kind == jsontree.Null || v.Kind == jsontree.Object && len(v.Members) == 0 || v.Kind == jsontree.Array && len(v.Elems) == 0
		if empty || slices.Contains(untrustedKeys, key) {
			return
		}
		d.ignored = append(d.ignored, Item{Text: key, Source: d.at(m.KeyOff)})
	}
	for _, m := range root.Members {
		switch {
		case m.Key == "permissions" && m.Value.Kind == jsontree.Object:
			for _, pm := range m.Value.Members {
				if slices.Contains(permissionKeys, pm.Key) {
					ignore(pm, "permissions."+pm.Key)
				}
			}
		case slices.Contains(topLevelKeys, m.Key) || slices.Contains(codeKeys, m.Key):
			ignore(m, m.Key)
		}
	}
	p := d.settings.Permissions
	d.settings = Settings{Permissions: Permissions{Deny: p.Deny, Ask: p.Ask, DisableBypassPermissionsMode: p.DisableBypassPermissionsMode}}
	for k := range d.origins {
		if !slices.Contains(untrustedKeys, k) {
			delete(d.origins, k)
		}
	}
}

// requireTrust reads requireWorkspaceTrust, which only the user and the
// administrator may set: a project must not be able to switch off the
// refusal of untrusted folders, and has no reason to switch it on.
func (d *document) requireTrust(v *jsontree.Node, key string) *Error {
	var b *bool
	if err := d.scalarBool(v, key, &b); err != nil {
		return err
	}
	switch {
	case d.source.Scope == ScopeProject || d.source.Scope == ScopeLocal:
		d.warn(v.Off, key, "has an effect only in managed, user or --settings settings; ignored here")
	case *b:
		d.settings.RequireWorkspaceTrust = true
		return nil
	}
	// false is the default: it neither sets nor overrides anything.
	delete(d.origins, key)
	return nil
}
