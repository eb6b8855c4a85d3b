package cli

import (
	"strings"
	"testing"
)

func TestJoinOptionalValues(t *testing.T) {
	root := newRootCmd(IO{})
	cases := map[string]string{
		"-p -r":                           "-p -r",
		"-r -p":                           "-r -p",
		"-p -r my-work hi":                "-p --resume=my-work hi",
		"-r mcp":                          "--resume=mcp",
		"--debug api,hooks -p hi":         "--debug=api,hooks -p hi",
		"-d -p hi":                        "-d -p hi",
		"-p hi -- -r x":                   "-p hi -- -r x",
		"mcp add srv -- cmd -r x":         "mcp add srv -- cmd -r x",
		"mcp add -s project srv cmd -r x": "mcp add -s project srv cmd -r x",
	}
	for in, want := range cases {
		if got := strings.Join(joinOptionalValues(root, strings.Fields(in)), " "); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}
