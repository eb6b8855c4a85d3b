package permission

import (
	"errors"
	"fmt"
	"strings"
)

// Rule is one permission rule, `Tool` or `Tool(specifier)`, as written in
// settings files, --allowedTools/--disallowedTools, SDK options and the
// terminal UI's "always allow" answers.
//
// A Rule is plain data: the Checker compiles Tool and Specifier when it is
// built, so a Rule may also be made by hand, and Rules compare with ==.
type Rule struct {
	// Tool is the tool name as written ("Bash", "Edit", "Task",
	// "mcp__server__tool", …).
	Tool string
	// Specifier is the text between the parentheses, with \( and \)
	// unescaped; "" for a rule that matches every call of the tool.
	// "Tool()" and "Tool(*)" are read as "Tool".
	Specifier string
	// Origin says where the rule comes from, for reasons shown to the model
	// and the user, e.g. "project settings /repo/.claude/settings.json".
	Origin string
	// Base is the directory that path patterns starting with a single "/"
	// are relative to: the project root of the settings file the rule comes
	// from. "" means the Checker's working directory.
	Base string
}

// CheckRule reports what is wrong with a rule, as ParseRule reads it: the
// validator of settings files.
func CheckRule(s string) error {
	_, err := ParseRule(s)
	return err
}

// ParseRule parses a rule such as `Bash(npm run test *)`, `Read(./.env)`,
// `WebFetch(domain:example.com)` or `mcp__github`. Origin and Base are left
// for the caller to set.
func ParseRule(s string) (Rule, error) {
	r, err := splitRule(s)
	if err != nil {
		return Rule{}, fmt.Errorf("permission rule %q: %w", s, err)
	}
	if _, err := compileRule(r, Allow, pathEnv{}); err != nil {
		return Rule{}, fmt.Errorf("permission rule %q: %w", s, err)
	}
	return r, nil
}

// MustParseRule is ParseRule for rules known to be valid; it panics on a
// bad one. Meant for tests and literals in code.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String returns the rule in the form ParseRule reads, without Origin and
// Base.
func (r Rule) String() string {
	if r.Specifier == "" {
		return r.Tool
	}
	spec := r.Specifier
	if !parensBalanced(spec) || strings.Contains(spec, `\(`) || strings.Contains(spec, `\)`) {
		// Escape every parenthesis; a backslash already before one then
		// reads back as itself.
		spec = escapeParens.Replace(spec)
	}
	return r.Tool + "(" + spec + ")"
}

// describe is the rule and where it comes from, for reasons.
func (r Rule) describe() string {
	if r.Origin == "" {
		return r.String()
	}
	return r.String() + " in " + r.Origin
}

// splitRule splits s into its tool name and specifier and checks the
// parentheses and the tool name.
func splitRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Rule{}, errors.New("empty rule")
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.IndexByte(s, ')') >= 0 {
			return Rule{}, errors.New(`unbalanced parentheses: ")" without "("`)
		}
		if err := checkToolName(s); err != nil {
			return Rule{}, err
		}
		return Rule{Tool: s}, nil
	}
	tool := strings.TrimSpace(s[:open])
	if tool == "" {
		return Rule{}, errors.New("empty tool name before \"(\"")
	}
	if err := checkToolName(tool); err != nil {
		return Rule{}, err
	}
	if !strings.HasSuffix(s, ")") {
		if strings.LastIndexByte(s, ')') > open {
			return Rule{}, errors.New(`text after the closing ")"`)
		}
		return Rule{}, errors.New(`unbalanced parentheses: missing closing ")"`)
	}
	inner := s[open+1 : len(s)-1]
	if !parensBalanced(inner) {
		return Rule{}, errors.New(`unbalanced parentheses in the specifier (escape a literal one as \( or \))`)
	}
	if strings.IndexByte(inner, 0) >= 0 {
		return Rule{}, errors.New("NUL byte in the specifier")
	}
	spec := strings.TrimSpace(unescapeParens.Replace(inner))
	if spec == "*" {
		spec = ""
	}
	return Rule{Tool: tool, Specifier: spec}, nil
}

// escapeParens and unescapeParens are built once: building a Replacer
// costs more than using it, and a settings file can hold tens of thousands
// of rules. A Replacer is safe for concurrent use.
var (
	escapeParens   = strings.NewReplacer("(", `\(`, ")", `\)`)
	unescapeParens = strings.NewReplacer(`\(`, "(", `\)`, ")")
)

// parensBalanced reports whether the unescaped parentheses of s pair up.
func parensBalanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == ')') {
				i++
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// checkToolName accepts names made of letters, digits, '_', '-' and '.',
// starting with a letter; MCP names may also use '*' wildcards.
func checkToolName(name string) error {
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'):
		case c == '*' && strings.HasPrefix(name, "mcp__") && i >= len("mcp__"):
		case c == '*':
			return fmt.Errorf("bad tool name %q: wildcards are only allowed in MCP tool names (mcp__server__*)", name)
		default:
			return fmt.Errorf("bad tool name %q: unexpected %q", name, c)
		}
	}
	if name == "mcp__" || strings.HasPrefix(name, "mcp__") && strings.HasPrefix(name[len("mcp__"):], "_") {
		return fmt.Errorf("bad tool name %q: missing the MCP server name", name)
	}
	return nil
}

// toolKind groups tools by what their specifier matches.
type toolKind int

const (
	kindOther    toolKind = iota // any other tool: no specifier
	kindBash                     // command prefix
	kindRead                     // path of a file read
	kindEdit                     // path of a file written
	kindWebFetch                 // domain:host
	kindAgent                    // subagent type
	kindSkill                    // skill name
	kindMCP                      // mcp__server[__tool]: no specifier
)

// canonicalTool maps legacy tool names to current ones.
func canonicalTool(name string) string {
	if name == "Task" {
		return "Agent"
	}
	return name
}

// kindOf classifies a (canonical) tool name.
func kindOf(tool string) toolKind {
	switch tool {
	case "Bash":
		return kindBash
	case "Read", "Glob", "Grep", "LS", "NotebookRead", "LSP":
		return kindRead
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return kindEdit
	case "WebFetch":
		return kindWebFetch
	case "Agent":
		return kindAgent
	case "Skill":
		return kindSkill
	}
	if strings.HasPrefix(tool, "mcp__") {
		return kindMCP
	}
	return kindOther
}

// ruleCoversTool reports whether a rule written for ruleTool applies to a
// call of callTool (both canonical). Edit-family rules cover every tool
// that writes files and Read rules every tool that reads them, so that
// `deny: ["Edit(.env)"]` also stops Write.
func ruleCoversTool(ruleTool, callTool string) bool {
	if ruleTool == callTool {
		return true
	}
	switch kindOf(ruleTool) {
	case kindEdit:
		return kindOf(callTool) == kindEdit
	case kindRead:
		return ruleTool == "Read" && kindOf(callTool) == kindRead
	case kindMCP:
		return mcpNameMatch(ruleTool, callTool)
	}
	return false
}

// mcpNameMatch matches MCP tool names: "mcp__server" covers every tool of
// the server, and '*' is a wildcard ("mcp__server__*", "mcp__*").
func mcpNameMatch(rule, tool string) bool {
	if !strings.HasPrefix(tool, "mcp__") {
		return false
	}
	if strings.Contains(rule, "*") {
		return wildcardMatch(rule, tool)
	}
	if strings.Count(rule, "__") == 1 { // server-level rule
		return strings.HasPrefix(tool, rule+"__")
	}
	return false
}

// wildcardMatch matches s against a pattern where '*' stands for any run of
// characters and everything else is literal.
func wildcardMatch(pattern, s string) bool {
	return compileWildcard(pattern).match(s)
}
