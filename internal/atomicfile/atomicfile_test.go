package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// entries lists the names in dir, to check that no temporary file stays.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	writes := []struct {
		data string
		mode fs.FileMode
	}{
		{"{}\n", 0o600},
		{"{\"a\": 1}\n", 0o666}, // set as given, the umask notwithstanding
		{"", 0o644},
	}
	for _, w := range writes {
		if err := Write(p, []byte(w.data), w.mode); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != w.data {
			t.Errorf("wrote %q, read %q, %v", w.data, got, err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != w.mode {
			t.Errorf("%q: mode %v, want %v", w.data, fi.Mode().Perm(), w.mode)
		}
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "settings.json" {
		t.Errorf("folder holds %v", names)
	}
}

func TestWriteFailsWithoutATrace(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no", "such", "f.json")
	err := Write(missing, []byte("x"), 0o644)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "write "+missing+": ") {
		t.Errorf("missing folder: %v", err)
	}

	// A folder where the file should be: the rename fails, and the
	// temporary file goes.
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = Write(sub, []byte("x"), 0o644)
	if err == nil || !strings.HasPrefix(err.Error(), "write "+sub+": ") {
		t.Errorf("over a folder: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(sub, "keep")); err != nil || !fi.IsDir() {
		t.Errorf("the folder was touched: %v", err)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "sub" {
		t.Errorf("folder holds %v", names)
	}
}

func TestWriteReplacesALinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := Write(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(target); string(got) != "old" {
		t.Errorf("target became %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		t.Errorf("link still a link: %v", err)
	}
	if got, _ := os.ReadFile(link); string(got) != "new" {
		t.Errorf("link holds %q", got)
	}
}

// A reader never sees part of a file, however the writes interleave.
func TestReadersSeeWholeFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	a := bytes.Repeat([]byte("a"), 64<<10)
	b := bytes.Repeat([]byte("b"), 96<<10)
	if err := Write(p, a, 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, data := range [][]byte{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := Write(p, data, 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for reads := 0; ; reads++ {
		select {
		case <-done:
			if names := entries(t, filepath.Dir(p)); len(names) != 1 {
				t.Errorf("folder holds %v", names)
			}
			return
		default:
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("read %d: %d bytes, neither file", reads, len(got))
		}
	}
}
