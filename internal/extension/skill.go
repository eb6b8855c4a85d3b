package extension

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/hook"
)

// Kind says whether a skill is a skill folder or a legacy command file.
type Kind string

// The kinds of skills.
const (
	KindSkill   Kind = "skill"   // NAME/SKILL.md
	KindCommand Kind = "command" // commands/NAME.md
)

// MaxDescription is the longest description Claude Code shows of a skill;
// a longer one is cut in listings.
const MaxDescription = 1536

// Skill is a skill or a legacy slash command: a prompt template the user
// runs as /name and, unless it says otherwise, the model runs through the
// Skill tool.
type Skill struct {
	// Name is what /name and the Skill tool call it: the folder name of a
	// skill, the file name of a command ("git:commit" for
	// commands/git/commit.md), prefixed "plugin:" in a plugin.
	Name string
	// DisplayName is the frontmatter name, when it differs from Name.
	DisplayName string
	Kind        Kind
	Description string
	// WhenToUse is the when_to_use field, appended to the description in
	// listings.
	WhenToUse    string
	ArgumentHint string
	// Arguments are the declared argument names, which $name substitutes.
	Arguments []string
	// AllowedTools are permission rules ("Bash(git *)") that hold while the
	// skill runs, and for its dynamic injections.
	AllowedTools []string
	// DisableModelInvocation keeps the skill out of the Skill tool.
	DisableModelInvocation bool
	// UserInvocable is false to hide the skill from /name.
	UserInvocable bool
	Model         string
	Effort        string
	// Context is "fork" to run the skill in a subagent (Agent names it).
	Context string
	Agent   string
	// Paths are globs: the skill is meant for work on matching files.
	Paths []string
	// Hooks apply while the skill is active (Source "skill:NAME").
	Hooks hook.Config
	// Shell runs its injected commands: "bash" (default) or "powershell".
	Shell string
	// Body is the Markdown after the frontmatter.
	Body string
	// Path is the SKILL.md or command file; Dir is the skill's folder
	// (${CLAUDE_SKILL_DIR}, supporting files), "" for a command.
	Path string
	Dir  string
	// PluginRoot is the plugin folder of a plugin skill (${CLAUDE_PLUGIN_ROOT}).
	PluginRoot string
	Source     Source
	// ShadowedBy is set on a definition that another of the same name
	// overrides (see Set.ShadowedSkills).
	ShadowedBy *Skill
}

// ModelInvocable reports whether the model may run the skill.
func (s *Skill) ModelInvocable() bool { return !s.DisableModelInvocation }

// ListingDescription is the description the Skill tool lists: the
// description, then when_to_use, cut to max characters (MaxDescription
// when max ≤ 0) with an ellipsis.
func (s *Skill) ListingDescription(max int) string {
	if max <= 0 {
		max = MaxDescription
	}
	d := s.Description
	if s.WhenToUse != "" {
		d += " - " + s.WhenToUse
	}
	d = strings.Join(strings.Fields(d), " ") // one line in the listing
	if utf8.RuneCountInString(d) > max {
		r := []rune(d)
		d = string(r[:max-1]) + "…"
	}
	return d
}

var skillKeys = []string{"name", "description", "when_to_use", "argument-hint", "arguments", "allowed-tools",
	"disable-model-invocation", "user-invocable", "model", "effort", "context", "agent", "paths", "hooks",
	"shell", "version", "license", "metadata", "disallowed-tools", "hide-from-slash-command-tool"}

// parseSkill reads a SKILL.md (kind KindSkill) or a command file. name is
// the invocation name, already namespaced.
func parseSkill(src []byte, path, name string, kind Kind, source Source, pluginRoot string) (*Skill, []*config.Error, *config.Error) {
	fm, err := parseFrontmatter(src, path)
	if err != nil {
		return nil, nil, err
	}
	fields := fm.fields
	f := field{path: path}
	s := &Skill{Name: name, Kind: kind, Path: path, Source: source, UserInvocable: true, Body: fm.body, PluginRoot: pluginRoot}
	if kind == KindSkill {
		s.Dir = filepath.Dir(path)
	}
	var warns []*config.Error
	if s.DisplayName, err = f.str(fields.get("name"), "name"); err != nil {
		return nil, nil, err
	}
	if s.DisplayName == baseName(name) {
		s.DisplayName = ""
	}
	descNode := fields.get("description")
	if s.Description, err = f.str(descNode, "description"); err != nil {
		return nil, nil, err
	}
	s.Description = strings.TrimSpace(s.Description)
	if s.Description == "" {
		if kind == KindSkill {
			return nil, nil, errAt(path, fields, "description", `missing "description" (what the skill does and when to use it: the model reads it to decide)`, nil)
		}
		// A command file is often a bare prompt: like Claude Code, describe
		// it by its first line.
		s.Description = firstLine(fm.body)
	}
	if n := utf8.RuneCountInString(s.Description); n > MaxDescription {
		w := errAt(path, descNode, "description", fmt.Sprintf("%d characters, over the %d that listings show: the rest is cut", n, MaxDescription), nil)
		w.Warning = true
		warns = append(warns, w)
	}
	if s.WhenToUse, err = f.str(fields.get("when_to_use"), "when_to_use"); err != nil {
		return nil, nil, err
	}
	if s.ArgumentHint, err = f.str(fields.get("argument-hint"), "argument-hint"); err != nil {
		return nil, nil, err
	}
	if s.Arguments, err = f.list(fields.get("arguments"), "arguments"); err != nil {
		return nil, nil, err
	}
	for i, a := range s.Arguments {
		if !validArgName(a) {
			return nil, nil, errAt(path, fields.get("arguments"), fmt.Sprintf("arguments[%d]", i), fmt.Sprintf("invalid argument name %q: use letters, digits and '_', not starting with a digit", a), nil)
		}
	}
	atNode := fields.get("allowed-tools")
	if items, err := f.list(atNode, "allowed-tools"); err != nil {
		return nil, nil, err
	} else if refs, err := f.parseTools(items, atNode, "allowed-tools", nil); err != nil {
		return nil, nil, err
	} else if refs != nil {
		s.AllowedTools = ruleStrings(refs)
	}
	if s.DisableModelInvocation, err = f.boolean(fields.get("disable-model-invocation"), "disable-model-invocation"); err != nil {
		return nil, nil, err
	}
	if n := fields.get("user-invocable"); n != nil && n.kind != kindNull {
		if s.UserInvocable, err = f.boolean(n, "user-invocable"); err != nil {
			return nil, nil, err
		}
	}
	modelNode := fields.get("model")
	if s.Model, err = f.str(modelNode, "model"); err != nil {
		return nil, nil, err
	}
	if err := f.checkModel(modelNode, "model", s.Model); err != nil {
		return nil, nil, err
	}
	effNode := fields.get("effort")
	if s.Effort, err = f.str(effNode, "effort"); err != nil {
		return nil, nil, err
	}
	if err := f.checkEffort(effNode, "effort", s.Effort); err != nil {
		return nil, nil, err
	}
	ctxNode := fields.get("context")
	if s.Context, err = f.str(ctxNode, "context"); err != nil {
		return nil, nil, err
	}
	if s.Context != "" && s.Context != "fork" {
		return nil, nil, errAt(path, ctxNode, "context", fmt.Sprintf("unknown context %q (the only value is fork: run the skill in a subagent)", s.Context), nil)
	}
	if s.Agent, err = f.str(fields.get("agent"), "agent"); err != nil {
		return nil, nil, err
	}
	pathsNode := fields.get("paths")
	if s.Paths, err = f.list(pathsNode, "paths"); err != nil {
		return nil, nil, err
	}
	for i, p := range s.Paths {
		if !doublestar.ValidatePattern(p) {
			return nil, nil, errAt(path, pathsNode, fmt.Sprintf("paths[%d]", i), fmt.Sprintf("invalid glob %q", p), nil)
		}
	}
	if s.Hooks, err = parseHooks(fields.get("hooks"), path, "hooks", hookContext{source: "skill:" + name, pluginRoot: pluginRoot}); err != nil {
		return nil, nil, err
	}
	shellNode := fields.get("shell")
	if s.Shell, err = f.str(shellNode, "shell"); err != nil {
		return nil, nil, err
	}
	if s.Shell != "" && s.Shell != "bash" && s.Shell != "powershell" {
		return nil, nil, errAt(path, shellNode, "shell", fmt.Sprintf("unknown shell %q (want bash or powershell)", s.Shell), nil)
	}
	warns = append(warns, unknownKeys(fields, skillKeys, path)...)
	return s, warns, nil
}

func validArgName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// firstLine is the first non-blank line of body, a heading's text without
// its #s, cut to 100 characters: a command's description when it has none.
func firstLine(body string) string {
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		l = strings.TrimSpace(strings.TrimLeft(l, "#"))
		if r := []rune(l); len(r) > 100 {
			l = string(r[:97]) + "..."
		}
		return l
	}
	return ""
}

// baseName is the part of a namespaced name after its last ':'.
func baseName(name string) string {
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}
