package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stand-ins: a protected path that does not exist needs something to
// mount over, or the command could create it. tack makes an empty
// read-only directory or file there (what bubblewrap would otherwise leave
// behind on its own), and removes it once no sandboxed command needs it.
// Every command using a stand-in holds a shared flock on it, so that two
// commands — or two tack processes — sharing one remove it only when the
// last is done.
const (
	standInDirMode  = 0o555
	standInFileMode = 0o444
)

// standIn is a stand-in one command holds.
type standIn struct {
	path string
	f    *os.File
	dir  bool
}

// standIns are the stand-ins of one session's commands: the directories
// made to hold them are counted here, and removed (when empty) once no
// command of the session needs them.
type standIns struct {
	mu   sync.Mutex
	made map[string]int
}

// hold makes or joins the stand-ins of the missing guards, and the missing
// directories above them. release drops them, removing what nothing else
// holds.
func (s *standIns) hold(gs []guard) (release func(), err error) {
	var held []standIn
	var dirs []string
	release = func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i].drop()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for i := len(dirs) - 1; i >= 0; i-- {
			if s.made[dirs[i]]--; s.made[dirs[i]] <= 0 {
				delete(s.made, dirs[i])
				os.Remove(dirs[i]) // only when empty
			}
		}
	}
	for _, g := range gs {
		s.mu.Lock()
		h, made, err := holdStandIn(g)
		if s.made == nil {
			s.made = map[string]int{}
		}
		for _, d := range made {
			s.made[d]++
			dirs = append(dirs, d)
		}
		// Directories another command of the session made are held too.
		for d := filepath.Dir(g.path); s.made[d] > 0 && !contains(dirs, d); d = filepath.Dir(d) {
			s.made[d]++
			dirs = append(dirs, d)
		}
		s.mu.Unlock()
		if err != nil {
			release()
			return nil, err
		}
		if h != nil {
			held = append(held, *h)
		}
	}
	return release, nil
}

// holdStandIn makes g's stand-in when g is missing, or joins one another
// command made; nil when g is a real file or directory.
func holdStandIn(g guard) (s *standIn, madeDirs []string, err error) {
	for attempt := 0; attempt < 5; attempt++ {
		fi, err := os.Lstat(g.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			made, err := mkdirs(filepath.Dir(g.path))
			madeDirs = append(madeDirs, made...)
			if err != nil {
				return nil, madeDirs, err
			}
			if err := makeStandIn(g); err != nil && !errors.Is(err, fs.ErrExist) {
				if errors.Is(err, fs.ErrNotExist) {
					continue // a parent went away meanwhile
				}
				return nil, madeDirs, fmt.Errorf("sandbox: stand-in for %s: %w", g.path, err)
			}
			continue // join it as below, whoever made it
		case err != nil:
			return nil, madeDirs, fmt.Errorf("sandbox: %s: %w", g.path, err)
		case !isStandIn(g.path, fi):
			return nil, madeDirs, nil
		}
		f, err := os.Open(g.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, madeDirs, fmt.Errorf("sandbox: stand-in %s: %w", g.path, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
			f.Close()
			return nil, madeDirs, fmt.Errorf("sandbox: lock %s: %w", g.path, err)
		}
		// Still the file locked, not one removed and made again meanwhile?
		if now, err := os.Lstat(g.path); err == nil && sameFile(f, now) {
			return &standIn{path: g.path, f: f, dir: fi.IsDir()}, madeDirs, nil
		}
		f.Close()
	}
	return nil, madeDirs, fmt.Errorf("sandbox: %s keeps changing; cannot protect it", g.path)
}

// makeStandIn creates g's stand-in, failing when something is there.
func makeStandIn(g guard) error {
	if g.dir {
		if err := os.Mkdir(g.path, standInDirMode); err != nil {
			return err
		}
		return os.Chmod(g.path, standInDirMode) // past the umask
	}
	f, err := os.OpenFile(g.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, standInFileMode)
	if err != nil {
		return err
	}
	_, err = f.WriteString(g.content)
	if err2 := f.Chmod(standInFileMode); err == nil {
		err = err2
	}
	if err2 := f.Close(); err == nil {
		err = err2
	}
	if err != nil {
		os.Remove(g.path)
	}
	return err
}

// isStandIn reports whether the entry at path looks like a stand-in: an
// empty directory of mode 0555, or a file of mode 0444 holding nothing or
// ".\n" — what nobody's own files look like.
func isStandIn(path string, fi fs.FileInfo) bool {
	switch {
	case fi.IsDir():
		if fi.Mode().Perm() != standInDirMode {
			return false
		}
		entries, err := os.ReadDir(path)
		return err == nil && len(entries) == 0
	case fi.Mode().IsRegular():
		if fi.Mode().Perm() != standInFileMode || fi.Size() > 2 {
			return false
		}
		b, err := os.ReadFile(path)
		return err == nil && (len(b) == 0 || string(b) == ".\n")
	}
	return false
}

// drop releases s, removing it when no other command holds it.
func (s standIn) drop() {
	defer s.f.Close()
	// Converting to exclusive drops the shared lock first, so of two
	// commands releasing together at least one gets it.
	if unix.Flock(int(s.f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	fi, err := os.Lstat(s.path)
	if err != nil || !sameFile(s.f, fi) || !isStandIn(s.path, fi) {
		return
	}
	os.Remove(s.path)
}

// sameFile reports whether open file f is the entry fi.
func sameFile(f *os.File, fi fs.FileInfo) bool {
	ofi, err := f.Stat()
	if err != nil {
		return false
	}
	a, ok1 := ofi.Sys().(*syscall.Stat_t)
	b, ok2 := fi.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Dev == b.Dev && a.Ino == b.Ino
}

// mkdirs makes dir and its missing parents, returning those it made,
// outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, fmt.Errorf("sandbox: %w", err)
		}
		made = append(made, missing[i])
	}
	return made, nil
}
