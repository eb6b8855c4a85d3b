package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/permission"
	"github.com/tackcode/tack/internal/protocol"
	"github.com/tackcode/tack/internal/sandbox"
	"github.com/tackcode/tack/internal/skill"
	"github.com/tackcode/tack/internal/skill/skilltool"
)

// preloadSkills puts the skills a subagent's definition names into its
// context from the start.
func (t *thread) preloadSkills(ctx context.Context) error {
	if t.parent == nil {
		return nil
	}
	s, name := t.s, t.spec.agentType
	for _, sk := range t.spec.def.Skills {
		if s.skills == nil {
			s.notify(fmt.Sprintf("agent %s: no skill %q", name, sk))
			continue
		}
		inv, err := s.skills.Preload(ctx, sk)
		if err != nil {
			s.notify(fmt.Sprintf("agent %s: %v", name, err))
			continue
		}
		t.context = append(t.context, llm.Reminder("", fmt.Sprintf("The skill %s is loaded for you; follow its instructions when they apply:\n\n%s", inv.Name, inv.Content)))
	}
	return nil
}

// expandSkill prepares the user-invocable skill or command sk, run with
// args ("/commit fix typo"), as the message the model gets: the command as
// typed (the tags Claude Code's transcripts use, which the SDK's session
// helpers read) followed by the prepared instructions, or the report of
// the subagent a forked skill ran in.
func (s *Session) expandSkill(ctx context.Context, sk *extension.Skill, args string) ([]llm.Block, error) {
	inv, err := s.skills.Prepare(ctx, sk, args)
	if err != nil {
		return nil, err
	}
	for _, r := range inv.Refused {
		s.notify(fmt.Sprintf("/%s: did not run %s", sk.Name, r))
	}
	body := inv.Content
	if inv.Fork && s.subagents != nil {
		report, err := s.subagents.Fork(ctx, inv.Agent, inv.Content, inv.Model)
		if err != nil {
			return nil, fmt.Errorf("/%s: %w", sk.Name, err)
		}
		body = fmt.Sprintf("The /%s skill ran in a subagent. Its report:\n\n%s", sk.Name, report)
	}
	tags := fmt.Sprintf("<command-message>%s is running…</command-message>\n<command-name>/%s</command-name>\n<command-args>%s</command-args>", sk.Name, sk.Name, args)
	return []llm.Block{llm.Text(tags), llm.Text(body)}, nil
}

// retainedSkills are the skill bodies put back after a compaction: the
// latest invocation of each, within the documented budget.
func (s *Session) retainedSkills() []llm.Block {
	if s.skills == nil {
		return nil
	}
	var out []llm.Block
	for _, inv := range skill.Retained(s.skills.Loaded()) {
		out = append(out, llm.Reminder("", fmt.Sprintf("The skill %s was loaded earlier in this conversation; its instructions still apply:\n\n%s", inv.Name, inv.Content)))
	}
	return out
}

// skillNames lists the skills for the init message: those the user may
// run as /name, and those the model may run.
func (s *Session) skillNames() (commands, skills []string) {
	commands, skills = []string{}, []string{}
	if s.skills == nil {
		return
	}
	for _, sk := range s.skills.Skills() {
		if sk.UserInvocable {
			commands = append(commands, sk.Name)
		}
		if sk.ModelInvocable() {
			skills = append(skills, sk.Name)
		}
	}
	return
}

// pluginList lists the plugins for the init message.
func (s *Session) pluginList() []protocol.Plugin {
	out := []protocol.Plugin{}
	if s.ext == nil {
		return out
	}
	for _, p := range s.ext.Plugins() {
		out = append(out, protocol.Plugin{Name: p.Name, Path: p.Root})
	}
	return out
}

// skillLoaded applies what an invoked skill asks of the session: its model
// for the rest of the prompt, its hooks for the rest of the session.
func (s *Session) skillLoaded(inv skill.Invocation) {
	if m := inv.Model; m != "" && m != "inherit" && s.main != nil && s.main.engine != nil {
		s.skillMu.Lock()
		if s.modelBeforeSkill == nil {
			prev := s.main.engine.Model()
			s.modelBeforeSkill = &prev
		}
		s.skillMu.Unlock()
		s.main.engine.SetModel(s.allowedOr(m, s.main.engine.Model(), "skill "+inv.Name))
	}
	if len(inv.Hooks) == 0 {
		return
	}
	s.skillMu.Lock()
	done := s.skillHooks[inv.Name]
	if s.skillHooks == nil {
		s.skillHooks = map[string]bool{}
	}
	s.skillHooks[inv.Name] = true
	s.skillMu.Unlock()
	if done {
		return
	}
	if err := s.main.hooks.Add(inv.Hooks); err != nil {
		s.notify(fmt.Sprintf("skill %s: %v", inv.Name, err))
	}
}

// restoreModel puts back the model a skill replaced.
func (s *Session) restoreModel() {
	s.skillMu.Lock()
	prev := s.modelBeforeSkill
	s.modelBeforeSkill = nil
	s.skillMu.Unlock()
	if prev != nil {
		s.main.engine.SetModel(*prev)
	}
}

// activateSkills announces the skills with paths that reading path makes
// relevant (once each), since the Skill tool's listing, in the cached
// prefix, leaves them out.
func (s *Session) activateSkills(path string) []llm.Block {
	if s.skills == nil {
		return nil
	}
	if _, ok := s.main.registry.Get(skilltool.Name); !ok {
		return nil
	}
	var out []llm.Block
	for _, sk := range s.skills.Activate(path) {
		out = append(out, llm.Reminder("", fmt.Sprintf("The skill %s applies to files like this one: %s\nRun it with the Skill tool when it fits the task.",
			sk.Name, sk.ListingDescription(0))))
	}
	return out
}

// injectionCheck decides a skill's injected command as a Bash call would
// be: by the rules and the mode, and, in the sandbox, without approval
// (but never past a deny or an ask rule).
func injectionCheck(c *permission.Checker, sb *sandbox.Sandbox) skill.CheckFunc {
	check := skill.CheckerFunc(c)
	if sb == nil || !sb.Settings().AutoAllow() {
		return check
	}
	return func(command string) error {
		err := check(command)
		if !errors.Is(err, skill.ErrNeedsApproval) || !sb.RunsInside(command, false) {
			return err
		}
		in, _ := json.Marshal(map[string]string{"command": command})
		if d := c.Check(permission.Call{Tool: "Bash", Input: in}); d.Rule != nil {
			return err // an ask rule
		}
		return nil
	}
}
