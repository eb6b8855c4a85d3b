package permission

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// Matcher matches tool calls against one rule, the way hooks' `if` filter
// ("Bash(rm *)", "Edit(*.ts)") uses it. For Bash it matches like a deny
// rule: through wrappers (sudo, env, xargs, sh -c, find -exec …), by a
// binary's base name, and when a part only known at run time could make
// the command match, so that a filter meant to catch a command is not
// dodged.
type Matcher struct {
	st   *state
	rule *compiledRule
}

// NewMatcher compiles rule for calls made in cwd (absolute), which also
// anchors the rule's path patterns.
func NewMatcher(rule, cwd string) (*Matcher, error) {
	r, err := ParseRule(rule)
	if err != nil {
		return nil, err
	}
	c, err := NewChecker(Config{Cwd: cwd, Rules: RuleSet{Deny: []Rule{r}}})
	if err != nil {
		return nil, err
	}
	return &Matcher{st: c.snapshot(""), rule: c.rules[Deny][0]}, nil
}

// Match reports whether the call matches the rule.
func (m *Matcher) Match(call Call) bool {
	st := *m.st
	if call.Cwd != "" {
		st.cwd = absPath(call.Cwd, m.st.Checker.cwd, m.st.home)
	}
	tool := canonicalTool(call.Tool)
	r := m.rule
	if !r.coversTool(tool) {
		return false
	}
	if r.whole() {
		return true
	}
	var in toolInput
	if len(call.Input) > 0 && json.Unmarshal(call.Input, &in) != nil {
		return false
	}
	var d Decision
	switch kindOf(tool) {
	case kindBash:
		d = st.bash(in.Command)
	case kindRead, kindEdit:
		d = st.pathTool(tool, in, false)
	default:
		d = st.other(tool, in, false, false)
	}
	// The rule is the checker's only rule, as a deny rule: a denial is a
	// match, and so is an ask it caused (a command that might match).
	return d.Behavior == Deny || d.Rule != nil
}

// MatchRule reports whether call, made in cwd, matches rule (see Matcher).
func MatchRule(rule string, call Call, cwd string) (bool, error) {
	if !filepath.IsAbs(cwd) {
		return false, fmt.Errorf("match rule %q: cwd %q is not absolute", rule, cwd)
	}
	m, err := NewMatcher(rule, cwd)
	if err != nil {
		return false, err
	}
	return m.Match(call), nil
}
