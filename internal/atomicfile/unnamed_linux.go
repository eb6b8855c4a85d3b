package atomicfile

import (
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed opens a new file without a name in dir (O_TMPFILE), created
// with mode less the umask. It fails where the kernel or the file system
// has no O_TMPFILE, and where /proc, through which linkUnnamed names the
// file, is missing.
func openUnnamed(dir string, mode fs.FileMode) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), dir)
	if _, err := os.Lstat(procPath(f)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// linkUnnamed gives the unnamed file f the name path, which must not
// exist. Linking by the /proc path, unlike AT_EMPTY_PATH, needs no
// privilege.
func linkUnnamed(f *os.File, path string) error {
	if err := unix.Linkat(unix.AT_FDCWD, procPath(f), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW); err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: err}
	}
	return nil
}

func procPath(f *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())) }
