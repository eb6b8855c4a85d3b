package builtin

import (
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/tool/tooltest"
)

// Every built-in tool has a valid, closed schema, and those Claude Code also
// has take the same input.
func TestToolsMatchClaudeCode(t *testing.T) {
	tooltest.Check(t, All())
}

func TestSelect(t *testing.T) {
	all, _ := Select(nil)
	if len(all) != len(All()) {
		t.Errorf("nil selects %d tools", len(all))
	}
	none, _ := Select([]string{})
	if len(none) != 0 {
		t.Errorf("empty selects %d tools", len(none))
	}
	some, err := Select([]string{"Read", " Grep", "Read"})
	if err != nil || len(some) != 2 || some[0].Name() != "Read" || some[1].Name() != "Grep" {
		t.Errorf("Select: %v %v", some, err)
	}
	if _, err := Select([]string{"Teleport"}); err == nil || !strings.Contains(err.Error(), "Bash") {
		t.Errorf("unknown tool error %v", err)
	}
	if d, _ := Select([]string{"default"}); len(d) != len(All()) {
		t.Errorf("default selects %d", len(d))
	}
}

// Names are unique across packages.
func TestUniqueNames(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range All() {
		if seen[tl.Name()] {
			t.Errorf("two tools are called %s", tl.Name())
		}
		seen[tl.Name()] = true
	}
}
