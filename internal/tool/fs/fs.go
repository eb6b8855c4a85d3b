// Package fs holds the file tools: Read, Write, Edit and NotebookEdit.
//
// They share the session's tool.FileState: Read records what it saw of a
// file, and the writing tools refuse a file that exists but was not read in
// the session, or that changed on disk since (its modification time or size
// differ from the recorded stamp). Writes are atomic and keep the file's
// mode and CRLF line endings, and they go through the session's record of
// its own writes (tool.Env.Writes), so that its file watcher tells them
// from other processes' changes.
package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tackcode/tack/internal/spell"
	"github.com/tackcode/tack/internal/tool"
)

// Tools returns the file tools.
func Tools() []tool.Tool {
	return []tool.Tool{readTool{}, writeTool{}, editTool{}, notebookEditTool{}}
}

// statFile stats path for a tool that works on one regular file. A missing
// file yields (nil, nil) so the caller decides whether that is an error.
func statFile(name, path string) (os.FileInfo, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("stat %s: %w", path, err)
	case info.IsDir():
		return nil, tool.BadInput(name, "%s is a directory, not a file. List it with `ls` through the Bash tool, or with the Glob tool.", path)
	case !info.Mode().IsRegular():
		return nil, tool.BadInput(name, "%s is not a regular file (it is a %s).", path, kindOf(info.Mode()))
	}
	return info, nil
}

func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// missingFile is the error for a file that does not exist: it names the
// working directory and, when one is close, a file the model may have meant.
func missingFile(name string, env *tool.Env, path string) error {
	msg := "File does not exist. Current working directory: " + env.Cwd() + "."
	if s := similarFile(env, path); s != "" {
		msg += " Did you mean " + s + "?"
	}
	return tool.BadInput(name, "%s", msg)
}

// checkFresh refuses to change a file the session has not read, or that
// changed on disk since it was last read or written, unless its FileState
// is unguarded.
func checkFresh(name string, env *tool.Env, path string, info os.FileInfo) error {
	if !env.Files.Guarded() {
		return nil
	}
	st, ok := env.Files.Get(path)
	if !ok {
		return tool.BadInput(name, "%s has not been read yet in this session. Read it first, then try again.", path)
	}
	if st.Changed(info) {
		return tool.BadInput(name, "%s has been modified since it was last read (by the user, a formatter or another process). Read it again, then retry the change.", path)
	}
	return nil
}

// usesCRLF reports whether most line endings of s are CRLF.
func usesCRLF(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && 2*crlf > strings.Count(s, "\n")
}

// toLF turns CRLF line endings into LF.
func toLF(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// toCRLF turns every line ending into CRLF.
func toCRLF(s string) string { return strings.ReplaceAll(toLF(s), "\n", "\r\n") }

// similarFile returns an existing file the model may have meant by the
// missing path: the path under the working directory when an absolute path
// was meant to be relative, or a sibling whose name differs only in case, in
// extension or by a typo or two.
func similarFile(env *tool.Env, path string) string {
	if filepath.IsAbs(path) {
		if under := filepath.Join(env.Cwd(), path); under != path {
			if _, err := os.Stat(under); err == nil {
				return under
			}
		}
	}
	dir, base := filepath.Split(path)
	d, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer d.Close()
	names, _ := d.Readdirnames(5000) // a bounded look is enough for a hint
	best, bestScore := "", 4
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	for _, n := range names {
		score := 4
		switch {
		case strings.EqualFold(n, base):
			score = 0
		case stem != "" && strings.TrimSuffix(n, filepath.Ext(n)) == stem:
			score = 1
		case len(base) >= 4:
			if dist := spell.Distance(n, base, 3); dist <= 2 {
				score = 1 + dist
			}
		}
		if score < bestScore || (score == bestScore && n < filepath.Base(best)) {
			best, bestScore = filepath.Join(dir, n), score
		}
	}
	return best
}
