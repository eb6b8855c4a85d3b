package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// newFileMode is the mode of files the tools create, before the umask.
const newFileMode = 0o644

// atomicWriter replaces a file by writing a temporary file beside it and
// renaming it over the original, so readers — and the file after a crash —
// see either the old or the new content, never a mix.
type atomicWriter struct {
	// beforeRename, when set, runs after the temporary file is complete and
	// before it replaces the original; tests use it to fail at the last step.
	beforeRename func(tmp string) error
}

// write replaces path with data. old is the existing file's info (nil for a
// new file): its permission bits, and its owner where the process may set
// it, carry over. A symlink is followed, so the link stays a link.
func (w atomicWriter) write(path string, data []byte, old os.FileInfo) (err error) {
	target := path
	if old != nil {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
	}
	dir := filepath.Dir(target)
	f, err := createTemp(dir, filepath.Base(target))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if old != nil {
		if uid, gid, ok := fileOwner(old); ok {
			_ = f.Chown(uid, gid) // best effort: only root may give files away
		}
		// After Chown, which clears set-id bits; chmod ignores the umask.
		if err := f.Chmod(old.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)); err != nil {
			return fmt.Errorf("write %s: keep mode: %w", path, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if w.beforeRename != nil {
		if err := w.beforeRename(tmp); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// createTemp creates a new hidden file in dir named after base. Unlike
// os.CreateTemp it lets the umask shape the mode, which is what a new file
// keeps.
func createTemp(dir, base string) (*os.File, error) {
	if len(base) > 100 {
		base = base[:100] // stay under NAME_MAX with the suffix
	}
	for range 100 {
		name := filepath.Join(dir, "."+base+".tack-"+strconv.FormatUint(uint64(rand.Uint32()), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, newFileMode)
		if errors.Is(err, iofs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, errors.New("cannot find an unused temporary file name")
}

// syncDir makes a rename in dir durable. Failure is ignored: the data is
// already safe in the file, and some filesystems refuse to sync directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
