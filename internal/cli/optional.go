package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// pickSession is the value --resume takes when it is given none (pflag's
// NoOptDefVal): the UI opens its session picker, print mode lists the
// sessions. A blank name resumes nothing, so it cannot stand for one.
const pickSession = " "

// optionalValueFlag is the long name of a flag whose value may be left
// out, as Claude Code's `-r, --resume [value]` and `-d, --debug [filter]`
// are: the word after the flag is its value unless it looks like a flag.
func optionalValueFlag(arg string) (string, bool) {
	switch arg {
	case "-r", "--resume":
		return "--resume", true
	case "-d", "--debug":
		return "--debug", true
	}
	return "", false
}

// joinOptionalValues rewrites "--resume ID" as "--resume=ID" (and the same
// for -r, --debug and -d), which pflag needs to tell a value from the
// prompt once the value is optional. So `tack -r "a prompt"` resumes a
// session named "a prompt", as Claude Code does; the prompt of a resumed
// session comes after its name. Subcommands, and everything after "--",
// are left as they are.
func joinOptionalValues(root *cobra.Command, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		long, ok := optionalValueFlag(a)
		if ok && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, long+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	// Joined first, so that a session named like a subcommand (-r mcp) is
	// not taken for one; a subcommand's own words stay as they were.
	if c, _, err := root.Find(out); err != nil || c != root {
		return args
	}
	return out
}
