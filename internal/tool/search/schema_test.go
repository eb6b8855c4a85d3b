package search

import "testing"

// The schemas themselves are checked against Claude Code's for every
// built-in tool in internal/tool/builtin.
func TestToolsAndDescriptions(t *testing.T) {
	tools := Tools()
	if len(tools) != 2 || tools[0].Name() != "Glob" || tools[1].Name() != "Grep" {
		t.Fatalf("Tools() = %v", tools)
	}
	for _, tl := range tools {
		if n := len(tl.Description()); n == 0 || n > 1000 {
			t.Errorf("%s description is %d bytes, want 1..1000", tl.Name(), n)
		}
		if !tl.ReadOnly(nil) {
			t.Errorf("%s is not read-only", tl.Name())
		}
	}
}
