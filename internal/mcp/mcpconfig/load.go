package mcpconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/jsontree"
)

// Options say where to look for servers.
type Options struct {
	// Files locates ~/.claude.json and the project; zero fields take their
	// defaults (DefaultFiles).
	Files
	// LookupEnv resolves ${VAR} references (and HOME and CLAUDE_CONFIG_DIR
	// when Files.ClaudeJSON is ""); nil means os.LookupEnv. Claude Code
	// applies the settings' "env" to its own environment before reading MCP
	// configuration, so callers overlay it here.
	LookupEnv func(string) (string, bool)
	// MCPConfig are the values of --mcp-config: each one inline JSON when it
	// starts with '{', else a file (relative to the project directory),
	// holding {"mcpServers": {…}}. A later one wins over an earlier one.
	MCPConfig []string
	// Strict (--strict-mcp-config) reads only MCPConfig.
	Strict bool
	// Sources limits which of the local, project and user scopes are read,
	// as --setting-sources does in Claude Code; nil means all three.
	Sources []Scope
	// Settings are the approval keys of the merged settings files.
	Settings ApprovalSettings
}

// ApprovalSettings are the settings keys that approve or refuse project
// (.mcp.json) servers. Claude Code honours them in every settings file, as
// well as in the project's entry of ~/.claude.json, where it records the
// user's answers; the caller passes the merged settings values.
type ApprovalSettings struct {
	// EnableAllProjectMcpServers approves every server of .mcp.json.
	EnableAllProjectMcpServers bool
	// EnabledMcpjsonServers and DisabledMcpjsonServers approve and refuse
	// servers by name; a refusal wins.
	EnabledMcpjsonServers  []string
	DisabledMcpjsonServers []string
}

// Set is the MCP servers of one session: every definition read, which one
// each name resolves to, and every problem met.
type Set struct {
	files    Files
	strict   bool
	settings ApprovalSettings
	// stored are this project's answers in ~/.claude.json.
	stored ApprovalSettings
	defs   []*Server       // every definition, in reading order
	probs  []*config.Error // problems with whole files
	// off are the servers the user turned off for this project
	// (disabledMcpServers, Claude Code's /mcp switch).
	off []string
}

// Load reads the servers opts selects. Problems with the files are in
// Set.Problems, not in the error, which reports only that the files could
// not be located (no working directory, no home directory).
func Load(opts Options) (*Set, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	getenv := func(k string) string { v, _ := lookup(k); return v }
	f := opts.Files
	if f.ProjectDir == "" || f.ClaudeJSON == "" {
		def, err := DefaultFiles(getenv, f.ProjectDir)
		if err != nil {
			return nil, err
		}
		if f.ClaudeJSON == "" {
			f.ClaudeJSON = def.ClaudeJSON
		}
		f.ProjectDir = def.ProjectDir
	}
	if abs, err := filepath.Abs(f.ProjectDir); err == nil {
		f.ProjectDir = abs
	}
	s := &Set{files: f, strict: opts.Strict, settings: opts.Settings}
	want := func(sc Scope) bool {
		if opts.Strict {
			return false
		}
		if opts.Sources == nil {
			return true
		}
		return contains(scopeStrings(opts.Sources), string(sc))
	}

	if want(ScopeLocal) || want(ScopeUser) || want(ScopeProject) {
		s.readClaudeJSON(want(ScopeLocal), want(ScopeUser), lookup)
	}
	if want(ScopeProject) {
		path := f.MCPJSON()
		src, exists, err := config.ReadJSONFile(path, maxConfigSize)
		switch {
		case err != nil:
			s.probs = append(s.probs, &config.Error{Source: config.Source{Path: path}, Msg: "cannot read the project's MCP servers", Err: err})
		case exists:
			s.readConfig(src, path, ScopeProject, lookup)
		}
	}
	// A later --mcp-config wins: its servers go first. Problems are
	// reported in the order the values were given.
	var dynamic []*Server
	for i, v := range opts.MCPConfig {
		label := "--mcp-config"
		if len(opts.MCPConfig) > 1 {
			label = fmt.Sprintf("--mcp-config #%d", i+1)
		}
		var servers []*Server
		var perr *config.Error
		if strings.HasPrefix(strings.TrimLeft(v, " \t\r\n"), "{") {
			servers, perr = ParseConfig([]byte(v), label, ScopeDynamic, lookup)
		} else {
			path := v
			if !filepath.IsAbs(path) {
				path = filepath.Join(f.ProjectDir, path)
			}
			src, exists, err := config.ReadJSONFile(path, maxConfigSize)
			switch {
			case err != nil:
				perr = &config.Error{Source: config.Source{Path: path}, Msg: "cannot read --mcp-config file", Err: err}
			case !exists:
				perr = &config.Error{Source: config.Source{Path: path}, Msg: "--mcp-config file not found"}
			default:
				servers, perr = ParseConfig(src, path, ScopeDynamic, lookup)
			}
		}
		if perr != nil {
			s.probs = append(s.probs, perr)
		}
		dynamic = append(servers, dynamic...)
	}
	s.defs = append(s.defs, dynamic...)
	s.markDisabled(s.defs)
	return s, nil
}

func scopeStrings(list []Scope) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// readConfig reads a {"mcpServers": {…}} document.
func (s *Set) readConfig(src []byte, path string, scope Scope, lookup func(string) (string, bool)) {
	servers, err := ParseConfig(src, path, scope, lookup)
	if err != nil {
		s.probs = append(s.probs, err)
		return
	}
	s.defs = append(s.defs, servers...)
}

// readClaudeJSON reads ~/.claude.json: the user scope's servers, and this
// project's servers, approvals and disabled servers.
func (s *Set) readClaudeJSON(local, user bool, lookup func(string) (string, bool)) {
	path := s.files.ClaudeJSON
	src, exists, err := config.ReadJSONFile(path, config.MaxClaudeJSONSize)
	if err != nil {
		s.probs = append(s.probs, &config.Error{Source: config.Source{Path: path}, Msg: "cannot read Claude Code's configuration", Err: err})
		return
	}
	if !exists {
		return
	}
	key := s.files.Key()
	d, perr := parseDoc(src, path, claudeJSONFilter(key))
	if perr != nil {
		s.probs = append(s.probs, perr)
		return
	}
	if d.root == nil {
		return
	}
	if d.root.Kind != jsontree.Object {
		s.probs = append(s.probs, d.errAt(d.root.Off, "", "", fmt.Sprintf("expected a JSON object, got %s", d.root.Kind)))
		return
	}
	var localDefs, userDefs []*Server
	if n := d.root.Lookup("mcpServers"); n != nil && n.Kind != jsontree.Null && user {
		servers, err := d.servers(n, "mcpServers", ScopeUser, lookup)
		if err != nil {
			s.probs = append(s.probs, err)
		}
		userDefs = servers
	}
	projects := d.root.Lookup("projects")
	var project *jsontree.Node
	if projects != nil && projects.Kind == jsontree.Object {
		project = projects.Lookup(key)
	}
	if project == nil || project.Kind != jsontree.Object {
		s.defs = append(s.defs, userDefs...)
		return
	}
	pkey := "projects[" + string(appendQuoted(nil, key)) + "]"
	if n := project.Lookup("mcpServers"); n != nil && n.Kind != jsontree.Null && local {
		servers, err := d.servers(n, pkey+".mcpServers", ScopeLocal, lookup)
		if err != nil {
			s.probs = append(s.probs, err)
		}
		localDefs = servers
	}
	names := func(k string) []string {
		n := project.Lookup(k)
		if n == nil || n.Kind == jsontree.Null {
			return nil
		}
		if n.Kind != jsontree.Array {
			s.probs = append(s.probs, d.errAt(n.Off, "", pkey+"."+k, fmt.Sprintf("expected a list of server names, got %s (ignored)", n.Kind)))
			return nil
		}
		var out []string
		for i, e := range n.Elems {
			if e.Kind != jsontree.String {
				s.probs = append(s.probs, d.errAt(e.Off, "", indexKey(pkey+"."+k, i), fmt.Sprintf("expected a server name, got %s (ignored)", e.Kind)))
				continue
			}
			out = append(out, e.Str)
		}
		return out
	}
	s.stored.EnabledMcpjsonServers = names(keyEnabled)
	s.stored.DisabledMcpjsonServers = names(keyDisabled)
	if n := project.Lookup(keyEnableAll); n != nil && n.Kind == jsontree.Bool {
		s.stored.EnableAllProjectMcpServers = n.Bool
	}
	s.off = names(keyOffServers)
	s.defs = append(s.defs, localDefs...)
	s.defs = append(s.defs, userDefs...)
}

// markDisabled applies the user's on/off switch, which names servers
// whatever their scope; a server given on the command line is always on.
func (s *Set) markDisabled(servers []*Server) {
	for _, srv := range servers {
		if srv.Scope != ScopeDynamic && contains(s.off, srv.Name) {
			srv.Disabled = true
		}
	}
}

// Files returns the files the set was read from, for edits.
func (s *Set) Files() Files { return s.files }

// Add adds servers defined elsewhere: those of plugins (scope
// PluginScope(name)) and of agent definitions (AgentScope(name)). They rank
// below every configuration file, so a plugin cannot take over a name the
// user configured; a shadowed one is listed by Shadowed. Under
// --strict-mcp-config plugin servers are ignored, as in Claude Code; agent
// servers are not, since the caller chose to run that agent.
func (s *Set) Add(servers ...*Server) {
	for _, srv := range servers {
		if s.strict && srv.Scope.IsPlugin() {
			continue
		}
		s.markDisabled([]*Server{srv})
		s.defs = append(s.defs, srv)
	}
}

// ordered returns every definition, highest precedence first: by scope,
// then in the order of s.defs (where Load puts the servers of a later
// --mcp-config value first).
func (s *Set) ordered() []*Server {
	out := make([]*Server, len(s.defs))
	copy(out, s.defs)
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := out[i].Scope.rank(), out[j].Scope.rank()
		if ri != rj {
			return ri < rj
		}
		return false
	})
	return out
}

// Servers returns the server each name resolves to, highest precedence
// first. Broken servers (Err set) are included: Plan leaves them out.
func (s *Set) Servers() []*Server {
	var out []*Server
	seen := map[string]bool{}
	for _, srv := range s.ordered() {
		if !seen[srv.Name] {
			seen[srv.Name] = true
			out = append(out, srv)
		}
	}
	return out
}

// Lookup returns the server name resolves to.
func (s *Set) Lookup(name string) (*Server, bool) {
	for _, srv := range s.ordered() {
		if srv.Name == name {
			return srv, true
		}
	}
	return nil, false
}

// Definitions returns every definition of name, highest precedence (the one
// in use) first.
func (s *Set) Definitions(name string) []*Server {
	var out []*Server
	for _, srv := range s.ordered() {
		if srv.Name == name {
			out = append(out, srv)
		}
	}
	return out
}

// Shadowed returns the definitions that a same-named server of a higher
// scope overrides.
func (s *Set) Shadowed() []*Server {
	var out []*Server
	seen := map[string]bool{}
	for _, srv := range s.ordered() {
		if seen[srv.Name] {
			out = append(out, srv)
		}
		seen[srv.Name] = true
	}
	return out
}

// Problems returns every problem met: files that could not be read or are
// not valid, then broken entries (in use or shadowed).
func (s *Set) Problems() []*config.Error {
	out := append([]*config.Error(nil), s.probs...)
	for _, srv := range s.defs {
		if srv.Err != nil {
			out = append(out, srv.Err)
		}
	}
	return out
}

// Err joins Problems into one error, nil when there is none.
func (s *Set) Err() error {
	probs := s.Problems()
	errs := make([]error, len(probs))
	for i, p := range probs {
		errs[i] = p
	}
	return errors.Join(errs...)
}

// Approval says whether srv may start. Servers of every scope but project
// may; a project (.mcp.json) server needs the user's approval: it is refused
// when disabledMcpjsonServers names it (in settings or in this project's
// entry of ~/.claude.json), approved when enabledMcpjsonServers names it or
// enableAllProjectMcpServers is on, and otherwise not decided yet: an
// interactive session asks (and records the answer with SetApproval), print
// mode skips it with PendingNotice. Names are compared as NormalizeName
// forms them, as in Claude Code.
func (s *Set) Approval(srv *Server) (approved, decided bool) {
	if srv.Scope != ScopeProject {
		return true, true
	}
	name := NormalizeName(srv.Name)
	in := func(lists ...[]string) bool {
		for _, l := range lists {
			for _, n := range l {
				if NormalizeName(n) == name {
					return true
				}
			}
		}
		return false
	}
	if in(s.settings.DisabledMcpjsonServers, s.stored.DisabledMcpjsonServers) {
		return false, true
	}
	if in(s.settings.EnabledMcpjsonServers, s.stored.EnabledMcpjsonServers) ||
		s.settings.EnableAllProjectMcpServers || s.stored.EnableAllProjectMcpServers {
		return true, true
	}
	return false, false
}

// SetApproval records the user's answer for project server name in
// ~/.claude.json (see Files.SetApproval) and in the set.
func (s *Set) SetApproval(name string, approved bool) error {
	if err := s.files.SetApproval(name, approved); err != nil {
		return err
	}
	norm := NormalizeName(name)
	drop := func(list []string) []string {
		var out []string
		for _, n := range list {
			if NormalizeName(n) != norm {
				out = append(out, n)
			}
		}
		return out
	}
	s.stored.EnabledMcpjsonServers = drop(s.stored.EnabledMcpjsonServers)
	s.stored.DisabledMcpjsonServers = drop(s.stored.DisabledMcpjsonServers)
	if approved {
		s.stored.EnabledMcpjsonServers = append(s.stored.EnabledMcpjsonServers, name)
	} else {
		s.stored.DisabledMcpjsonServers = append(s.stored.DisabledMcpjsonServers, name)
	}
	return nil
}

// Plan sorts the servers in use for starting a session.
type Plan struct {
	// Start are the servers to start.
	Start []*Server
	// Pending are project servers the user has not decided on: ask in an
	// interactive session; in print mode skip each with PendingNotice.
	Pending []*Server
	// Rejected are project servers the user refused.
	Rejected []*Server
	// Disabled are servers the user turned off for this project.
	Disabled []*Server
	// Broken are servers whose entry cannot be used; Err says why (it is
	// also in Problems).
	Broken []*Server
}

// Plan sorts Servers for starting a session.
func (s *Set) Plan() Plan {
	var p Plan
	for _, srv := range s.Servers() {
		approved, decided := s.Approval(srv)
		switch {
		case srv.Err != nil:
			p.Broken = append(p.Broken, srv)
		case srv.Disabled:
			p.Disabled = append(p.Disabled, srv)
		case !decided:
			p.Pending = append(p.Pending, srv)
		case !approved:
			p.Rejected = append(p.Rejected, srv)
		default:
			p.Start = append(p.Start, srv)
		}
	}
	return p
}

// PendingNotice is what print mode says when it skips a project server the
// user has not approved.
func PendingNotice(srv *Server) string {
	return fmt.Sprintf("MCP server %q from %s was not started: project servers need your approval first "+
		"(run `tack mcp approve %s`, or list it in enabledMcpjsonServers in .claude/settings.local.json)",
		srv.Name, srv.Source, srv.Name)
}
