package llm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/spell"
)

// Check resolves a model name as Resolve does and refuses one that cannot
// be a model: a name that is neither an alias, an id of the catalogue, nor
// a Claude model id (anything naming "claude", as the ids of the API,
// Bedrock and Vertex all do). The error lists the aliases and suggests the
// closest when the name looks misspelt. "default" is the catalogue's
// default model.
func (c *Catalog) Check(name string, getenv func(string) string) (Model, error) {
	name = strings.TrimSpace(name)
	if name == "default" {
		name = ""
	}
	m := c.Resolve(name, getenv)
	if m.Known || name == "" || strings.Contains(strings.ToLower(m.ID), "claude") {
		return m, nil
	}
	aliases := c.Aliases()
	hint := ""
	if s := spell.Suggest(name, append(slices.Clone(aliases), c.ids()...)); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return m, fmt.Errorf("unknown model %q%s: use an alias (%s) or a full model id such as %s",
		name, hint, strings.Join(aliases, ", "), c.Resolve(c.Default, nil).ID)
}

// Aliases are the catalogue's aliases, in catalogue order.
func (c *Catalog) Aliases() []string {
	var out []string
	for _, m := range c.Models {
		out = append(out, m.Aliases...)
	}
	return out
}

func (c *Catalog) ids() []string {
	out := make([]string, len(c.Models))
	for i, m := range c.Models {
		out[i] = m.ID
	}
	return out
}

// Allowed reports whether model m may run under an availableModels list:
// an empty list allows every model; otherwise m must be one the list names
// (by alias or id, compared once both are resolved). The catalogue's
// default model is always allowed, as the setting's users expect a
// session to be able to start.
func (c *Catalog) Allowed(m Model, list []string, getenv func(string) string) bool {
	if len(list) == 0 || m.ID == c.Resolve("", getenv).ID {
		return true
	}
	for _, entry := range list {
		if entry = strings.TrimSpace(entry); entry == m.ID || c.Resolve(entry, getenv).ID == m.ID {
			return true
		}
	}
	return false
}
