// Package atomicfile writes files whole or not at all: a reader, or the
// next run after a crash, sees the old content or the new one, never part
// of it, and a write interrupted even by SIGKILL leaves nothing behind for
// long. It is the one writer of tack for files that replace others:
// settings, MCP configuration, plugin records, tokens, the Write, Edit and
// NotebookEdit tools, checkpoints restored, session records.
//
// On Linux the data goes to an unnamed file (O_TMPFILE) in the target's
// folder, which gets a name only once complete and synced, so a process
// killed while writing leaves no file at all. Linux cannot link a file over
// an existing name, so a replacement is linked to a temporary name and
// renamed over the target at once; elsewhere, or on a file system without
// O_TMPFILE, the data is written to the temporary name directly. Either way
// a kill can leave a temporary file — in the window of two system calls,
// or during the write on the fallback — and temporary files are named after
// their process (.NAME.tack-PID-RANDOM.tmp), so the next write of the same
// file removes those whose process has gone.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Options say how WriteFile writes.
type Options struct {
	// Mode is the file's permission bits, and its set-user-id,
	// set-group-id and sticky bits, set as given: the umask does not
	// apply, unless Umask is set.
	Mode fs.FileMode
	// Umask makes the file's mode Mode less the process's umask, as a
	// program creating a file gets (the tools' new files).
	Umask bool
	// Owner, when set, is given to the file, where the process may (only
	// root may give a file away). Mode is set after, since changing the
	// owner clears the set-id bits.
	Owner *Owner
	// Exclusive creates the file: the write fails, with an error matching
	// fs.ErrExist, when path exists.
	Exclusive bool
	// NoSync skips the syncs (of the data, and of the folder once the
	// name is given): the file is still replaced whole or not at all for
	// every reader and after any crash of the process, but a power cut
	// or a kernel crash soon after may leave the previous content (or,
	// for a new file, none). For files that are derived and written
	// again at every turn, where a sync would cost more than it saves.
	NoSync bool
	// BeforeCommit, when set, runs once the data is complete on disk and
	// before it takes path; its error abandons the write. Tests use it to
	// fail, or stop, at the last step.
	BeforeCommit func() error

	// named skips the unnamed file, as on a system without O_TMPFILE
	// (for tests).
	named bool
}

// Owner is a file's user and group.
type Owner struct{ UID, GID int }

// Write replaces the file at path by data with permissions mode, set as
// given (see WriteFile).
func Write(path string, data []byte, mode fs.FileMode) error {
	return WriteFile(path, data, Options{Mode: mode})
}

// WriteFile writes data to path as o says: it replaces path (or creates it)
// in one step, after the data is synced to disk. On error path is
// untouched and no temporary file remains; the error names path.
//
// The folder must exist. A symbolic link at path is replaced, not followed:
// to write through a link, resolve it first (filepath.EvalSymlinks).
func WriteFile(path string, data []byte, o Options) error {
	if err := write(path, data, o); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func write(path string, data []byte, o Options) error {
	dir, base := filepath.Dir(path), filepath.Base(path)
	sweep(dir, base)
	if !o.named {
		// Any failure to make the unnamed file (an old kernel, a file
		// system without O_TMPFILE, no /proc to link it through) leaves
		// the named way.
		if f, err := openUnnamed(dir, createMode(o)); err == nil {
			return commitUnnamed(f, path, data, o)
		}
	}
	return writeNamed(path, data, o)
}

// createMode is the mode a file is created with: the final one when the
// umask is to shape it, else one only the owner can read until Chmod.
func createMode(o Options) fs.FileMode {
	if o.Umask {
		return o.Mode
	}
	return 0o600
}

// fill writes data to f and gives it its owner and mode, then syncs it.
func fill(f *os.File, data []byte, o Options) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if o.Owner != nil {
		_ = f.Chown(o.Owner.UID, o.Owner.GID) // best effort, see Owner
	}
	if !o.Umask {
		if err := f.Chmod(o.Mode); err != nil {
			return err
		}
	}
	if !o.NoSync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if o.BeforeCommit != nil {
		return o.BeforeCommit()
	}
	return nil
}

// commitUnnamed fills the unnamed file f and gives it the name path.
func commitUnnamed(f *os.File, path string, data []byte, o Options) error {
	defer f.Close()
	if err := fill(f, data, o); err != nil {
		return err
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	if o.Exclusive {
		if err := linkUnnamed(f, path); err != nil {
			return err
		}
		syncDir(dir, o)
		return nil
	}
	for range 100 {
		tmp := filepath.Join(dir, tempName(base))
		err := linkUnnamed(f, tmp)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		// From here to the rename a kill leaves tmp, for a later sweep.
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		syncDir(dir, o)
		return nil
	}
	return errors.New("cannot find an unused temporary file name")
}

// writeNamed writes through a temporary file with a name from the start.
func writeNamed(path string, data []byte, o Options) (err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	f, err := createNamed(dir, base, createMode(o))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f, data, o); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if o.Exclusive {
		err = os.Link(tmp, path)
		os.Remove(tmp)
	} else {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return err
	}
	syncDir(dir, o)
	return nil
}

// createNamed creates a new temporary file in dir for the file base.
func createNamed(dir, base string, mode fs.FileMode) (*os.File, error) {
	for range 100 {
		f, err := os.OpenFile(filepath.Join(dir, tempName(base)), os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, errors.New("cannot find an unused temporary file name")
}

// tempName is a new temporary name for the file base, naming this process.
func tempName(base string) string {
	return tempPrefix(base) + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(uint64(rand.Uint32()), 36) + ".tmp"
}

// tempPrefix starts the temporary names of the file base: hidden, and
// short enough for the whole name to stay under NAME_MAX.
func tempPrefix(base string) string {
	if len(base) > 100 {
		base = base[:100]
	}
	return "." + base + ".tack-"
}

// sweep removes the temporary files of base in dir that processes which
// have ended left: a write they never finished. Files of live processes —
// a write in progress — and of this one are left alone, and so is any
// name that does not parse.
func sweep(dir, base string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	prefix := tempPrefix(base)
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || !strings.HasSuffix(rest, ".tmp") {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}

// syncDir asks for the new name to be on disk too. It is a best effort:
// some systems cannot open or sync a folder, and the file is in place
// already.
func syncDir(dir string, o Options) {
	if o.NoSync {
		return
	}
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
