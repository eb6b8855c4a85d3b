package permission

import "fmt"

// Behavior is what a rule or a decision does with a tool call.
type Behavior int

const (
	// Allow runs the call without asking.
	Allow Behavior = iota
	// Ask needs the user's approval (or a permission prompt tool); where
	// nobody can answer, the caller turns it into a denial.
	Ask
	// Deny refuses the call.
	Deny
)

// String returns "allow", "ask" or "deny", the words settings files use.
func (b Behavior) String() string {
	switch b {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Behavior(%d)", int(b))
}

// Mode says how calls that no rule decides are treated.
type Mode string

const (
	// ModeDefault runs read-only calls inside the working directories and
	// asks for everything else.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also accepts file edits, and common file-changing
	// shell commands, whose paths are all inside the working directories.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan allows read-only calls only; anything else is denied, not
	// asked.
	ModePlan Mode = "plan"
	// ModeBypass allows everything that no deny or ask rule stops.
	ModeBypass Mode = "bypassPermissions"
	// ModeDontAsk denies whatever would otherwise be asked.
	ModeDontAsk Mode = "dontAsk"
	// ModeAuto accepts edits inside the working directories as acceptEdits
	// does, and leaves what would otherwise be asked to a classifier (the
	// session's small model), which the checker does not call: Check
	// answers Ask, and the caller asks the classifier instead of a person.
	ModeAuto Mode = "auto"
)

// Modes lists every mode, the three the terminal UI cycles through first.
func Modes() []Mode {
	return []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeAuto, ModeBypass, ModeDontAsk}
}

// ParseMode returns the mode named s; "" is the default mode.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeDefault, nil
	}
	for _, m := range Modes() {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown permission mode %q: want default, acceptEdits, plan, auto, bypassPermissions or dontAsk", s)
}

// Valid reports whether m is a known mode.
func (m Mode) Valid() bool {
	_, err := ParseMode(string(m))
	return err == nil && m != ""
}
