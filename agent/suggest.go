package agent

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
)

// ruleInput holds the fields of a tool's input SuggestRule reads.
type ruleInput struct {
	Command      string `json:"command"`
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	URL          string `json:"url"`
}

// SuggestRule is the allow rule a host's "allow always" answer adds for a
// call of tool with input, in a session working in cwd: the command's
// prefix for Bash (Bash(git log *)), the folder for the file tools
// (Edit(./src/**), Read(//etc/**)), the domain for WebFetch, the tool's
// name otherwise. It is "" when no rule fits (ExitPlanMode, AskUserQuestion,
// a command with a subshell), and the host should then offer no "always".
// The terminal UI and tack acp offer the same rules, saved with an
// addRules PermissionUpdate to the localSettings destination.
func SuggestRule(tool string, input json.RawMessage, cwd string) string {
	var in ruleInput
	_ = json.Unmarshal(input, &in)
	switch tool {
	case "ExitPlanMode", AskUserQuestionTool:
		return ""
	case "Bash":
		return bashRule(in.Command)
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		path := in.FilePath
		if tool == "NotebookEdit" {
			path = in.NotebookPath
		}
		if path == "" {
			return ""
		}
		dir := filepath.Dir(path)
		if rel, err := filepath.Rel(cwd, dir); err == nil && rel == "." {
			return "Edit(./*)"
		}
		return "Edit(" + pathPattern(dir, cwd) + ")"
	case "Read", "Glob", "Grep", "LS":
		path := in.FilePath
		if path == "" {
			path = in.Path
		}
		if path == "" {
			return ""
		}
		if tool == "Read" {
			path = filepath.Dir(path)
		}
		return "Read(" + pathPattern(path, cwd) + ")"
	case "WebFetch":
		u, err := url.Parse(in.URL)
		if err != nil || u.Hostname() == "" {
			return ""
		}
		return "WebFetch(domain:" + u.Hostname() + ")"
	}
	return tool
}

// SuggestPermissions are the permission updates a host may offer as
// "always allow" answers to a call (the Agent SDK's permission
// suggestions): for a file edit, accepting edits for the session; for
// anything else with a rule to save (SuggestRule), that rule, saved to the
// project's local settings. Empty when there is nothing to offer.
func SuggestPermissions(tool string, input json.RawMessage, cwd string) []PermissionUpdate {
	switch tool {
	case "Edit", "MultiEdit", "Write", "NotebookEdit":
		return []PermissionUpdate{{Type: "setMode", Mode: PermissionAcceptEdits, Destination: "session"}}
	}
	rule := SuggestRule(tool, input, cwd)
	if rule == "" {
		return []PermissionUpdate{}
	}
	value, err := ParsePermissionRule(rule)
	if err != nil {
		return []PermissionUpdate{}
	}
	return []PermissionUpdate{{Type: "addRules", Rules: []PermissionRuleValue{value}, Behavior: "allow", Destination: "localSettings"}}
}

// blockedPath is the path of a file tool's call when it lies outside cwd:
// the one the call would need access to.
func blockedPath(tool string, input json.RawMessage, cwd string) string {
	var in struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
	}
	switch tool {
	case "Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Glob", "Grep":
	default:
		return ""
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	path := in.FilePath + in.NotebookPath
	if path == "" {
		path = in.Path
	}
	if path == "" || cwd == "" {
		return ""
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.Clean(path)
}

// pathPattern is the rule pattern of everything under dir: ./rel/** inside
// cwd, //abs/** outside it.
func pathPattern(dir, cwd string) string {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	rel, err := filepath.Rel(cwd, dir)
	switch {
	case err != nil || strings.HasPrefix(rel, ".."):
		return "/" + filepath.ToSlash(dir) + "/**"
	case rel == ".":
		return "./**"
	}
	return "./" + filepath.ToSlash(rel) + "/**"
}

// bashRule allows a command by its prefix: the program and, when there is
// one, its subcommand ("git log *"). A compound command is allowed exactly.
func bashRule(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" {
		return ""
	}
	if strings.ContainsAny(cmd, "()") {
		return ""
	}
	if strings.ContainsAny(cmd, ";&|<>`$\n") {
		return "Bash(" + cmd + ")"
	}
	f := strings.Fields(cmd)
	prefix := f[0]
	if len(f) > 1 && isWord(f[1]) {
		prefix += " " + f[1]
	}
	return "Bash(" + prefix + " *)"
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != "" && s[0] != '-'
}
