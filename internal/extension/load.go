package extension

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/gitroot"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/lsp"
	"github.com/tackcode/tack/internal/mcp/mcpconfig"
)

// Options says where to look for definitions.
type Options struct {
	// Cwd is the working directory, which relative --plugin-dir folders
	// are read against; "" means the process's.
	Cwd string
	// ProjectDir is where the project's .claude folders are looked for
	// (it, then its parents up to the git root); "" means Cwd.
	ProjectDir string
	// ConfigDir is the user's directory; "" means $CLAUDE_CONFIG_DIR or
	// ~/.claude.
	ConfigDir string
	// ManagedDir holds the administrator's definitions in
	// <ManagedDir>/.claude/{skills,commands,agents}; "" means
	// DefaultManagedDir(). A missing folder holds none.
	ManagedDir string
	// Home bounds the walk up from ProjectDir; "" means $HOME.
	Home string
	// Sources limits the user and project folders read, as
	// --setting-sources does (config.ScopeUser, config.ScopeProject); nil
	// means both, an empty list neither.
	Sources []config.Scope
	// PluginDirs are --plugin-dir folders, loaded as plugins;
	// PluginDirsWithoutMCP are loaded likewise but bring no MCP servers
	// (--plugin-dir-no-mcp: the caller runs them itself).
	PluginDirs, PluginDirsWithoutMCP []string
	// EnabledPlugins is the merged settings' enabledPlugins: each
	// "name@marketplace" set to true is loaded from the plugins installed
	// under <ConfigDir>/plugins.
	EnabledPlugins map[string]bool
	// AgentsJSON is the --agents flag's JSON.
	AgentsJSON string
	// KnownTool, when set, accepts tool names beyond tack's and Claude
	// Code's built-in ones in tools lists (custom SDK tools).
	KnownTool func(name string) bool
	// Getenv expands ${VAR} in plugins' MCP servers; nil means os.Getenv.
	Getenv func(string) string
}

// DefaultManagedDir is where administrators put managed definitions.
func DefaultManagedDir() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode"
	case "windows":
		return `C:\Program Files\ClaudeCode`
	}
	return "/etc/claude-code"
}

// Set is every skill, command, agent and plugin found, resolved by
// precedence. It is read-only once loaded and safe for concurrent use.
type Set struct {
	agents, shadowedAgents []*Agent
	skills, shadowedSkills []*Skill
	plugins                []*Plugin
	problems               []*config.Error
}

// withDefaults fills in what opts leaves unset.
func (opts Options) withDefaults() Options {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Cwd == "" {
		opts.Cwd, _ = os.Getwd()
	}
	if opts.ProjectDir == "" {
		opts.ProjectDir = opts.Cwd
	}
	if opts.ConfigDir == "" {
		opts.ConfigDir = config.DefaultConfigDir(opts.Getenv)
	}
	if opts.ManagedDir == "" {
		opts.ManagedDir = DefaultManagedDir()
	}
	if opts.Home == "" {
		opts.Home = opts.Getenv("HOME")
	}
	return opts
}

// wants reports whether the user or project folders of scope s are read.
func (opts Options) wants(s config.Scope) bool {
	return opts.Sources == nil || slices.Contains(opts.Sources, s)
}

// Root is a .claude folder skills and commands are read from (in its
// skills/ and commands/).
type Root struct {
	Dir   string
	Scope Scope
}

// Roots are the folders Load reads skills and commands from, plugins'
// aside, highest precedence first: managed, user, project (the working
// directory, then its parents up to the git root).
func Roots(opts Options) []Root {
	opts = opts.withDefaults()
	roots := []Root{{filepath.Join(opts.ManagedDir, ".claude"), ScopeManaged}}
	if opts.wants(config.ScopeUser) {
		roots = append(roots, Root{opts.ConfigDir, ScopeUser})
	}
	if opts.wants(config.ScopeProject) {
		for _, d := range ProjectDirs(opts.ProjectDir, opts.Home) {
			roots = append(roots, Root{d, ScopeProject})
		}
	}
	return roots
}

// Load finds the definitions opts points at. It does not fail: a file
// that cannot be read or does not hold a valid definition is left out and
// reported in Problems, and everything else loads.
//
// Where definitions are read, highest precedence first:
//
//	agents    --agents > managed > project (cwd, then its parents up to
//	          the git root) > user > plugins > built-in
//	skills    managed > user > project, skills before commands of the
//	          same name; plugin skills are namespaced "plugin:name"
//
// A definition that a higher one of the same name overrides is kept in
// ShadowedAgents or ShadowedSkills.
func Load(opts Options) *Set {
	opts = opts.withDefaults()
	want := opts.wants
	set := &Set{}
	ap := agentParser{known: opts.KnownTool, lookup: envLookup(opts.Getenv)}

	managed := filepath.Join(opts.ManagedDir, ".claude")
	var projectDirs []string
	if want(config.ScopeProject) {
		projectDirs = ProjectDirs(opts.ProjectDir, opts.Home)
	}

	// Plugins first: their agents and skills join the candidates below.
	set.loadPlugins(opts)

	// Agents, highest precedence first.
	var agents []*Agent
	if strings.TrimSpace(opts.AgentsJSON) != "" {
		flagAgents, err := ap.parseAgentsFlag(opts.AgentsJSON)
		if err != nil {
			set.problems = append(set.problems, err)
		}
		agents = append(agents, flagAgents...)
	}
	scan := func(dir string, scope Scope) {
		as, ps := ap.scanAgents(filepath.Join(dir, "agents"), Source{Scope: scope}, "")
		agents, set.problems = append(agents, as...), append(set.problems, ps...)
	}
	scan(managed, ScopeManaged)
	for _, d := range projectDirs {
		scan(d, ScopeProject)
	}
	if want(config.ScopeUser) {
		scan(opts.ConfigDir, ScopeUser)
	}
	for _, p := range set.plugins {
		agents = append(agents, p.Agents...)
	}
	agents = append(agents, builtinAgents()...)
	set.agents, set.shadowedAgents = resolve(agents, func(a *Agent) string { return a.Name }, func(a, by *Agent) { a.ShadowedBy = by })

	// Skills, then commands, highest precedence first.
	var skills []*Skill
	roots := Roots(opts)
	for _, r := range roots {
		ss, ps := scanSkills(filepath.Join(r.Dir, "skills"), "", Source{Scope: r.Scope}, "")
		skills, set.problems = append(skills, ss...), append(set.problems, ps...)
	}
	for _, p := range set.plugins {
		for _, s := range p.Skills {
			if s.Kind == KindSkill {
				skills = append(skills, s)
			}
		}
	}
	for _, r := range roots {
		cs, ps := scanCommands(filepath.Join(r.Dir, "commands"), "", Source{Scope: r.Scope}, "")
		skills, set.problems = append(skills, cs...), append(set.problems, ps...)
	}
	for _, p := range set.plugins {
		for _, s := range p.Skills {
			if s.Kind == KindCommand {
				skills = append(skills, s)
			}
		}
	}
	set.skills, set.shadowedSkills = resolve(skills, func(s *Skill) string { return s.Name }, func(s, by *Skill) { s.ShadowedBy = by })
	set.checkReferences()
	return set
}

// ProjectDirs are the .claude folders of a project, nearest first: cwd's,
// then each parent's up to the git repository's root (the folder holding
// .git), never reaching home (whose .claude is the user's). Outside a git
// repository only cwd's is read.
func ProjectDirs(cwd, home string) []string {
	cwd = filepath.Clean(cwd)
	gitRoot := gitroot.Find(cwd)
	var out []string
	for d := cwd; ; d = filepath.Dir(d) {
		if home != "" && d == filepath.Clean(home) {
			break
		}
		out = append(out, filepath.Join(d, ".claude"))
		if gitRoot == "" || d == gitRoot || filepath.Dir(d) == d {
			break
		}
	}
	return out
}

// resolve keeps the first definition of each name (the candidates come
// highest precedence first) and returns the winners sorted by name and the
// losers, each marked by shadow.
func resolve[T any](cands []*T, name func(*T) string, shadow func(t, by *T)) (win, lost []*T) {
	byName := map[string]*T{}
	for _, c := range cands {
		if w, ok := byName[name(c)]; ok {
			shadow(c, w)
			lost = append(lost, c)
			continue
		}
		byName[name(c)] = c
		win = append(win, c)
	}
	slices.SortStableFunc(win, func(a, b *T) int { return strings.Compare(name(a), name(b)) })
	return win, lost
}

// loadPlugins reads the --plugin-dir plugins, then the enabled installed
// ones. A plugin whose name is taken is skipped with a problem.
func (set *Set) loadPlugins(opts Options) {
	pl := pluginLoader{known: opts.KnownTool, getenv: opts.Getenv}
	seen := map[string]string{}
	add := func(root, id string, withMCP bool) {
		p, probs, err := pl.load(root, id)
		set.problems = append(set.problems, probs...)
		if err == nil && !withMCP {
			p.MCPServers = nil
		}
		if err != nil {
			set.problems = append(set.problems, err)
			return
		}
		if prev, dup := seen[p.Name]; dup {
			set.problems = append(set.problems, &config.Error{Source: config.Source{Path: filepath.Join(p.Root, ManifestPath)}, Key: "name", Msg: fmt.Sprintf("plugin %q is already loaded from %s: this one is skipped", p.Name, prev)})
			return
		}
		seen[p.Name] = p.Root
		set.plugins = append(set.plugins, p)
	}
	for i, d := range slices.Concat(opts.PluginDirs, opts.PluginDirsWithoutMCP) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(opts.Cwd, d)
		}
		add(d, "", i < len(opts.PluginDirs))
	}
	ids := make([]string, 0, len(opts.EnabledPlugins))
	for id, on := range opts.EnabledPlugins {
		if on {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	store := NewStore(opts.ConfigDir)
	installed, err := store.Installed()
	if err != nil {
		set.problems = append(set.problems, asError(err, store.installedPath()))
		return
	}
	for _, id := range ids {
		inst, ok := installed[id]
		if !ok {
			set.problems = append(set.problems, &config.Error{Source: config.Source{Path: store.installedPath()}, Key: id, Msg: fmt.Sprintf("plugin %s is enabled in the settings but not installed (tack plugin install %s)", id, id)})
			continue
		}
		add(inst.InstallPath, id, true)
	}
}

// asError turns err into an *config.Error naming path.
func asError(err error, path string) *config.Error {
	var e *config.Error
	if errors.As(err, &e) {
		return e
	}
	return &config.Error{Source: config.Source{Path: path}, Msg: err.Error()}
}

func envLookup(getenv func(string) string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v := getenv(name)
		return v, v != ""
	}
}

// checkReferences warns about names that point at nothing: an agent's
// Agent(type) entries and a skill's agent.
func (set *Set) checkReferences() {
	for _, a := range set.agents {
		for _, t := range a.AgentTypes {
			if _, ok := set.Agent(t); !ok {
				set.problems = append(set.problems, &config.Error{Source: config.Source{Path: pathOr(a.Source)}, Key: "tools", Warning: true, Msg: fmt.Sprintf("Agent(%s): no agent is named %q", t, t)})
			}
		}
	}
	for _, s := range set.skills {
		if s.Agent == "" {
			continue
		}
		if _, ok := set.Agent(s.Agent); !ok {
			set.problems = append(set.problems, &config.Error{Source: config.Source{Path: s.Path}, Key: "agent", Warning: true, Msg: fmt.Sprintf("no agent is named %q: the skill runs in general-purpose", s.Agent)})
		}
	}
}

func pathOr(s Source) string {
	if s.Path != "" {
		return s.Path
	}
	return string(s.Scope)
}

// Agents returns the agents in effect, sorted by name.
func (set *Set) Agents() []*Agent { return slices.Clone(set.agents) }

// ShadowedAgents returns the definitions that a higher one of the same name
// overrides, each with ShadowedBy set.
func (set *Set) ShadowedAgents() []*Agent { return slices.Clone(set.shadowedAgents) }

// Agent returns the agent in effect named name.
func (set *Set) Agent(name string) (*Agent, bool) {
	for _, a := range set.agents {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

// Skills returns the skills and commands in effect, sorted by name.
func (set *Set) Skills() []*Skill { return slices.Clone(set.skills) }

// ShadowedSkills returns the skills and commands that a higher one of the
// same name overrides.
func (set *Set) ShadowedSkills() []*Skill { return slices.Clone(set.shadowedSkills) }

// Skill returns the skill or command in effect named name (without the
// leading "/").
func (set *Set) Skill(name string) (*Skill, bool) {
	for _, s := range set.skills {
		if s.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Plugins returns the plugins loaded, --plugin-dir ones first.
func (set *Set) Plugins() []*Plugin { return slices.Clone(set.plugins) }

// Hooks returns the plugins' hooks, plugin after plugin.
func (set *Set) Hooks() hook.Config {
	var cfg hook.Config
	for _, p := range set.plugins {
		cfg = mergeHooks(cfg, p.Hooks)
	}
	return cfg
}

// MCPServers returns the plugins' MCP servers (scope plugin:NAME), for
// mcpconfig.Set.Add.
func (set *Set) MCPServers() []*mcpconfig.Server {
	var out []*mcpconfig.Server
	for _, p := range set.plugins {
		out = append(out, p.MCPServers...)
	}
	return out
}

// LSPServers returns the plugins' language servers.
func (set *Set) LSPServers() []lsp.ServerConfig {
	var out []lsp.ServerConfig
	for _, p := range set.plugins {
		out = append(out, p.LSPServers...)
	}
	return out
}

// BinDirs returns the plugins' bin/ folders, to put on PATH.
func (set *Set) BinDirs() []string {
	var out []string
	for _, p := range set.plugins {
		if p.BinDir != "" {
			out = append(out, p.BinDir)
		}
	}
	return out
}

// Problems returns every problem found, warnings included, in the order
// found.
func (set *Set) Problems() []*config.Error { return slices.Clone(set.problems) }

// Err joins the problems that kept a definition from loading (not the
// warnings); nil when everything loaded.
func (set *Set) Err() error {
	var errs []error
	for _, p := range set.problems {
		if !p.Warning {
			errs = append(errs, p)
		}
	}
	return errors.Join(errs...)
}
