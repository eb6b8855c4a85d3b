package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// RuleSet holds the rules of every source, merged by the caller.
type RuleSet struct {
	Allow, Ask, Deny []Rule
}

// Config configures a Checker.
type Config struct {
	Rules RuleSet
	// Mode is the starting mode; "" is ModeDefault.
	Mode Mode
	// Cwd is the session's working directory (absolute): the first working
	// directory, and the anchor of "./path" and "path" patterns.
	Cwd string
	// Dirs are the other working directories (additionalDirectories,
	// --add-dir); relative ones are taken from Cwd.
	Dirs []string
	// Home anchors "~/" patterns and paths; "" means the user's home.
	Home string
	// LexicalPaths checks paths as written, without resolving symlinks.
	// By default a path must be inside the working directories both as
	// written and once resolved, and deny rules match either form.
	LexicalPaths bool
}

// Call is a tool call to check.
type Call struct {
	// Tool is the tool's name ("Bash", "Read", "mcp__github__create_issue").
	Tool string
	// Input is the call's input as the model sent it. The checker knows
	// the fields of the built-in tools: Bash command; Read, Write, Edit,
	// MultiEdit file_path; NotebookEdit notebook_path; Glob pattern and
	// path; Grep and LS path (default: the working directory); WebFetch
	// url; Agent (and Task) subagent_type; Skill skill.
	Input json.RawMessage
	// Cwd is the directory the call runs in, for relative paths: for Bash
	// the shell's current directory. "" means Config.Cwd.
	Cwd string
	// ReadOnly is the tool's own claim that this call changes nothing (an
	// MCP tool's readOnlyHint, a custom tool). It only spares tools the
	// checker does not know from being denied in plan mode; it never
	// allows a call by itself.
	ReadOnly bool
}

// Decision is the checker's answer for a call.
type Decision struct {
	Behavior Behavior
	// Reason says why, naming the rule or the mode: shown to the model
	// when the call is denied and listed in permission_denials.
	Reason string
	// Rule is the rule that decided, nil when the mode or the built-in
	// defaults did.
	Rule *Rule
}

// Checker decides whether tool calls may run. It is safe for concurrent
// use; SetMode, AddDir and AddRules apply to the calls checked after them.
type Checker struct {
	cwd    string
	home   string
	follow bool

	mu   sync.RWMutex
	mode Mode
	dirs []workDir
	// rules are base (the Config's, or SetRules') then added (AddRules'),
	// by Behavior; gen counts their changes.
	rules       [3][]*compiledRule
	base, added [3][]*compiledRule
	gen         int

	// programs are the executables Bash deny and ask rules name, found on
	// PATH when first needed for the rules of generation progGen (see
	// deniedPrograms).
	progMu   sync.Mutex
	progGen  int
	programs []*program
	// gitlinks caches the submodules of the git indexes looked at.
	gitlinks map[indexKey][]string
}

// NewChecker compiles the rules. It fails on an invalid mode, a relative
// Cwd or invalid rules (all of them are reported).
func NewChecker(cfg Config) (*Checker, error) {
	mode, err := ParseMode(string(cfg.Mode))
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(cfg.Cwd) {
		return nil, fmt.Errorf("permission checker: working directory %q is not absolute", cfg.Cwd)
	}
	c := &Checker{
		cwd:    filepath.Clean(cfg.Cwd),
		home:   cfg.Home,
		follow: !cfg.LexicalPaths,
		mode:   mode,
	}
	if c.home == "" {
		c.home = userHome()
	}
	if c.home != "" {
		c.home = filepath.Clean(c.home)
	}
	c.dirs = append(c.dirs, newWorkDir(c.cwd, c.follow))
	for _, d := range cfg.Dirs {
		c.addDir(d)
	}
	var errs []error
	for b, rules := range [3][]Rule{Allow: cfg.Rules.Allow, Ask: cfg.Rules.Ask, Deny: cfg.Rules.Deny} {
		compiled, err := compileRules(rules, Behavior(b), c.cwd, c.home)
		c.base[b], c.rules[b] = compiled, compiled
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("permission checker: %w", err)
	}
	return c, nil
}

// SetRules replaces the rules the checker was made with (the settings
// files', read again) for the calls checked from now on; the rules
// AddRules added stay. Nothing changes if one of them is invalid.
func (c *Checker) SetRules(rs RuleSet) error {
	var base [3][]*compiledRule
	var errs []error
	for b, rules := range [3][]Rule{Allow: rs.Allow, Ask: rs.Ask, Deny: rs.Deny} {
		compiled, err := compileRules(rules, Behavior(b), c.cwd, c.home)
		base[b] = compiled
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("permission checker: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = base
	c.joinRules()
	return nil
}

// joinRules makes rules base then added. Callers hold c.mu.
func (c *Checker) joinRules() {
	for b := range c.rules {
		c.rules[b] = append(slices.Clip(c.base[b]), c.added[b]...)
	}
	c.gen++
}

// Mode returns the current mode.
func (c *Checker) Mode() Mode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.mode
}

// SetMode changes the mode for the calls checked from now on.
func (c *Checker) SetMode(m Mode) error {
	m, err := ParseMode(string(m))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mode = m
	return nil
}

// AddDir adds a working directory (relative to the checker's cwd).
func (c *Checker) AddDir(dir string) error {
	if dir == "" {
		return errors.New("permission checker: empty directory")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addDir(dir)
	return nil
}

func (c *Checker) addDir(dir string) {
	d := newWorkDir(absPath(dir, c.cwd, c.home), c.follow)
	for _, have := range c.dirs {
		if have.lex == d.lex {
			return
		}
	}
	c.dirs = append(c.dirs, d)
}

// Rules returns the rules the checker applies now: its base rules, then
// the ones AddRules added, by behavior.
func (c *Checker) Rules() RuleSet {
	c.mu.RLock()
	defer c.mu.RUnlock()
	rules := func(b Behavior) []Rule {
		out := make([]Rule, len(c.rules[b]))
		for i, r := range c.rules[b] {
			out[i] = r.rule
		}
		return out
	}
	return RuleSet{Allow: rules(Allow), Ask: rules(Ask), Deny: rules(Deny)}
}

// Dirs returns the working directories, the cwd first.
func (c *Checker) Dirs() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, len(c.dirs))
	for i, d := range c.dirs {
		out[i] = d.lex
	}
	return out
}

// AddRules adds rules of one behavior, such as an "always allow" answer
// given in the terminal UI. Nothing is added if one of them is invalid.
func (c *Checker) AddRules(b Behavior, rules ...Rule) error {
	if b < Allow || b > Deny {
		return fmt.Errorf("permission checker: bad behavior %d", b)
	}
	compiled, err := compileRules(rules, b, c.cwd, c.home)
	if err != nil {
		return fmt.Errorf("permission checker: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.added[b] = append(c.added[b], compiled...)
	c.joinRules()
	return nil
}

// state is a consistent view of the checker for one call.
type state struct {
	*Checker
	mode             Mode
	dirs             []workDir
	allow, ask, deny []*compiledRule
	gen              int    // of the rules
	cwd              string // the call's directory
	// budget is what is left of the directory entries the call may read
	// (see walkBudget).
	budget int
	// denied caches, by tool, the files the deny rules cover.
	denied map[string]deniedSet
}

func (c *Checker) snapshot(callCwd string) *state {
	c.mu.RLock()
	st := &state{Checker: c, mode: c.mode, dirs: c.dirs, allow: c.rules[Allow], ask: c.rules[Ask], deny: c.rules[Deny], gen: c.gen}
	c.mu.RUnlock()
	st.cwd = c.cwd
	if callCwd != "" {
		st.cwd = absPath(callCwd, c.cwd, c.home)
	}
	return st
}

// toolInput holds the input fields the checker reads.
type toolInput struct {
	Command      string `json:"command"`
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Pattern      string `json:"pattern"`
	URL          string `json:"url"`
	SubagentType string `json:"subagent_type"`
	Skill        string `json:"skill"`
	// LSPFilePath is the LSP tool's file, which it names in camel case
	// as Claude Code's does.
	LSPFilePath string `json:"filePath"`
}

// Check decides a call: deny rules first, then ask rules, then allow
// rules, then the mode and the built-in defaults. A deny rule holds in
// every mode.
func (c *Checker) Check(call Call) Decision {
	st := c.snapshot(call.Cwd)
	tool := canonicalTool(call.Tool)
	var in toolInput
	badInput := false
	if len(call.Input) > 0 && string(call.Input) != "null" {
		badInput = json.Unmarshal(call.Input, &in) != nil
	}
	switch kindOf(tool) {
	case kindBash:
		if badInput {
			return st.wholeOrSoft(tool, "the Bash input could not be read", true)
		}
		return st.bash(in.Command)
	case kindRead, kindEdit:
		return st.pathTool(tool, in, badInput)
	}
	return st.other(tool, in, call.ReadOnly, badInput)
}

// ReadDenied reports whether a deny rule forbids reading path (absolute,
// or relative to the working directory). Search tools use it to skip
// files while they walk a tree.
func (c *Checker) ReadDenied(path string) bool {
	st := c.snapshot("")
	v := view(rawAbs(path, st.cwd, st.home), st.follow)
	if st.matchPath(st.deny, "Read", v) != nil {
		return true
	}
	// Another name of a denied file is denied too; when its other names
	// cannot all be found, the file is skipped.
	budget := walkBudget
	r, _, complete := st.hardLinkDenied(v, "Read", &budget)
	return r != nil || !complete
}

// --- decisions ---

func allowBy(r *compiledRule, reason string) Decision {
	rule := r.rule
	return Decision{Behavior: Allow, Reason: reason, Rule: &rule}
}

func denyBy(r *compiledRule, reason string) Decision {
	rule := r.rule
	return Decision{Behavior: Deny, Reason: reason, Rule: &rule}
}

// soft is what happens to a call nothing allows: the mode decides.
// mutating says whether the call may change anything (plan mode denies
// those instead of asking).
func (st *state) soft(reason string, mutating bool) Decision {
	switch st.mode {
	case ModeBypass:
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode allows it (" + reason + ")"}
	case ModeDontAsk:
		return Decision{Behavior: Deny, Reason: "dontAsk mode denies what would need approval: " + reason}
	case ModePlan:
		if mutating {
			return Decision{Behavior: Deny, Reason: "plan mode allows only read-only actions: " + reason}
		}
	}
	return Decision{Behavior: Ask, Reason: reason}
}

// hard is what happens to a call an ask rule (or a possible deny) stops:
// it asks even in bypassPermissions mode.
func (st *state) hard(r *compiledRule, reason string, mutating bool) Decision {
	var rule *Rule
	if r != nil {
		copied := r.rule
		rule = &copied
	}
	switch {
	case st.mode == ModeDontAsk:
		return Decision{Behavior: Deny, Reason: "dontAsk mode denies what would need approval: " + reason, Rule: rule}
	case st.mode == ModePlan && mutating:
		return Decision{Behavior: Deny, Reason: "plan mode allows only read-only actions: " + reason, Rule: rule}
	}
	return Decision{Behavior: Ask, Reason: reason, Rule: rule}
}

// unsure is what happens to a call a deny rule might cover (what it does
// is only known at run time, or could not be looked through): it is
// denied where nobody is asked (bypassPermissions, dontAsk, auto: its
// classifier is no one to trust with a deny rule) and asked
// elsewhere, so that a deny rule holds in every mode.
func (st *state) unsure(r *compiledRule, reason string, mutating bool) Decision {
	var rule *Rule
	if r != nil {
		copied := r.rule
		rule = &copied
	}
	switch {
	case st.mode == ModeBypass || st.mode == ModeDontAsk || st.mode == ModeAuto:
		return Decision{Behavior: Deny, Reason: fmt.Sprintf("%s mode denies what a deny rule might cover: %s", st.mode, reason), Rule: rule}
	case st.mode == ModePlan && mutating:
		return Decision{Behavior: Deny, Reason: "plan mode allows only read-only actions: " + reason, Rule: rule}
	}
	return Decision{Behavior: Ask, Reason: reason, Rule: rule}
}

// allowed is a call some rule allows; plan mode still denies it when it
// may change anything.
func (st *state) allowed(r *compiledRule, reason string, mutating bool) Decision {
	if st.mode == ModePlan && mutating {
		return Decision{Behavior: Deny, Reason: "plan mode allows only read-only actions, though " + reason}
	}
	if r == nil {
		return Decision{Behavior: Allow, Reason: reason}
	}
	return allowBy(r, reason)
}

// firstWhole returns the first rule in rs that covers every call of tool.
func firstWhole(rs []*compiledRule, tool string) *compiledRule {
	for _, r := range rs {
		if r.whole() && r.coversTool(tool) {
			return r
		}
	}
	return nil
}

// wholeOrSoft decides a call whose input cannot be matched against
// specifiers: only whole-tool rules apply.
func (st *state) wholeOrSoft(tool, reason string, mutating bool) Decision {
	if r := firstWhole(st.deny, tool); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies every %s call", r.rule.describe(), tool))
	}
	if r := firstWhole(st.ask, tool); r != nil {
		return st.hard(r, fmt.Sprintf("%s requires approval for every %s call", r.rule.describe(), tool), mutating)
	}
	return st.soft(reason, mutating)
}

// --- file tools ---

// matchPath returns the first rule in rs covering tool whose path pattern
// matches the path (as written or resolved), or that covers tool whole.
func (st *state) matchPath(rs []*compiledRule, tool string, v pathView) *compiledRule {
	for _, r := range rs {
		if !r.coversTool(tool) {
			continue
		}
		if r.whole() {
			return r
		}
		if r.path == nil {
			continue
		}
		for _, p := range v.forms() {
			if r.path.match(p) {
				return r
			}
		}
	}
	return nil
}

// allowsPath returns a rule in rs covering tool that allows the path both
// as written and as the kernel resolves it: a link inside an allowed
// directory that points elsewhere is not allowed by it.
func (st *state) allowsPath(rs []*compiledRule, tool string, v pathView) *compiledRule {
	var first *compiledRule
	for _, p := range v.forms() {
		r := st.matchPath(rs, tool, pathView{lex: p})
		if r == nil {
			return nil
		}
		if first == nil {
			first = r
		}
	}
	return first
}

// matchUnder returns the first rule in rs covering tool whose path pattern
// could match path or anything under it.
func (st *state) matchUnder(rs []*compiledRule, tool string, v pathView) *compiledRule {
	for _, r := range rs {
		if !r.coversTool(tool) {
			continue
		}
		if r.whole() {
			return r
		}
		if r.path == nil {
			continue
		}
		for _, p := range v.forms() {
			if r.path.matchesUnder(p) {
				return r
			}
		}
	}
	return nil
}

// hasPathRules reports whether rs has a path rule for tool (which an
// unknown path might match).
func hasPathRules(rs []*compiledRule, tool string) *compiledRule {
	for _, r := range rs {
		if r.coversTool(tool) && (r.whole() || r.path != nil) {
			return r
		}
	}
	return nil
}

func (st *state) pathTool(tool string, in toolInput, badInput bool) Decision {
	edit := kindOf(tool) == kindEdit
	verb := "reading"
	if edit {
		verb = "writing"
	}
	raw, known := "", !badInput
	switch tool {
	case "NotebookEdit", "NotebookRead":
		raw = in.NotebookPath
	case "Glob":
		raw, known = globRoot(in.Path, in.Pattern)
		known = known && !badInput
	case "Grep", "LS":
		raw = in.Path
		if raw == "" {
			raw = "."
		}
	case "LSP":
		raw = in.LSPFilePath
	default:
		raw = in.FilePath
	}
	if raw == "" || !known {
		return st.wholeOrSoft(tool, fmt.Sprintf("the %s call names no path the checker can read", tool), edit)
	}
	v := view(rawAbs(raw, st.cwd, st.home), st.follow)
	if r := st.matchPath(st.deny, tool, v); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies %s %s", r.rule.describe(), verb, v.lex))
	}
	st.budget = walkBudget
	if r, other, complete := st.hardLinkDenied(v, tool, &st.budget); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies %s %s, another name of %s", r.rule.describe(), verb, v.lex, other))
	} else if !complete {
		r := hasPathRules(st.deny, tool)
		return st.unsure(r, fmt.Sprintf("%s has other names the checker could not all find, which %s might cover", v.lex, r.rule.describe()), edit)
	}
	if r := st.matchPath(st.ask, tool, v); r != nil {
		return st.hard(r, fmt.Sprintf("%s requires approval for %s %s", r.rule.describe(), verb, v.lex), edit)
	}
	if r := st.allowsPath(st.allow, tool, v); r != nil {
		return st.allowed(r, fmt.Sprintf("%s allows %s %s", r.rule.describe(), verb, v.lex), edit)
	}
	inside := v.insideAny(st.dirs)
	if !edit {
		if inside {
			return Decision{Behavior: Allow, Reason: "reading inside the working directories"}
		}
		return st.soft(fmt.Sprintf("reading %s is outside the working directories", v.lex), false)
	}
	switch {
	case !inside:
		return st.soft(fmt.Sprintf("writing %s is outside the working directories", v.lex), true)
	case protectedPath(v.lex) || protectedPath(v.real):
		return st.soft(fmt.Sprintf("writing %s needs approval: it configures git, MCP servers or permissions", v.lex), true)
	case st.protectedLink(v) != "":
		return st.soft(fmt.Sprintf("writing %s needs approval: it is another name of %s, which configures git, MCP servers or permissions", v.lex, st.protectedLink(v)), true)
	case st.mode == ModeAcceptEdits || st.mode == ModeAuto:
		return Decision{Behavior: Allow, Reason: fmt.Sprintf("%s mode accepts edits inside the working directories", st.mode)}
	}
	return st.soft(fmt.Sprintf("writing %s needs approval", v.lex), true)
}

// globRoot is the directory a Glob call searches: its path joined with
// the literal directories that start its pattern. ok is false when the
// pattern climbs out with ".." after a wildcard.
func globRoot(dir, pattern string) (string, bool) {
	if dir == "" {
		dir = "."
	}
	parts := strings.Split(pattern, "/")
	k := 0
	for k < len(parts)-1 && !strings.ContainsAny(parts[k], "*?[{\\") {
		k++
	}
	for _, p := range parts[k:] {
		if p == ".." {
			return "", false
		}
	}
	lit := strings.Join(parts[:k], "/")
	switch {
	case strings.HasPrefix(pattern, "/"):
		if lit == "" {
			return "/", true
		}
		return lit, true
	case strings.HasPrefix(pattern, "~/"):
		return lit, true
	case lit == "":
		return dir, true
	}
	return filepath.Join(dir, lit), true
}

// --- other tools ---

// harmless tools change nothing outside the session and need no approval.
// Skill only brings instructions the user installed into the conversation:
// the commands a skill runs are checked on their own.
func harmless(tool string) bool {
	switch tool {
	case "Agent", "Skill", "StructuredOutput", "TodoWrite", "TodoRead", "ToolSearch", "ListAgents", "TaskCreate", "TaskGet", "TaskList",
		"TaskUpdate", "TaskOutput", "TaskStop", "KillShell", "BashOutput", "EnterPlanMode", "CronList", "ReportFindings":
		return true
	}
	return false
}

// nonMutating tools may run in plan mode (with approval where needed).
func nonMutating(tool string) bool {
	switch tool {
	case "WebFetch", "WebSearch", "ExitPlanMode", "AskUserQuestion":
		return true
	}
	return harmless(tool) || kindOf(tool) == kindRead
}

func (st *state) other(tool string, in toolInput, hintReadOnly, badInput bool) Decision {
	mutating := !nonMutating(tool) && !hintReadOnly
	subject := ""
	var match func(r *compiledRule) bool
	switch kindOf(tool) {
	case kindWebFetch:
		host := urlHost(in.URL)
		subject = "fetching " + in.URL
		match = func(r *compiledRule) bool { return r.domain != nil && host != "" && r.domain.match(host) }
	case kindAgent:
		agent := in.SubagentType
		if agent == "" {
			agent = "general-purpose"
		}
		subject = "the " + agent + " agent"
		match = func(r *compiledRule) bool { return r.name != nil && r.name.match(agent) }
	case kindSkill:
		skill := strings.TrimPrefix(in.Skill, "/")
		subject = "the " + skill + " skill"
		match = func(r *compiledRule) bool { return r.name != nil && r.name.match(skill) }
	default:
		match = func(*compiledRule) bool { return false }
	}
	if badInput {
		match = func(*compiledRule) bool { return false }
	}
	find := func(rs []*compiledRule) *compiledRule {
		for _, r := range rs {
			if r.coversTool(tool) && (r.whole() || match(r)) {
				return r
			}
		}
		return nil
	}
	what := tool
	if subject != "" {
		what = subject
	}
	if r := find(st.deny); r != nil {
		return denyBy(r, fmt.Sprintf("%s denies %s", r.rule.describe(), what))
	}
	if r := find(st.ask); r != nil {
		return st.hard(r, fmt.Sprintf("%s requires approval for %s", r.rule.describe(), what), mutating)
	}
	if tool == "AskUserQuestion" {
		// Its answers come from whoever approves the call: no rule or
		// mode can stand in for the user.
		return Decision{Behavior: Ask, Reason: "the model asks the user questions"}
	}
	if r := find(st.allow); r != nil {
		return st.allowed(r, fmt.Sprintf("%s allows %s", r.rule.describe(), what), mutating)
	}
	switch {
	case harmless(tool):
		return Decision{Behavior: Allow, Reason: tool + " needs no approval"}
	case tool == "ExitPlanMode" && st.mode == ModePlan:
		return Decision{Behavior: Ask, Reason: "leaving plan mode needs the user's approval"}
	}
	return st.soft(fmt.Sprintf("%s needs approval", what), mutating)
}
