package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/jsontree"
)

// This file reads and edits Claude Code's global configuration file,
// ~/.claude.json, and the other JSON files kept beside the settings (a
// project's .mcp.json): MCP servers and their approvals (internal/mcp/
// mcpconfig) and the folders the user trusts (trust.go) live there.

// MaxClaudeJSONSize bounds what is read of ~/.claude.json: it holds Claude
// Code's prompt history and grows, but not to this.
const MaxClaudeJSONSize = 512 << 20

// ClaudeJSONPath is where Claude Code keeps its global configuration:
// $CLAUDE_CONFIG_DIR/.claude.json when CLAUDE_CONFIG_DIR is set, else
// ~/.claude.json. As in Claude Code, a legacy <config dir>/.config.json
// (config dir: $CLAUDE_CONFIG_DIR or ~/.claude) is used instead when it
// exists.
func ClaudeJSONPath(getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil && getenv("CLAUDE_CONFIG_DIR") == "" {
			return "", fmt.Errorf("locating ~/.claude.json: %w", err)
		}
		home = h
	}
	dir := getenv("CLAUDE_CONFIG_DIR")
	configDir := dir
	if configDir == "" {
		configDir = filepath.Join(home, ".claude")
	}
	if legacy := filepath.Join(configDir, ".config.json"); isRegularFile(legacy) {
		return legacy, nil
	}
	if dir == "" {
		dir = home
	}
	return filepath.Join(dir, ".claude.json"), nil
}

func isRegularFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// ReadJSONFile reads a JSON configuration file of at most limit bytes. A
// missing file gives nil, false and no error; the error of a file that
// exists but cannot be read does not repeat the path.
func ReadJSONFile(path string, limit int64) (src []byte, exists bool, err error) {
	info, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, false, nil
		}
		return nil, false, cause(err)
	}
	if info.IsDir() && emptyDir(path) {
		// The sandbox holds an empty read-only directory where a missing
		// protected file (.mcp.json) would go while a command runs, so
		// that the command cannot create it: that is no file.
		return nil, false, nil
	}
	if !info.Mode().IsRegular() {
		return nil, true, errors.New("not a regular file")
	}
	if info.Size() > limit {
		return nil, true, fmt.Errorf("%d bytes is too large for a configuration file", info.Size())
	}
	src, err = os.ReadFile(path)
	if err != nil {
		return nil, true, cause(err)
	}
	return src, true, nil
}

// EditClaudeJSON edits ~/.claude.json (path) with fn as EditJSONFile does,
// holding Claude Code's lock on it; a new file is private to the user.
func EditClaudeJSON(path string, fn func(e *jsontree.Editor) (bool, error)) error {
	return EditJSONFile(path, 0o600, true, MaxClaudeJSONSize, fn)
}

// EditJSONFile reads path, lets fn edit it and writes the result back
// atomically (a temporary file renamed over it), keeping the file's mode
// (perm for a new file) and writing through a symbolic link to its target.
// When lock is set, the edit holds Claude Code's lock on the file. The file
// is not written when fn changes nothing, nor when it changed on disk
// meanwhile. fn's errors are returned as they are; the others name path.
func EditJSONFile(path string, perm fs.FileMode, lock bool, limit int64, fn func(e *jsontree.Editor) (bool, error)) error {
	target := path
	if t, err := filepath.EvalSymlinks(path); err == nil {
		target = t
	}
	if lock {
		unlock, err := lockFile(path, lockWait)
		if err != nil {
			return err
		}
		defer unlock()
	}
	src, exists, err := ReadJSONFile(target, limit)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	mode := perm
	if exists {
		if info, err := os.Stat(target); err == nil {
			mode = info.Mode().Perm()
		}
	}
	e := jsontree.NewEditor(src)
	changed, err := fn(e)
	if err != nil {
		return err
	}
	out := e.Bytes()
	if !changed || bytes.Equal(out, src) {
		return nil
	}
	// A last check that the edit left valid JSON: the file is not ours.
	if _, serr := jsontree.Parse(e.Text(), shallow); serr != nil {
		return fmt.Errorf("%s: internal error: the edit would leave invalid JSON (%s); nothing written", path, serr.Msg)
	}
	now, _, err := ReadJSONFile(target, limit)
	if err != nil || !bytes.Equal(now, src) {
		return fmt.Errorf("%s changed while tack was editing it; nothing written, try again", path)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(target, out, mode)
}

// Claude Code serialises its writes of ~/.claude.json with the npm package
// proper-lockfile: the lock is a directory named after the file plus
// ".lock", considered stale when its modification time is older than ten
// seconds (a live holder refreshes it). tack takes the same lock, so that an
// edit does not interleave with a running Claude Code's write.
const (
	lockStale = 10 * time.Second
	lockWait  = 3 * time.Second
)

// lockFile takes Claude Code's lock on path, waiting at most wait for
// another holder to release it, and returns its release.
func lockFile(path string, wait time.Duration) (func(), error) {
	lock := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		err := os.Mkdir(lock, 0o700)
		if err == nil {
			return func() { os.Remove(lock) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if info, serr := os.Stat(lock); serr == nil && time.Since(info.ModTime()) > lockStale {
			os.Remove(lock) // stale: its holder died
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is locked by another program (%s exists); try again", path, lock)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// emptyDir reports whether dir is a directory with nothing in it.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}
