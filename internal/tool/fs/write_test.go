package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/watch"
)

// The Write of new.txt in compat/samples/tools4.stream-json.stdout.jsonl.
func TestWriteCreateMatchesSample(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "new.txt")
	res := mustCall(t, writeTool{}, env, map[string]any{"file_path": path, "content": "created by mock\n"})
	if got := textOf(res); !strings.HasPrefix(got, "File created successfully at: "+path) {
		t.Errorf("content %q", got)
	}
	want := fmt.Sprintf(`{"type":"create","filePath":%q,"content":"created by mock\n","structuredPatch":[],"originalFile":null,"userModified":false}`, path)
	if got := structured(t, res); got != want {
		t.Errorf("structured\n got %s\nwant %s", got, want)
	}
	if got := readFile(t, path); got != "created by mock\n" {
		t.Errorf("file holds %q", got)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(newFileMode) &^ currentUmask(t); info.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v", info.Mode().Perm(), want)
	}
	noTempFiles(t, dir)
}

// currentUmask reads the umask from a file created with 0777.
func currentUmask(t *testing.T) os.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o777)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ info.Mode().Perm()
}

func TestWriteCreatesParentDirectories(t *testing.T) {
	env, dir := newEnv(t)
	mustCall(t, writeTool{}, env, map[string]any{"file_path": "a/b/c.txt", "content": "deep"})
	if got := readFile(t, filepath.Join(dir, "a", "b", "c.txt")); got != "deep" {
		t.Errorf("file holds %q", got)
	}
}

func TestWriteUpdate(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "one\ntwo\n", 0o644)
	readIt(t, env, path)
	res := mustCall(t, writeTool{}, env, map[string]any{"file_path": path, "content": "one\n2\n"})
	if got, want := textOf(res), "The file "+path+" has been updated successfully."; !strings.HasPrefix(got, want) {
		t.Errorf("content %q, want prefix %q", got, want)
	}
	want := fmt.Sprintf(`{"type":"update","filePath":%q,"content":"one\n2\n","structuredPatch":[{"oldStart":1,"oldLines":2,"newStart":1,"newLines":2,"lines":[" one","-two","+2"]}],"originalFile":"one\ntwo\n","userModified":false}`, path)
	if got := structured(t, res); got != want {
		t.Errorf("structured\n got %s\nwant %s", got, want)
	}
	// The write recorded the new stamp: writing again needs no Read.
	mustCall(t, writeTool{}, env, map[string]any{"file_path": path, "content": "three\n"})
	if got := readFile(t, path); got != "three\n" {
		t.Errorf("file holds %q", got)
	}
	noTempFiles(t, dir)
}

func TestWriteRefusesUnreadFile(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "original\n", 0o644)
	isInputError(t, callErr(t, writeTool{}, env, map[string]any{"file_path": path, "content": "x"}, "has not been read", "Read it first"))
	if got := readFile(t, path); got != "original\n" {
		t.Errorf("refused write changed the file to %q", got)
	}
}

func TestWriteRefusesFileChangedSinceRead(t *testing.T) {
	for _, change := range []string{"mtime", "size"} {
		t.Run(change, func(t *testing.T) {
			env, dir := newEnv(t)
			path := filepath.Join(dir, "f.txt")
			writeFile(t, path, "original\n", 0o644)
			readIt(t, env, path)
			if change == "mtime" {
				touch(t, path)
			} else {
				st, _ := env.Files.Get(path)
				writeFile(t, path, "original, then changed by the user\n", 0o644)
				if err := os.Chtimes(path, st.ModTime, st.ModTime); err != nil {
					t.Fatal(err)
				}
			}
			before := readFile(t, path)
			callErr(t, writeTool{}, env, map[string]any{"file_path": path, "content": "x"}, "modified since", "Read it again")
			if readFile(t, path) != before {
				t.Error("refused write changed the file")
			}
			readIt(t, env, path)
			mustCall(t, writeTool{}, env, map[string]any{"file_path": path, "content": "x"})
		})
	}
}

func TestWriteKeepsModeAndCRLF(t *testing.T) {
	env, dir := newEnv(t)
	script := filepath.Join(dir, "run.sh")
	writeFile(t, script, "#!/bin/sh\necho hi\r\n", 0o755) // mostly LF: stays LF
	readIt(t, env, script)
	mustCall(t, writeTool{}, env, map[string]any{"file_path": script, "content": "#!/bin/sh\necho bye\n"})
	info, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", info.Mode().Perm())
	}
	if got := readFile(t, script); got != "#!/bin/sh\necho bye\n" {
		t.Errorf("LF file holds %q", got)
	}

	dos := filepath.Join(dir, "dos.txt")
	writeFile(t, dos, "a\r\nb\r\n", 0o600)
	readIt(t, env, dos)
	res := mustCall(t, writeTool{}, env, map[string]any{"file_path": dos, "content": "x\ny\r\nz"})
	if got := readFile(t, dos); got != "x\r\ny\r\nz" {
		t.Errorf("CRLF file holds %q", got)
	}
	if got := structured(t, res); !strings.Contains(got, `"lines":["-a","-b","+x","+y","+z","\\ No newline at end of file"]`) {
		t.Errorf("patch of a CRLF file must be on LF text: %s", got)
	}
	if info, _ := os.Stat(dos); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
}

func TestWriteFollowsSymlink(t *testing.T) {
	env, dir := newEnv(t)
	target := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "link.txt")
	writeFile(t, target, "old\n", 0o644)
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	readIt(t, env, link)
	mustCall(t, writeTool{}, env, map[string]any{"file_path": link, "content": "new\n"})
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if got := readFile(t, target); got != "new\n" {
		t.Errorf("target holds %q", got)
	}
}

func TestWriteRefusesDirectory(t *testing.T) {
	env, dir := newEnv(t)
	isInputError(t, callErr(t, writeTool{}, env, map[string]any{"file_path": dir, "content": "x"}, "is a directory"))
}

func TestWriteFailureLeavesOriginal(t *testing.T) {
	env, dir := newEnv(t)
	path := filepath.Join(dir, "f.txt")
	writeFile(t, path, "original\n", 0o644)
	readIt(t, env, path)
	w := writeTool{w: failingWriter()}
	_, err := call(t, w, env, map[string]any{"file_path": path, "content": "replacement\n"})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if got := readFile(t, path); got != "original\n" {
		t.Errorf("failed write left %q", got)
	}
	noTempFiles(t, dir)

	_, err = call(t, w, env, map[string]any{"file_path": filepath.Join(dir, "new.txt"), "content": "x"})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("failed create left a file: %v", err)
	}
	noTempFiles(t, dir)
}

func TestWriteReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only directories")
	}
	env, dir := newEnv(t)
	sub := filepath.Join(dir, "ro")
	path := filepath.Join(sub, "f.txt")
	writeFile(t, path, "original\n", 0o644)
	readIt(t, env, path)
	if err := os.Chmod(sub, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(sub, 0o755) })
	if _, err := call(t, writeTool{}, env, map[string]any{"file_path": path, "content": "x"}); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	if got := readFile(t, path); got != "original\n" {
		t.Errorf("failed write left %q", got)
	}
	noTempFiles(t, dir)
}

// Every file tool writes through the session's record of its own writes,
// and the files it reads and writes are told to whoever watches them.
func TestFileToolsRecordTheirWrites(t *testing.T) {
	env, dir := newEnv(t)
	env.Writes = &watch.Writes{}
	var seen []string
	env.Files.OnRecord(func(path string) { seen = append(seen, path) })
	a, b, nb := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(dir, "n.ipynb")
	if err := os.WriteFile(nb, []byte(`{"cells":[{"cell_type":"code","id":"c1","source":"x = 1","metadata":{},"outputs":[]}],"metadata":{},"nbformat":4,"nbformat_minor":5}`), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCall(t, writeTool{}, env, map[string]any{"file_path": a, "content": "one\n"})
	mustCall(t, editTool{}, env, map[string]any{"file_path": a, "old_string": "one", "new_string": "two"})
	mustCall(t, editTool{}, env, map[string]any{"file_path": b, "old_string": "", "new_string": "new\n"})
	mustCall(t, readTool{}, env, map[string]any{"file_path": nb})
	mustCall(t, notebookEditTool{}, env, map[string]any{"notebook_path": nb, "cell_id": "c1", "new_source": "x = 2"})
	for _, p := range []string{a, b, nb} {
		if !env.Writes.Own(p) {
			t.Errorf("%s is not recorded as the session's own write", p)
		}
	}
	if err := os.WriteFile(a, []byte("someone else\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if env.Writes.Own(a) {
		t.Error("a file rewritten by someone else is still the session's own")
	}
	want := []string{a, a, b, nb, nb}
	if !slices.Equal(seen, want) {
		t.Errorf("recorded files = %v, want %v", seen, want)
	}
}
