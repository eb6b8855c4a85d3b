// Package session keeps sessions so they can be continued, resumed and
// forked.
//
// A session's transcript is one append-only JSONL file,
// <config dir>/projects/<slug>/<session id>.jsonl, in a form the Claude Agent
// SDK's session helpers read (shared/compat/sdk-sessions.md); its records
// are documented by schema/transcript-record.schema.json. Writer appends to
// it; Load rebuilds the conversation the way the SDK does and makes it a
// valid Messages API conversation again; List, Latest, Resolve, SetName,
// Fork, Delete and Purge manage a project's sessions.
//
// Beside the transcript, <session id>/workflow.json is the workflow record
// of seed 001 and nothing more (name, cwd, mode, settings and MCP files,
// resume arguments, last tool decision), <session id>/launch.json the launch
// options tack restores on resume, and <session id>/prefix.json the system
// blocks and tools of the first request, byte for byte; each is validated
// against a schema embedded in the package (the seed's own, verbatim, for
// the workflow record).
package session

import (
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf16"
)

// ConfigDir is $CLAUDE_CONFIG_DIR, or ~/.claude.
func ConfigDir(getenv func(string) string) string {
	if d := getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".claude")
}

// ProjectDir is the directory holding the transcripts of sessions run in cwd.
func ProjectDir(configDir, cwd string, getenv func(string) string) string {
	if name := getenv("CLAUDE_CODE_PROJECT_DIR_NAME"); name != "" && getenv("CLAUDE_CONFIG_DIR") != "" && validDirName(name) {
		return filepath.Join(configDir, "projects", name)
	}
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	return filepath.Join(configDir, "projects", Slug(cwd))
}

const maxSlug = 200

// Slug names a project directory: every UTF-16 code unit of the path that is
// not an ASCII letter or digit becomes '-'; a slug over 200 units is cut and
// suffixed with a hash of the path, exactly as the Agent SDK computes it.
func Slug(path string) string {
	units := utf16.Encode([]rune(path))
	out := make([]byte, 0, len(units))
	for _, u := range units {
		if u < 128 && (u >= 'a' && u <= 'z' || u >= 'A' && u <= 'Z' || u >= '0' && u <= '9') {
			out = append(out, byte(u))
		} else {
			out = append(out, '-')
		}
	}
	if len(out) <= maxSlug {
		return string(out)
	}
	var h int32
	for _, u := range units {
		h = (h << 5) - h + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(out[:maxSlug]) + "-" + strconv.FormatInt(abs, 36)
}

func validDirName(s string) bool {
	if len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
