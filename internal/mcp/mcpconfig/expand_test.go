package mcpconfig

import (
	"slices"
	"testing"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"HOST": "example.com", "EMPTY": "", "TOKEN": "s3cr3t", "NESTED": "${HOST}"})
	cases := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"https://${HOST}/mcp", "https://example.com/mcp", nil},
		{"${PORT:-8080}", "8080", nil},
		{"${HOST:-other}", "example.com", nil},
		{"${EMPTY:-default}", "", nil}, // set to "": no default, as in Claude Code
		{"${PORT:-a:-b}", "a:-b", nil},
		{"${PORT:-}", "", nil},
		{"Bearer ${TOKEN}", "Bearer s3cr3t", nil},
		{"${NESTED}", "${HOST}", nil}, // one pass
		{"$HOME $$ $ ${ trailing$", "$HOME $$ $ ${ trailing$", nil},
		{"${}", "${}", nil},
		{"${MISSING}/x/${ALSO}", "${MISSING}/x/${ALSO}", []string{"MISSING", "ALSO"}},
		{"${TOKEN}${MISSING}", "s3cr3t${MISSING}", []string{"MISSING"}},
	}
	for _, c := range cases {
		got, missing := Expand(c.in, vars)
		if got != c.want || !slices.Equal(missing, c.missing) {
			t.Errorf("Expand(%q) = %q, %q; want %q, %q", c.in, got, missing, c.want, c.missing)
		}
	}
}

func TestMaskValue(t *testing.T) {
	cases := map[string]string{
		"s3cr3t":                 "****",
		"${TOKEN}":               "${TOKEN}",
		"Bearer ${TOKEN}":        "Bearer ${TOKEN}",
		"${USER}:${PASS}":        "****", // a literal ':' could be anything: masked
		"sk-live-${SUFFIX}":      "****",
		"${TOKEN:-fallback-key}": "${TOKEN:-fallback-key}",
		"":                       "",
	}
	for in, want := range cases {
		if got := MaskValue(in); got != want {
			t.Errorf("MaskValue(%q) = %q, want %q", in, got, want)
		}
	}
	if got := MaskURL("https://u:pw@h.example/mcp?api_key=abc&x=1&flag"); got != "https://u:****@h.example/mcp?api_key=****&x=****&flag" {
		t.Errorf("MaskURL: %s", got)
	}
	if got := MaskURL("https://h.example/mcp"); got != "https://h.example/mcp" {
		t.Errorf("MaskURL changed a plain URL: %s", got)
	}
}
