//go:build linux

package search

import (
	"encoding/binary"
	"os"
	"syscall"
	"unsafe"
)

// listDir appends the entries of directory path to d.names and d.ents,
// reading the directory with bare system calls: os.File's poller
// registration costs more than the listing for small directories.
func listDir(path string, d *dirScratch) error {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	if d.buf == nil {
		d.buf = make([]byte, 32<<10)
	}
	for {
		n, err := syscall.ReadDirent(fd, d.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		d.parse(path, d.buf[:n])
	}
}

// linux_dirent64: ino u64, off i64, reclen u16, type u8, name NUL-terminated.
const (
	direntReclen = 16
	direntType   = 18
	direntName   = 19
)

func (d *dirScratch) parse(dir string, buf []byte) {
	for len(buf) >= direntName {
		reclen := int(binary.NativeEndian.Uint16(buf[direntReclen:]))
		if reclen < direntName || reclen > len(buf) {
			return
		}
		rec := buf[:reclen]
		buf = buf[reclen:]
		name := rec[direntName:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if len(name) == 0 || name[0] == '.' && (len(name) == 1 || len(name) == 2 && name[1] == '.') {
			continue
		}
		var kind entryKind
		switch rec[direntType] {
		case syscall.DT_DIR:
			kind = kindDir
		case syscall.DT_REG:
			kind = kindFile
		case syscall.DT_UNKNOWN:
			kind = lstatKind(dir + "/" + unsafe.String(&name[0], len(name)))
		default:
			continue
		}
		d.add(name, kind)
	}
}

// lstatKind finds the kind of an entry the directory listing did not type.
func lstatKind(path string) entryKind {
	st, err := os.Lstat(path)
	switch {
	case err != nil:
		return kindOther
	case st.IsDir():
		return kindDir
	case st.Mode().IsRegular():
		return kindFile
	}
	return kindOther
}
