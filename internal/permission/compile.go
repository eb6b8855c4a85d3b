package permission

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// compiledRule is a Rule ready to match calls.
type compiledRule struct {
	rule     Rule
	behavior Behavior
	tool     string // canonical tool name
	kind     toolKind
	toolGlob *wildcard // an MCP name with '*'
	cmd      *cmdPattern
	path     *pathPattern
	domain   *domainPattern
	name     *wildcard // Agent and Skill
}

// whole reports whether the rule matches every call of its tools.
func (r *compiledRule) whole() bool { return r.rule.Specifier == "" }

// compileRule validates and compiles a rule. With a zero env, path
// patterns are only checked for syntax.
func compileRule(r Rule, b Behavior, env pathEnv) (*compiledRule, error) {
	if err := checkToolName(r.Tool); err != nil {
		return nil, err
	}
	c := &compiledRule{rule: r, behavior: b, tool: canonicalTool(r.Tool)}
	c.kind = kindOf(c.tool)
	if c.kind == kindMCP && strings.Contains(c.tool, "*") {
		w := compileWildcard(c.tool)
		c.toolGlob = &w
	}
	spec := r.Specifier
	if spec == "" {
		return c, nil
	}
	var err error
	switch c.kind {
	case kindBash:
		c.cmd, err = compileCmdPattern(spec)
	case kindRead, kindEdit:
		if r.Base != "" && env.cwd != "" {
			env.base = absPath(r.Base, env.cwd, env.home)
		}
		c.path, err = compilePathPattern(spec, env)
	case kindWebFetch:
		c.domain, err = compileDomain(spec)
	case kindAgent:
		if strings.ContainsAny(spec, " \t") {
			return nil, fmt.Errorf("bad agent type %q: no blanks allowed", spec)
		}
		w := compileWildcard(spec)
		c.name = &w
	case kindSkill:
		name := strings.TrimSuffix(strings.TrimSuffix(spec, " *"), ":*")
		if name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("bad skill name %q: want Skill(name) or Skill(name *)", spec)
		}
		w := compileWildcard(name)
		c.name = &w
	case kindMCP:
		return nil, fmt.Errorf("MCP tool rules take no specifier: write %s alone, or mcp__server__tool", r.Tool)
	default:
		return nil, fmt.Errorf("tool %s takes no specifier (only Bash, Read, Edit, Write, NotebookEdit, Glob, Grep, WebFetch, Agent and Skill do)", r.Tool)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// coversTool reports whether the rule applies to calls of tool (canonical).
func (r *compiledRule) coversTool(tool string) bool {
	if r.toolGlob != nil {
		return strings.HasPrefix(tool, "mcp__") && r.toolGlob.match(tool)
	}
	return ruleCoversTool(r.tool, tool)
}

// compileRules compiles a rule list, collecting every error.
func compileRules(rules []Rule, b Behavior, cwd, home string) ([]*compiledRule, error) {
	var out []*compiledRule
	var errs []error
	for _, r := range rules {
		env := pathEnv{base: cwd, cwd: cwd, home: home}
		c, err := compileRule(r, b, env)
		if err != nil {
			where := ""
			if r.Origin != "" {
				where = " (" + r.Origin + ")"
			}
			errs = append(errs, fmt.Errorf("%s rule %q%s: %w", b, r.String(), where, err))
			continue
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// urlHost returns the lower-case host name of a WebFetch URL, without port
// or trailing dot; "" when it has none.
func urlHost(raw string) string {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}
