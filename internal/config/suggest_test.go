package config

import "testing"

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
		if got := suggest(c.in, cands); got != c.want {
			t.Errorf("suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if d := editDistance("kitten", "sitting", 10); d != 3 {
		t.Errorf("editDistance = %d", d)
	}
	if d := editDistance("a", "abcdef", 3); d != 3 {
		t.Errorf("limited editDistance = %d", d)
	}
}
