package extension

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/lazyregexp"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/spell"
)

// field reads typed values out of one definition's fields, reporting each
// problem at the value's position in path.
type field struct {
	path string
}

func (f field) typeErr(n *node, key, want string) *config.Error {
	return errAt(f.path, n, key, fmt.Sprintf("expected %s, got %s", want, n.kind), nil)
}

// str reads text: a string, or a number or boolean as written (YAML reads
// "version: 1.0" as a number), or a YAML flow list as written.
func (f field) str(n *node, key string) (string, *config.Error) {
	if n == nil || n.kind == kindNull {
		return "", nil
	}
	if s, ok := n.text(); ok {
		return s, nil
	}
	return "", f.typeErr(n, key, "text")
}

// boolean reads true or false (also written as a string, as some users do).
func (f field) boolean(n *node, key string) (bool, *config.Error) {
	if n == nil || n.kind == kindNull {
		return false, nil
	}
	if n.kind == kindBool || n.kind == kindString {
		switch strings.ToLower(strings.TrimSpace(n.str)) {
		case "true", "yes", "on":
			return true, nil
		case "false", "no", "off":
			return false, nil
		}
	}
	return false, errAt(f.path, n, key, fmt.Sprintf("expected true or false, got %s", describe(n)), nil)
}

// describe shows a value in a message.
func describe(n *node) string {
	if s, ok := n.text(); ok && n.kind != kindMap && n.kind != kindSeq {
		return strconv.Quote(s)
	}
	return n.kind.String()
}

// list reads a list of names: a YAML or JSON list of strings, or one
// string of items separated by commas or blanks outside parentheses
// ("Read, Grep", "Bash(git add *) Bash(git commit *)"). The nodes
// returned give each item's position, for messages.
func (f field) list(n *node, key string) ([]string, *config.Error) {
	if n == nil || n.kind == kindNull {
		return nil, nil
	}
	switch n.kind {
	case kindSeq:
		var out []string
		for i, e := range n.elems {
			s, ok := e.text()
			if !ok || e.kind == kindSeq || e.kind == kindMap {
				return nil, f.typeErr(e, fmt.Sprintf("%s[%d]", key, i), "a string")
			}
			out = append(out, splitList(s)...)
		}
		return out, nil
	case kindString, kindNumber, kindBool:
		return splitList(n.str), nil
	}
	return nil, f.typeErr(n, key, "a list or a comma-separated string")
}

// splitList splits s at commas and blanks that are outside parentheses.
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if item := strings.TrimSpace(s[start:end]); item != "" {
			out = append(out, item)
		}
		start = end + 1
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',', ' ', '\t', '\n':
			if depth == 0 {
				flush(i)
			}
		}
	}
	if start <= len(s) {
		flush(len(s))
	}
	return out
}

// knownTools are the tool names a definition may name in tools,
// allowed-tools and disallowedTools: tack's and Claude Code's tools,
// with their legacy names. MCP tools (mcp__server__tool) are accepted
// whatever they are, since servers connect after definitions load.
var knownTools = []string{
	"Agent", "AskUserQuestion", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList",
	"Edit", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep",
	"KillShell", "LS", "ListAgents", "ListMcpResourcesTool", "Monitor", "MultiEdit", "NotebookEdit",
	"NotebookRead", "Read", "ReadMcpResourceTool", "ReportFindings", "ScheduleWakeup",
	"SendMessage", "Skill", "SlashCommand", "Task", "TaskCreate", "TaskGet", "TaskList",
	"TaskOutput", "TaskStop", "TaskUpdate", "TodoRead", "TodoWrite", "ToolSearch",
	"WebFetch", "WebSearch", "Workflow", "Write",
}

// ToolRef is one entry of a tools list, parsed.
type ToolRef struct {
	// Rule is the entry as a permission rule ("Bash(git *)", "Read").
	Rule permission.Rule
	// Agents lists the agent types of an "Agent(worker, researcher)" entry.
	Agents []string
}

// agentList matches "Agent(a, b)" and its legacy spelling "Task(a, b)".
var agentList = lazyregexp.New(`^(Agent|Task)\s*\((.*)\)$`)

// parseTools checks each entry of a tools list: it must be a valid
// permission rule naming a known tool (or an MCP tool).
func (f field) parseTools(items []string, n *node, key string, known func(string) bool) ([]ToolRef, *config.Error) {
	var out []ToolRef
	for i, item := range items {
		at := n
		if n != nil && n.kind == kindSeq && i < len(n.elems) && len(n.elems) == len(items) {
			at = n.elems[i]
		}
		k := fmt.Sprintf("%s[%d]", key, i)
		if m := agentList().FindStringSubmatch(item); m != nil && strings.Contains(m[2], ",") {
			var names []string
			for _, a := range strings.Split(m[2], ",") {
				if a = strings.TrimSpace(a); a != "" {
					names = append(names, a)
				}
			}
			out = append(out, ToolRef{Rule: permission.Rule{Tool: "Agent"}, Agents: names})
			continue
		}
		tool, _, _ := strings.Cut(item, "(")
		if tool = strings.TrimSpace(tool); tool != "" && !isKnownTool(tool, known) {
			return nil, errAt(f.path, at, k, fmt.Sprintf("unknown tool %q%s", tool, didYouMean(tool, knownTools)), nil)
		}
		r, err := permission.ParseRule(item)
		if err != nil {
			return nil, errAt(f.path, at, k, fmt.Sprintf("%q is not a tool name or permission rule", item), err)
		}
		ref := ToolRef{Rule: r}
		if (r.Tool == "Agent" || r.Tool == "Task") && r.Specifier != "" {
			ref.Agents = []string{r.Specifier}
		}
		out = append(out, ref)
	}
	return out, nil
}

func isKnownTool(name string, known func(string) bool) bool {
	if strings.HasPrefix(name, "mcp__") || slices.Contains(knownTools, name) {
		return true
	}
	return known != nil && known(name)
}

// ruleStrings renders tool refs back as the strings the engine matches.
func ruleStrings(refs []ToolRef) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		if len(r.Agents) > 1 {
			out = append(out, "Agent("+strings.Join(r.Agents, ", ")+")")
			continue
		}
		out = append(out, r.Rule.String())
	}
	return out
}

// modelAliases are the model names that are not ids.
var modelAliases = []string{"inherit", "sonnet", "opus", "haiku", "fable", "opusplan", "default", "best", "sonnet[1m]", "opus[1m]", "fable[1m]"}

var bareWord = lazyregexp.New(`^[A-Za-z]+(\[1m\])?$`)

// checkModel accepts an alias, "inherit" or something shaped like a model
// id; a bare word that is no alias is a typo, not an id.
func (f field) checkModel(n *node, key, model string) *config.Error {
	if model == "" || slices.Contains(modelAliases, strings.ToLower(model)) {
		return nil
	}
	if bareWord().MatchString(model) || strings.ContainsAny(model, " \t\n") {
		return errAt(f.path, n, key, fmt.Sprintf("unknown model %q%s (want sonnet, opus, haiku, inherit or a model id such as claude-sonnet-4-5)", model, didYouMean(model, modelAliases)), nil)
	}
	return nil
}

var efforts = []string{"low", "medium", "high", "xhigh", "max"}

func (f field) checkEffort(n *node, key, effort string) *config.Error {
	if effort == "" || slices.Contains(efforts, effort) {
		return nil
	}
	if v, err := strconv.Atoi(effort); err == nil && v > 0 {
		return nil
	}
	return errAt(f.path, n, key, fmt.Sprintf("unknown effort %q (want low, medium, high, xhigh, max or a positive integer)", effort), nil)
}

// unknownKeys reports keys that look like misspelt known ones, which would
// otherwise be ignored without a word.
func unknownKeys(fields *node, known []string, path string) []*config.Error {
	var out []*config.Error
	for _, m := range fields.mems {
		if slices.Contains(known, m.key) {
			continue
		}
		if s := spell.Suggest(m.key, known); s != "" {
			out = append(out, &config.Error{Source: config.Source{Path: path, Line: m.line, Col: m.col}, Key: m.key, Msg: fmt.Sprintf("unknown field, ignored (did you mean %q?)", s), Warning: true})
		}
	}
	return out
}
