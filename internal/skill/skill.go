// Package skill runs skills and slash commands: it fills a body with its
// arguments and variables, runs its dynamic injections (!`command` and
// ```! blocks) before the model sees it, expands "/name args" prompts, and
// chooses which invocations survive a compaction.
package skill

import (
	"context"
	"errors"
	"fmt"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/permission"
)

// Options configure a Runtime.
type Options struct {
	// Skills are the skills and commands in effect (extension.Set.Skills).
	Skills []*extension.Skill
	// SessionID, Effort and Cwd fill ${CLAUDE_SESSION_ID} and
	// ${CLAUDE_EFFORT}, and anchor the skills' allowed-tools rules.
	SessionID string
	Effort    string
	Cwd       string
	// Run runs injected commands; nil leaves every injection unrun, with a
	// note in its place.
	Run RunFunc
	// Check is the session's permission check for injected commands (see
	// CheckerFunc); nil means every command needs approval, so only a
	// skill's allowed-tools let one run.
	Check CheckFunc
	// Untrusted, when set, reports the skills whose injections must not run
	// at all, whatever the rules say (those of a folder the user has not
	// trusted): each injection is left unrun with a note, and the reason
	// this returns, in its place. "" lets the skill's injections be checked
	// as usual.
	Untrusted func(sk *extension.Skill) (reason string)
	// OnLoad, when set, is told of every invocation whose instructions go
	// into the conversation (not a forked one's, nor a preload), so the
	// session can apply the skill's model and hooks.
	OnLoad func(inv Invocation)
}

// Runtime loads skills for one session. It is safe for concurrent use.
type Runtime struct {
	opts Options
	set  atomic.Pointer[skillSet] // replaced whole by Reset

	mu       sync.Mutex
	checkers map[string]*permission.Checker // allowed-tools, by skill
	seq      int
	loaded   []Invocation // what went into the conversation, in order
	// activated are the skills with paths whose files were read.
	activated map[string]bool
}

// skillSet is the skills of a Runtime.
type skillSet struct {
	all    []*extension.Skill
	byName map[string]*extension.Skill
	// conditional are the model-invocable skills with paths (Activate
	// looks at them on every file read).
	conditional []*extension.Skill
}

func newSkillSet(skills []*extension.Skill) *skillSet {
	set := &skillSet{all: slices.Clone(skills), byName: map[string]*extension.Skill{}}
	for _, s := range skills {
		set.byName[s.Name] = s
		if s.ModelInvocable() && len(s.Paths) > 0 {
			set.conditional = append(set.conditional, s)
		}
	}
	return set
}

// New returns a runtime over opts.Skills.
func New(opts Options) *Runtime {
	r := &Runtime{opts: opts, checkers: map[string]*permission.Checker{}, activated: map[string]bool{}}
	r.set.Store(newSkillSet(opts.Skills))
	return r
}

// Reset replaces the skills (read again from disk): the following calls
// see only these. What was loaded into the conversation stays loaded.
func (r *Runtime) Reset(skills []*extension.Skill) {
	r.set.Store(newSkillSet(skills))
	r.mu.Lock()
	r.checkers = map[string]*permission.Checker{}
	r.mu.Unlock()
}

// Skill returns the skill named name ("/" and blanks around it ignored).
func (r *Runtime) Skill(name string) (*extension.Skill, bool) {
	s, ok := r.set.Load().byName[strings.TrimPrefix(strings.TrimSpace(name), "/")]
	return s, ok
}

// Skills returns every skill, sorted by name.
func (r *Runtime) Skills() []*extension.Skill {
	out := slices.Clone(r.set.Load().all)
	slices.SortFunc(out, func(a, b *extension.Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ModelInvocable returns the skills the Skill tool offers, sorted by name.
func (r *Runtime) ModelInvocable() []*extension.Skill {
	var out []*extension.Skill
	for _, s := range r.Skills() {
		if s.ModelInvocable() {
			out = append(out, s)
		}
	}
	return out
}

// Listed returns the skills the Skill tool lists up front: the ones the
// model may run, except those with paths, which are announced when the
// session first reads a matching file (see Activate).
func (r *Runtime) Listed() []*extension.Skill {
	var out []*extension.Skill
	for _, s := range r.ModelInvocable() {
		if len(s.Paths) == 0 {
			out = append(out, s)
		}
	}
	return out
}

// Activate returns the skills with paths that path (a file the session
// read) makes relevant for the first time. Patterns are matched against
// the path relative to the session's directory, and against the bare
// file name for patterns without a slash.
func (r *Runtime) Activate(path string) []*extension.Skill {
	conditional := r.set.Load().conditional
	if len(conditional) == 0 {
		return nil
	}
	rel := path
	if r.opts.Cwd != "" && filepath.IsAbs(path) {
		if p, err := filepath.Rel(r.opts.Cwd, path); err == nil && !strings.HasPrefix(p, "..") {
			rel = p
		}
	}
	rel = filepath.ToSlash(rel)
	base := pathpkg.Base(rel)
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*extension.Skill
	for _, s := range conditional {
		if r.activated[s.Name] {
			continue
		}
		for _, p := range s.Paths {
			p = strings.TrimPrefix(p, "./")
			ok, _ := doublestar.Match(p, rel)
			if !ok && !strings.Contains(p, "/") {
				ok, _ = doublestar.Match(p, base)
			}
			if ok {
				r.activated[s.Name] = true
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// Invocation is one skill loaded for the model: its prepared text and what
// the engine applies while it is active.
type Invocation struct {
	// Name is the skill's name; Args what it was called with.
	Name string
	Args string
	// Content is the prepared body: arguments filled in, injections run.
	Content string
	// Model, Effort, AllowedTools and Hooks are the skill's, for the engine
	// to apply while it is active.
	Model        string
	Effort       string
	AllowedTools []string
	Hooks        hook.Config
	// Fork is true for a skill with context: fork, to run in the subagent
	// Agent ("" means general-purpose).
	Fork  bool
	Agent string
	// Seq orders the invocations of a session (later is larger).
	Seq int
	// Ran lists the injected commands that ran; Refused those that did
	// not, with why.
	Ran     []string
	Refused []string
}

// Invoke prepares skill name with args. It fails only for an unknown
// skill or a cancelled ctx; an injected command that fails or is refused
// leaves a note in the content instead.
func (r *Runtime) Invoke(ctx context.Context, name, args string) (*Invocation, error) {
	sk, ok := r.Skill(name)
	if !ok {
		return nil, fmt.Errorf("unknown skill %q", name)
	}
	return r.Prepare(ctx, sk, args)
}

// Prepare is Invoke for a skill already looked up.
func (r *Runtime) Prepare(ctx context.Context, sk *extension.Skill, args string) (*Invocation, error) {
	return r.prepare(ctx, sk, args, true)
}

// Preload prepares a skill for a subagent's context (an agent's skills
// field): like Prepare, but it is not one of the session's invocations.
func (r *Runtime) Preload(ctx context.Context, name string) (*Invocation, error) {
	sk, ok := r.Skill(name)
	if !ok {
		return nil, fmt.Errorf("unknown skill %q", name)
	}
	return r.prepare(ctx, sk, "", false)
}

func (r *Runtime) prepare(ctx context.Context, sk *extension.Skill, args string, record bool) (*Invocation, error) {
	args = strings.TrimSpace(args)
	t := substitute(sk.Body, args, sk.Arguments, Vars{
		SessionID: r.opts.SessionID, SkillDir: sk.Dir, Effort: firstNonEmpty(sk.Effort, r.opts.Effort), PluginRoot: sk.PluginRoot,
	})
	inv := &Invocation{Name: sk.Name, Args: args, Model: sk.Model, Effort: sk.Effort,
		AllowedTools: slices.Clone(sk.AllowedTools), Hooks: sk.Hooks, Fork: sk.Context == "fork", Agent: sk.Agent}
	body, err := r.inject(ctx, sk, t, inv)
	if err != nil {
		return nil, err
	}
	if sk.Kind == extension.KindSkill && sk.Dir != "" {
		// As in Claude Code: the model learns where the supporting files are.
		body = "Base directory for this skill: " + sk.Dir + "\n\n" + body
	}
	inv.Content = strings.TrimSpace(body)
	r.mu.Lock()
	r.seq++
	inv.Seq = r.seq
	loaded := record && !inv.Fork
	if loaded {
		r.loaded = append(r.loaded, *inv)
	}
	r.mu.Unlock()
	if loaded && r.opts.OnLoad != nil {
		r.opts.OnLoad(*inv)
	}
	return inv, nil
}

// Seq numbers the latest invocation (0: none yet).
func (r *Runtime) Seq() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Allows reports whether the allowed-tools of a skill loaded after
// invocation since grant call, and names that skill. A skill's
// allowed-tools spare the approval of what they match while it is active;
// they never override a deny or an ask rule (the caller checks those
// first).
func (r *Runtime) Allows(call permission.Call, since int) (string, bool) {
	for _, inv := range r.Loaded() {
		if inv.Seq <= since || len(inv.AllowedTools) == 0 {
			continue
		}
		sk, ok := r.set.Load().byName[inv.Name]
		if !ok {
			continue
		}
		c, err := r.allowedChecker(sk)
		if err != nil || c == nil {
			continue
		}
		if d := c.Check(call); d.Behavior == permission.Allow && d.Rule != nil {
			return sk.Name, true
		}
	}
	return "", false
}

// Loaded returns the invocations whose instructions went into the
// conversation (a forked skill's go to its subagent), oldest first: what
// Retained chooses from after a compaction.
func (r *Runtime) Loaded() []Invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.loaded)
}

// inject runs t's injections and returns the body with their output.
func (r *Runtime) inject(ctx context.Context, sk *extension.Skill, t text, inv *Invocation) (string, error) {
	injs := findInjections(t)
	if len(injs) == 0 {
		return t.s, nil
	}
	var b strings.Builder
	last := 0
	for _, in := range injs {
		b.WriteString(t.s[last:in.from])
		last = in.to
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("skill %s: %w", sk.Name, err)
		}
		if err := r.allow(sk, in.command); err != nil {
			inv.Refused = append(inv.Refused, in.command+": "+err.Error())
			fmt.Fprintf(&b, "[tack did not run `%s`: %s]", oneLine(in.command), err)
			continue
		}
		if r.opts.Run == nil {
			inv.Refused = append(inv.Refused, in.command+": no command runner")
			fmt.Fprintf(&b, "[tack did not run `%s`: commands cannot run here]", oneLine(in.command))
			continue
		}
		out, err := r.opts.Run(ctx, in.command)
		if cerr := ctx.Err(); cerr != nil {
			return "", fmt.Errorf("skill %s: %w", sk.Name, cerr)
		}
		inv.Ran = append(inv.Ran, in.command)
		out = strings.TrimRight(out, "\n")
		b.WriteString(out)
		if err != nil {
			if out != "" {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "[`%s` failed: %s]", oneLine(in.command), err)
		}
	}
	b.WriteString(t.s[last:])
	return b.String(), nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:119]) + "…"
	}
	return s
}

// allow decides whether sk may run command: not at all for an untrusted
// skill, else the session's check, then the skill's allowed-tools for what
// would need approval. A denial is final.
func (r *Runtime) allow(sk *extension.Skill, command string) error {
	if r.opts.Untrusted != nil {
		if why := r.opts.Untrusted(sk); why != "" {
			return errors.New(why)
		}
	}
	var err error = fmt.Errorf("no permission rule allows it: %w", ErrNeedsApproval)
	if r.opts.Check != nil {
		err = r.opts.Check(command)
	}
	if err == nil || !errors.Is(err, ErrNeedsApproval) {
		return err
	}
	c, cerr := r.allowedChecker(sk)
	if cerr != nil {
		return fmt.Errorf("%w (and the skill's allowed-tools are unusable: %v)", err, cerr)
	}
	if c != nil {
		d := c.Check(bashCall(command))
		if d.Behavior == permission.Allow && d.Rule != nil {
			return nil
		}
	}
	if len(sk.AllowedTools) > 0 {
		return fmt.Errorf("not allowed by the skill's allowed-tools (%s) and it would need approval", strings.Join(sk.AllowedTools, ", "))
	}
	return err
}

// allowedChecker compiles sk's allowed-tools as allow rules, once.
func (r *Runtime) allowedChecker(sk *extension.Skill) (*permission.Checker, error) {
	if len(sk.AllowedTools) == 0 {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.checkers[sk.Name]; ok {
		return c, nil
	}
	var rules []permission.Rule
	for _, t := range sk.AllowedTools {
		rule, err := permission.ParseRule(t)
		if err != nil {
			continue // Agent(a, b) lists: not about commands
		}
		rule.Origin = "allowed-tools of skill " + sk.Name
		rules = append(rules, rule)
	}
	cwd := r.opts.Cwd
	if cwd == "" {
		cwd = "/"
	}
	c, err := permission.NewChecker(permission.Config{Cwd: cwd, Rules: permission.RuleSet{Allow: rules}})
	if err != nil {
		return nil, err
	}
	r.checkers[sk.Name] = c
	return c, nil
}

// Expand turns a prompt "/name args" (or "/plugin:name args") into the
// prepared body of the user-invocable skill or command name. ok is false
// when the prompt does not start with the name of one, so that it goes to
// the model as text; err is set only when preparing failed.
func (r *Runtime) Expand(ctx context.Context, prompt string) (content string, sk *extension.Skill, ok bool, err error) {
	p := strings.TrimLeft(prompt, " \t\r\n")
	if !strings.HasPrefix(p, "/") {
		return "", nil, false, nil
	}
	end := strings.IndexAny(p, " \t\r\n")
	if end < 0 {
		end = len(p)
	}
	name, args := p[1:end], strings.TrimSpace(p[end:])
	s, found := r.set.Load().byName[name]
	if !found || !s.UserInvocable {
		return "", nil, false, nil
	}
	inv, err := r.Prepare(ctx, s, args)
	if err != nil {
		return "", s, true, err
	}
	return inv.Content, s, true, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
