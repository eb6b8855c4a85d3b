package extension

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/lsp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// ManifestPath is where a plugin's manifest sits inside its folder.
const ManifestPath = ".claude-plugin/plugin.json"

// Author is a plugin's or marketplace's author.
type Author struct {
	Name  string `json:"name"`
	Email string `json:"email,omitempty"`
	URL   string `json:"url,omitempty"`
}

// Manifest is a plugin's .claude-plugin/plugin.json.
type Manifest struct {
	Name        string
	Description string
	Version     string
	Author      *Author
	Homepage    string
	Repository  string
	License     string
	Keywords    []string
	// Extra component paths, relative to the plugin folder, read besides
	// the default skills/, commands/ and agents/ folders.
	SkillPaths, CommandPaths, AgentPaths []string
	// hooks and mcpServers as the manifest gives them: a path, a list of
	// paths, or the configuration inline.
	hooks, mcpServers, lspServers *node
}

// Plugin is a loaded plugin: its manifest and its components, every name
// namespaced "plugin-name:".
type Plugin struct {
	Manifest
	// Root is the plugin folder.
	Root string
	// ID is "name@marketplace" for an installed plugin, "" for one given
	// with --plugin-dir.
	ID     string
	Agents []*Agent
	// Skills holds the plugin's skills and commands.
	Skills []*Skill
	// Hooks are hooks/hooks.json and the manifest's hooks, with
	// ${CLAUDE_PLUGIN_ROOT} expanded (Source "plugin:NAME").
	Hooks hook.Config
	// MCPServers come from .mcp.json and the manifest, scope plugin:NAME.
	MCPServers []*mcpconfig.Server
	// LSPServers come from .lsp.json and the manifest's lspServers.
	LSPServers []lsp.ServerConfig
	// BinDir is the plugin's bin/ folder, to put on PATH while the plugin
	// is enabled; "" when it has none.
	BinDir string
	// Settings is the plugin's settings.json (default settings), nil when
	// it has none.
	Settings json.RawMessage
}

// pluginLoader reads plugins.
type pluginLoader struct {
	known  func(string) bool
	getenv func(string) string
}

// readManifest reads root's plugin.json.
func readManifest(root string) (*Manifest, *config.Error) {
	path := filepath.Join(root, ManifestPath)
	src, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &config.Error{Source: config.Source{Path: path}, Msg: "not a plugin: the manifest .claude-plugin/plugin.json is missing"}
		}
		return nil, &config.Error{Source: config.Source{Path: path}, Msg: "cannot read the plugin manifest", Err: unwrapPath(err)}
	}
	n, perr := parseJSONFile(src, path)
	if perr != nil {
		return nil, perr
	}
	return manifestFrom(n, path)
}

func manifestFrom(n *node, path string) (*Manifest, *config.Error) {
	f := field{path: path}
	if n == nil || n.kind != kindMap {
		return nil, errAt(path, n, "", `a plugin manifest is a JSON object such as {"name": "my-plugin"}`, nil)
	}
	m := &Manifest{hooks: n.get("hooks"), mcpServers: n.get("mcpServers"), lspServers: n.get("lspServers")}
	var err *config.Error
	nameNode := n.get("name")
	if nameNode == nil || nameNode.kind != kindString || strings.TrimSpace(nameNode.str) == "" {
		if nameNode != nil && nameNode.kind != kindString {
			return nil, f.typeErr(nameNode, "name", "a string")
		}
		return nil, errAt(path, n, "name", `missing "name" (the plugin's name, which prefixes its skills: /name:skill)`, nil)
	}
	m.Name = nameNode.str
	if !validName().MatchString(m.Name) {
		return nil, errAt(path, nameNode, "name", fmt.Sprintf("invalid plugin name %q: use letters, digits, '-', '_' and '.', without spaces", m.Name), nil)
	}
	for _, s := range []struct {
		key string
		dst *string
	}{{"description", &m.Description}, {"version", &m.Version}, {"homepage", &m.Homepage}, {"license", &m.License}} {
		if v := n.get(s.key); v != nil && v.kind != kindNull {
			if v.kind != kindString {
				return nil, f.typeErr(v, s.key, "a string")
			}
			*s.dst = v.str
		}
	}
	if v := n.get("repository"); v != nil && v.kind != kindNull {
		switch v.kind {
		case kindString:
			m.Repository = v.str
		case kindMap: // npm style {"type": "git", "url": "…"}
			m.Repository, _ = v.get("url").text()
		default:
			return nil, f.typeErr(v, "repository", "a URL")
		}
	}
	if v := n.get("author"); v != nil && v.kind != kindNull {
		switch v.kind {
		case kindString:
			m.Author = &Author{Name: v.str}
		case kindMap:
			a := &Author{}
			for _, s := range []struct {
				key string
				dst *string
			}{{"name", &a.Name}, {"email", &a.Email}, {"url", &a.URL}} {
				if a2 := v.get(s.key); a2 != nil && a2.kind != kindNull {
					if a2.kind != kindString {
						return nil, f.typeErr(a2, "author."+s.key, "a string")
					}
					*s.dst = a2.str
				}
			}
			if a.Name == "" {
				return nil, errAt(path, v, "author", `missing "name" in author`, nil)
			}
			m.Author = a
		default:
			return nil, f.typeErr(v, "author", `an object {"name": "…", "email": "…"}`)
		}
	}
	if m.Keywords, err = stringList(n.get("keywords"), path, "keywords"); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		key string
		dst *[]string
	}{{"skills", &m.SkillPaths}, {"commands", &m.CommandPaths}, {"agents", &m.AgentPaths}} {
		if *s.dst, err = stringList(n.get(s.key), path, s.key); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// stringList reads a string or a list of strings.
func stringList(n *node, path, key string) ([]string, *config.Error) {
	if n == nil || n.kind == kindNull {
		return nil, nil
	}
	switch n.kind {
	case kindString:
		return []string{n.str}, nil
	case kindSeq:
		out := make([]string, 0, len(n.elems))
		for i, e := range n.elems {
			if e.kind != kindString {
				return nil, field{path}.typeErr(e, fmt.Sprintf("%s[%d]", key, i), "a string")
			}
			out = append(out, e.str)
		}
		return out, nil
	}
	return nil, field{path}.typeErr(n, key, "a string or a list of strings")
}

// inside resolves rel against root and checks that it stays inside.
func inside(root, rel string) (string, bool) {
	p := filepath.Clean(filepath.Join(root, rel))
	r, err := filepath.Rel(root, p)
	return p, err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// load reads the plugin in root. A broken manifest is the returned error
// and nothing loads; a broken component is one of the problems and the
// rest of the plugin loads.
func (pl pluginLoader) load(root, id string) (*Plugin, []*config.Error, *config.Error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, &config.Error{Source: config.Source{Path: root}, Msg: "cannot resolve the plugin folder", Err: err}
	}
	root = abs
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, nil, &config.Error{Source: config.Source{Path: root}, Msg: "plugin folder not found"}
	}
	m, merr := readManifest(root)
	if merr != nil {
		return nil, nil, merr
	}
	p := &Plugin{Manifest: *m, Root: root, ID: id}
	var probs []*config.Error
	manifest := filepath.Join(root, ManifestPath)
	source := Source{Scope: ScopePlugin, Plugin: m.Name}
	prefix := m.Name + ":"
	lookup := pluginLookup(root, pl.getenv)

	// Skills: skills/NAME/SKILL.md, and the manifest's extra paths.
	skillDirs := []string{filepath.Join(root, "skills")}
	skillDirs, probs = addInside(skillDirs, probs, root, manifest, "skills", m.SkillPaths)
	for _, d := range skillDirs {
		if _, err := os.Stat(filepath.Join(d, "SKILL.md")); err == nil { // a path naming one skill
			s, w, e := readSkillFile(filepath.Join(d, "SKILL.md"), prefix+filepath.Base(d), KindSkill, source, root)
			probs = appendProblems(probs, w, e)
			if s != nil {
				p.Skills = append(p.Skills, s)
			}
			continue
		}
		skills, ps := scanSkills(d, prefix, source, root)
		p.Skills, probs = append(p.Skills, skills...), append(probs, ps...)
	}
	cmdDirs := []string{filepath.Join(root, "commands")}
	cmdDirs, probs = addInside(cmdDirs, probs, root, manifest, "commands", m.CommandPaths)
	for _, d := range cmdDirs {
		if strings.HasSuffix(d, ".md") {
			s, w, e := readSkillFile(d, prefix+strings.TrimSuffix(filepath.Base(d), ".md"), KindCommand, source, root)
			probs = appendProblems(probs, w, e)
			if s != nil {
				p.Skills = append(p.Skills, s)
			}
			continue
		}
		cmds, ps := scanCommands(d, prefix, source, root)
		p.Skills, probs = append(p.Skills, cmds...), append(probs, ps...)
	}
	ap := agentParser{known: pl.known, lookup: lookup, pluginRoot: root}
	agentDirs := []string{filepath.Join(root, "agents")}
	agentDirs, probs = addInside(agentDirs, probs, root, manifest, "agents", m.AgentPaths)
	for _, d := range agentDirs {
		agents, ps := ap.scanAgents(d, source, prefix)
		p.Agents, probs = append(p.Agents, agents...), append(probs, ps...)
	}

	// Hooks: hooks/hooks.json, then the manifest's.
	hc := hookContext{source: "plugin:" + m.Name, pluginRoot: root}
	hookFiles := []string{filepath.Join(root, "hooks", "hooks.json")}
	if m.hooks != nil && m.hooks.kind != kindNull {
		switch m.hooks.kind {
		case kindMap:
			cfg, err := hooksDocument(m.hooks, manifest, "hooks", hc)
			if err != nil {
				probs = append(probs, err)
			} else {
				p.Hooks = mergeHooks(p.Hooks, cfg)
			}
		default:
			rels, err := stringList(m.hooks, manifest, "hooks")
			if err != nil {
				probs = append(probs, err)
			}
			hookFiles, probs = addInside(hookFiles, probs, root, manifest, "hooks", rels)
		}
	}
	for _, hf := range hookFiles {
		src, err := os.ReadFile(hf)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) || hf != hookFiles[0] {
				probs = append(probs, &config.Error{Source: config.Source{Path: hf}, Msg: "cannot read the hooks file", Err: unwrapPath(err)})
			}
			continue
		}
		n, perr := parseJSONFile(src, hf)
		if perr != nil {
			probs = append(probs, perr)
			continue
		}
		cfg, herr := hooksDocument(n, hf, "", hc)
		if herr != nil {
			probs = append(probs, herr)
			continue
		}
		p.Hooks = mergeHooks(p.Hooks, cfg)
	}

	// Language servers: .lsp.json, then the manifest's inline ones.
	lspFile := filepath.Join(root, ".lsp.json")
	if src, err := os.ReadFile(lspFile); err == nil {
		cfgs, perr := lsp.ParseServers(bytes.ReplaceAll(src, []byte("${CLAUDE_PLUGIN_ROOT}"), []byte(root)), lspFile)
		if perr != nil {
			probs = append(probs, &config.Error{Source: config.Source{Path: lspFile}, Msg: "invalid language-server configuration", Err: perr})
		}
		p.LSPServers = append(p.LSPServers, cfgs...)
	} else if !errors.Is(err, fs.ErrNotExist) {
		probs = append(probs, &config.Error{Source: config.Source{Path: lspFile}, Msg: "cannot read the language-server configuration", Err: unwrapPath(err)})
	}
	if n := m.lspServers; n != nil && n.kind == kindMap {
		for _, mem := range n.mems {
			entry := bytes.ReplaceAll(mem.val.json(), []byte("${CLAUDE_PLUGIN_ROOT}"), []byte(root))
			doc, _ := json.Marshal(map[string]json.RawMessage{mem.key: entry})
			cfgs, perr := lsp.ParseServersAt(doc, manifest, mem.line)
			if perr != nil {
				probs = append(probs, &config.Error{Source: config.Source{Path: manifest, Line: mem.line, Col: mem.col}, Key: "lspServers." + mem.key, Msg: "invalid language server", Err: perr})
				continue
			}
			p.LSPServers = append(p.LSPServers, cfgs...)
		}
	}

	// MCP servers: .mcp.json, then the manifest's.
	scope := mcpconfig.PluginScope(m.Name)
	mcpFiles := []string{filepath.Join(root, ".mcp.json")}
	if n := m.mcpServers; n != nil && n.kind != kindNull {
		if n.kind == kindMap {
			for _, mem := range n.mems {
				srv := mcpconfig.ParseEntry(mem.key, mem.val.json(), scope, mcpconfig.Source{Path: manifest, Line: mem.line, Col: mem.col}, lookup)
				if srv.Err != nil {
					probs = append(probs, &config.Error{Source: config.Source{Path: manifest, Line: mem.line, Col: mem.col}, Key: "mcpServers." + mem.key, Msg: "invalid MCP server", Err: srv.Err})
					continue
				}
				p.MCPServers = append(p.MCPServers, srv)
			}
		} else {
			rels, err := stringList(n, manifest, "mcpServers")
			if err != nil {
				probs = append(probs, err)
			}
			mcpFiles, probs = addInside(mcpFiles, probs, root, manifest, "mcpServers", rels)
		}
	}
	for _, mf := range mcpFiles {
		src, err := os.ReadFile(mf)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) || mf != mcpFiles[0] {
				probs = append(probs, &config.Error{Source: config.Source{Path: mf}, Msg: "cannot read the MCP configuration", Err: unwrapPath(err)})
			}
			continue
		}
		servers, perr := mcpconfig.ParseConfig(src, mf, scope, lookup)
		if perr != nil {
			probs = append(probs, perr)
			continue
		}
		for _, srv := range servers {
			if srv.Err != nil {
				probs = append(probs, srv.Err)
				continue
			}
			p.MCPServers = append(p.MCPServers, srv)
		}
	}

	// As in Claude Code, a plugin's server is "plugin:PLUGIN:SERVER", so
	// its tools are mcp__plugin_PLUGIN_SERVER__TOOL and never clash with a
	// server the user configured.
	for _, srv := range p.MCPServers {
		srv.Name = "plugin:" + m.Name + ":" + srv.Name
	}

	if fi, err := os.Stat(filepath.Join(root, "bin")); err == nil && fi.IsDir() {
		p.BinDir = filepath.Join(root, "bin")
	}
	if src, err := os.ReadFile(filepath.Join(root, "settings.json")); err == nil {
		sp := filepath.Join(root, "settings.json")
		if n, perr := parseJSONFile(src, sp); perr != nil {
			probs = append(probs, perr)
		} else if n != nil && n.kind != kindMap {
			probs = append(probs, errAt(sp, n, "", "plugin settings must be a JSON object", nil))
		} else if n != nil {
			p.Settings = json.RawMessage(src)
		}
	}
	return p, probs, nil
}

// hooksDocument reads a hooks file: {"description": …, "hooks": {…}}. A
// bare map of events (without the "hooks" key) is read too.
func hooksDocument(n *node, path, key string, hc hookContext) (hook.Config, *config.Error) {
	if n == nil {
		return nil, nil
	}
	if n.kind != kindMap {
		return nil, errAt(path, n, key, `a hooks file is a JSON object {"hooks": {"PreToolUse": [...]}}`, nil)
	}
	if h := n.get("hooks"); h != nil {
		k := "hooks"
		if key != "" {
			k = key + ".hooks"
		}
		return parseHooks(h, path, k, hc)
	}
	for _, m := range n.mems {
		if m.key != "description" && m.key != "$schema" {
			if key == "" {
				key = "hooks"
			}
			return parseHooks(n, path, key, hc)
		}
	}
	return nil, nil
}

// pluginLookup resolves ${VAR} in a plugin's configuration:
// CLAUDE_PLUGIN_ROOT is the plugin folder, anything else the environment.
func pluginLookup(root string, getenv func(string) string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if name == "CLAUDE_PLUGIN_ROOT" {
			return root, true
		}
		if getenv == nil {
			return "", false
		}
		v := getenv(name)
		return v, v != ""
	}
}

func appendProblems(dst []*config.Error, warns []*config.Error, err *config.Error) []*config.Error {
	dst = append(dst, warns...)
	if err != nil {
		dst = append(dst, err)
	}
	return dst
}

// unwrapPath strips the *PathError whose path the *config.Error already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ValidatePlugin reads the plugin in dir as tack would load it and returns
// it with every problem found (nil when its manifest is broken, which is
// then the first problem). When dir is also a marketplace, its catalogue
// is checked too.
func ValidatePlugin(dir string) (*Plugin, []*config.Error) {
	var probs []*config.Error
	if _, err := os.Stat(filepath.Join(dir, MarketplaceManifestPath)); err == nil {
		if _, cerr := ReadCatalog(dir); cerr != nil {
			probs = append(probs, asError(cerr, filepath.Join(dir, MarketplaceManifestPath)))
		}
		if _, err := os.Stat(filepath.Join(dir, ManifestPath)); err != nil {
			return nil, probs // a marketplace only
		}
	}
	p, ps, err := pluginLoader{getenv: os.Getenv}.load(dir, "")
	probs = append(probs, ps...)
	if err != nil {
		return nil, append(probs, err)
	}
	return p, probs
}

// addInside adds to list the paths of rels (relative to the plugin root,
// from the manifest's field) that stay inside the plugin folder, once each;
// a path that leaves it is a problem.
func addInside(list []string, probs []*config.Error, root, manifest, field string, rels []string) ([]string, []*config.Error) {
	for _, rel := range rels {
		p, ok := inside(root, rel)
		switch {
		case !ok:
			probs = append(probs, &config.Error{Source: config.Source{Path: manifest}, Key: field, Msg: fmt.Sprintf("path %q leaves the plugin folder", rel)})
		case !slices.Contains(list, p):
			list = append(list, p)
		}
	}
	return list, probs
}
