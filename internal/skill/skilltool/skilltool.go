// Package skilltool holds the Skill tool, through which the model runs
// skills: its description lists every skill the model may run, and a call
// returns the skill's prepared instructions (or, for a skill with
// context: fork, the report of the subagent that ran it).
package skilltool

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/tool"
)

//go:embed skill.md
var intro string

// Name is the tool's name.
const Name = "Skill"

// DefaultListingBudget bounds the skill listing in the description, in
// characters: Claude Code's default (1% of a 200K-token context at four
// characters a token), which keeps the first request small.
const DefaultListingBudget = 8_000

// minDescription is the shortest a description is cut to before skills
// are listed by name only.
const minDescription = 40

const schema = `{"type":"object","properties":{"skill":{"type":"string","description":"The skill's name, as listed (plugin skills: plugin:skill)"},"args":{"type":"string","description":"Optional arguments for the skill"}},"required":["skill"],"additionalProperties":false}`

// Forker runs a skill with context: fork in a subagent: agent is the
// subagent type ("general-purpose" when the skill names none), prompt the
// prepared skill, model the skill's model ("" to inherit). It returns the
// subagent's final report. The engine's subagent runtime implements it.
type Forker interface {
	Fork(ctx context.Context, agent, prompt, model string) (report string, err error)
}

// Options configure the tool.
type Options struct {
	Runtime *skill.Runtime
	// Forker runs context: fork skills; nil runs them inline.
	Forker Forker
	// ListingBudget bounds the listing (characters); 0 means
	// DefaultListingBudget.
	ListingBudget int
}

// Output is the call's structured result (stream-json's tool_use_result,
// the PostToolUse hooks' tool_response). Model, Effort, AllowedTools and
// Hooks are what the engine applies while the skill is active.
type Output struct {
	Success      bool     `json:"success"`
	CommandName  string   `json:"commandName"`
	AllowedTools []string `json:"allowedTools,omitempty"`
	Model        string   `json:"model,omitempty"`
	// Status is "forked" when a subagent ran the instructions (Result is
	// its report); empty (and left out, as Claude Code leaves it) when the
	// instructions are the result.
	Status string      `json:"status,omitempty"`
	Agent  string      `json:"agent,omitempty"`
	Result string      `json:"result,omitempty"`
	Effort string      `json:"-"`
	Hooks  hook.Config `json:"-"`
	// Invocation is the prepared skill, for compaction (skill.Retained).
	Invocation *skill.Invocation `json:"-"`
}

type skillTool struct {
	opts        Options
	description string
}

// New returns the Skill tool. Its description is computed once, from the
// skills the runtime has now, and never changes afterwards: it sits in the
// cached prompt prefix.
func New(opts Options) tool.Tool {
	if opts.ListingBudget <= 0 {
		opts.ListingBudget = DefaultListingBudget
	}
	return &skillTool{opts: opts, description: Describe(opts.Runtime.Listed(), opts.ListingBudget)}
}

// Describe renders the tool's description for skills within budget
// characters of listing. Each skill is "- name: description", sorted by
// name. When the whole listing does not fit, descriptions are cut to the
// longest length that fits (not below a floor), and if that is not
// enough, the last skills are listed by name only: the same skills always
// give the same text.
func Describe(skills []*extension.Skill, budget int) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(intro))
	b.WriteString("\n\nAvailable skills:\n")
	if len(skills) == 0 {
		b.WriteString("(none)\n")
		return b.String()
	}
	b.WriteString(Listing(skills, budget))
	return b.String()
}

// Listing renders the skill list alone (see Describe).
func Listing(skills []*extension.Skill, budget int) string {
	full := make([]string, len(skills))
	for i, s := range skills {
		full[i] = s.ListingDescription(extension.MaxDescription)
	}
	render := func(limit, namesOnlyFrom int) string {
		var b strings.Builder
		for i, s := range skills {
			b.WriteString("- ")
			b.WriteString(s.Name)
			if i < namesOnlyFrom && full[i] != "" {
				b.WriteString(": ")
				b.WriteString(cut(full[i], limit))
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	if out := render(extension.MaxDescription, len(skills)); len(out) <= budget {
		return out
	}
	// The longest per-description limit that fits.
	lo, hi := minDescription, extension.MaxDescription
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(render(mid, len(skills))) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if out := render(lo, len(skills)); len(out) <= budget {
		return out
	}
	// Still too long at the floor: the last skills lose their description.
	for k := len(skills) - 1; k >= 0; k-- {
		if out := render(minDescription, k); len(out) <= budget || k == 0 {
			return out
		}
	}
	return render(minDescription, 0)
}

func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

func (t *skillTool) Name() string                  { return Name }
func (t *skillTool) Description() string           { return t.description }
func (t *skillTool) InputSchema() json.RawMessage  { return json.RawMessage(schema) }
func (t *skillTool) ReadOnly(json.RawMessage) bool { return false }

type input struct {
	Skill string `json:"skill"`
	Args  string `json:"args"`
}

func (t *skillTool) Run(ctx context.Context, _ *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in input
	if err := tool.Decode(Name, raw, &in); err != nil {
		return tool.Result{}, err
	}
	name := strings.TrimPrefix(strings.TrimSpace(in.Skill), "/")
	if name == "" {
		return tool.Result{}, tool.BadInput(Name, "skill is empty: give the name of a listed skill")
	}
	sk, ok := t.opts.Runtime.Skill(name)
	if !ok {
		var names []string
		for _, s := range t.opts.Runtime.ModelInvocable() {
			names = append(names, s.Name)
		}
		return tool.Result{}, tool.BadInput(Name, "Unknown skill: %s%s", name, suggestion(name, names))
	}
	if !sk.ModelInvocable() {
		return tool.Result{}, tool.BadInput(Name, "skill %s can only be run by the user (as /%s): it sets disable-model-invocation", name, name)
	}
	inv, err := t.opts.Runtime.Prepare(ctx, sk, in.Args)
	if err != nil {
		return tool.Result{}, err
	}
	out := &Output{Success: true, CommandName: sk.Name, AllowedTools: inv.AllowedTools, Model: inv.Model,
		Effort: inv.Effort, Hooks: inv.Hooks, Invocation: inv}
	if inv.Fork && t.opts.Forker != nil {
		agent := inv.Agent
		if agent == "" {
			agent = "general-purpose"
		}
		report, err := t.opts.Forker.Fork(ctx, agent, inv.Content, inv.Model)
		if err != nil {
			return tool.Result{}, fmt.Errorf("skill %s: subagent %s: %w", sk.Name, agent, err)
		}
		out.Status, out.Agent, out.Result = "forked", agent, report
		return tool.Result{Content: []llm.Block{llm.Text(report)}, Structured: out}, nil
	}
	return tool.Result{Content: []llm.Block{llm.Text(inv.Content)}, Structured: out}, nil
}

// suggestion is " (did you mean x?)" for the listed name closest to name.
func suggestion(name string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, name) || strings.HasSuffix(n, ":"+name) {
			return fmt.Sprintf(" (did you mean %s?)", n)
		}
	}
	return ""
}
