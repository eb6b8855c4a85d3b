// Package atomicfile replaces files atomically: a reader, or the next run
// after a crash, sees the old content or the new one, never part of it.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the file at path by data with permissions mode: it writes
// a temporary file in the same folder, sets its mode, syncs it to disk and
// renames it over path. On error path is untouched and the temporary file
// removed; the error names path.
//
// The folder must exist. A symbolic link at path is replaced, not followed:
// to write through a link, resolve it first (filepath.EvalSymlinks). The
// mode is set as given, without the umask.
func Write(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}

// syncDir asks for the rename to be on disk too. It is a best effort: some
// systems cannot open or sync a folder, and the file is in place already.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
