package config

import (
	"testing"

	"github.com/tackcode/tack/internal/spell"
)

func TestSuggest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"permisions", "permissions"},
		{"Permissions", "permissions"},
		{"deni", "deny"},
		{"PreTooluse", "PreToolUse"},
		{"pretooluse", "PreToolUse"},
		{"spinnerTipsEnabled", ""},
		{"permissions", ""},
		{"xyz", ""},
	} {
		cands := append(append(append([]string{}, topLevelKeys...), permissionKeys...), hookEvents[:]...)
		if got := spell.Suggest(c.in, cands); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
