package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/jsontree"
)

// writeFile makes path hold content with mode, creating its folder.
func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	// Chmod: WriteFile's mode goes through the umask.
	if err := errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), os.WriteFile(path, []byte(content), mode), os.Chmod(path, mode)); err != nil {
		t.Fatal(err)
	}
}

// readFile returns what path holds; a file that cannot be read holds "".
func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestAddPermissionRule(t *testing.T) {
	cases := []struct {
		name, behavior, before, want string
	}{
		{"no file", "allow", "", "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"blank file", "deny", " \n", "{\n  \"permissions\": {\n    \"deny\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"beside other keys, four spaces", "ask", "{\n    \"model\": \"opus\"\n}\n",
			"{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"ask\": [\"Bash(ls *)\"]\n    }\n}\n"},
		{"beside another list", "allow", "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"]\n  }\n}\n",
			"{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n"},
		{"appended", "allow", "{\"permissions\": {\"allow\": [\"Read\"]}}", "{\"permissions\": {\"allow\": [\"Read\", \"Bash(ls *)\"]}}"},
		{"one a line", "deny", "{\n  \"permissions\": {\n    \"deny\": [\n      \"Read\"\n    ]\n  }\n}\n",
			"{\n  \"permissions\": {\n    \"deny\": [\n      \"Read\",\n      \"Bash(ls *)\"\n    ]\n  }\n}\n"},
		{"crlf and a byte order mark", "allow", "\xef\xbb\xbf{\r\n  \"a\": \"\\u00e9\"\r\n}\r\n",
			"\xef\xbb\xbf{\r\n  \"a\": \"\\u00e9\",\r\n  \"permissions\": {\r\n    \"allow\": [\"Bash(ls *)\"]\r\n  }\r\n}\r\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".claude", "settings.local.json")
			if c.before != "" {
				writeFile(t, path, c.before, 0o600)
			}
			added, err := AddPermissionRule(path, c.behavior, "Bash(ls *)")
			if err != nil || !added {
				t.Fatalf("added=%v err=%v", added, err)
			}
			if got := readFile(path); got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]os.FileMode{true: 0o644, false: 0o600}[c.before == ""]; fi.Mode().Perm() != want {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
			}
			// Again: the rule is there, and the file is not written.
			if err := os.Chmod(path, 0o400); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(path)
			added, err = AddPermissionRule(path, c.behavior, "Bash(ls *)")
			if err != nil || added {
				t.Errorf("again: added=%v err=%v", added, err)
			}
			if after, _ := os.Stat(path); !os.SameFile(before, after) || readFile(path) != c.want {
				t.Error("the file was written again")
			}
		})
	}
}

func TestAddPermissionRuleRefuses(t *testing.T) {
	cases := []struct{ content, behavior, want string }{
		{`[]`, "allow", "s.json: the settings file holds a list, not a JSON object"},
		{`{"permissions": []}`, "allow", "s.json: permissions is a list, not an object"},
		{`{"permissions": {"deny": "x"}}`, "deny", "s.json: permissions.deny is a string, not a list"},
		{"{\n  \"a\": 1,\n}", "allow", "s.json:2:9: invalid JSON: trailing comma before '}'"},
		{"{bad", "allow", "s.json:1:2: invalid JSON: object keys must be strings"},
		{`{}`, "always", `unknown permission behavior "always"`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), "s.json")
		writeFile(t, path, c.content, 0o644)
		added, err := AddPermissionRule(path, c.behavior, "Read")
		if added || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: added=%v err=%v, want %q", c.content, added, err, c.want)
		}
		if got := readFile(path); got != c.content {
			t.Errorf("%s: file changed to %s", c.content, got)
		}
	}
	if _, err := AddPermissionRule(filepath.Join(t.TempDir(), "s.json"), "allow", ""); err == nil {
		t.Error("an empty rule was added")
	}
}

func TestEditFileWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "settings.json")
	writeFile(t, target, "{\n  \"model\": \"opus\"\n}\n", 0o640)
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	err := EditFile(link, func(e *jsontree.Editor) (bool, error) {
		return true, e.Set([]string{"model"}, []byte(`"sonnet"`))
	})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	if got := readFile(target); got != "{\n  \"model\": \"sonnet\"\n}\n" {
		t.Errorf("target holds %q", got)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}

	// A link to nothing is refused rather than replaced by a file.
	dangling := filepath.Join(dir, "dangling.json")
	if err := os.Symlink(filepath.Join(dir, "gone.json"), dangling); err != nil {
		t.Fatal(err)
	}
	err = EditFile(dangling, func(e *jsontree.Editor) (bool, error) { return true, e.Set([]string{"a"}, []byte("1")) })
	if err == nil || !strings.HasPrefix(err.Error(), dangling+": ") {
		t.Errorf("dangling link: %v", err)
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the dangling link was replaced: %v", err)
	}
}

func TestEditFileWritesOnlyChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	const content = "{\"a\": 1}"
	writeFile(t, path, content, 0o644)
	before, _ := os.Stat(path)
	edits := map[string]func(*jsontree.Editor) (bool, error){
		"no change reported": func(e *jsontree.Editor) (bool, error) {
			return false, e.Set([]string{"a"}, []byte("2"))
		},
		"the same text": func(e *jsontree.Editor) (bool, error) {
			return true, e.Set([]string{"a"}, []byte("1"))
		},
	}
	for name, fn := range edits {
		if err := EditFile(path, fn); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if after, _ := os.Stat(path); !os.SameFile(before, after) || readFile(path) != content {
			t.Errorf("%s: the file was written", name)
		}
	}

	boom := errors.New("boom")
	err := EditFile(path, func(e *jsontree.Editor) (bool, error) {
		_ = e.Set([]string{"a"}, []byte("3"))
		return true, boom
	})
	if !errors.Is(err, boom) || err.Error() != path+": boom" {
		t.Errorf("fn's error: %v", err)
	}
	if readFile(path) != content {
		t.Error("written despite fn's error")
	}

	// A missing file that nothing is added to is not created.
	missing := filepath.Join(t.TempDir(), "sub", "settings.json")
	err = EditFile(missing, func(e *jsontree.Editor) (bool, error) {
		return e.Remove([]string{"enabledPlugins", "p@m"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("created %s: %v", filepath.Dir(missing), err)
	}
}

func TestEditFileNamesUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	err := EditFile(dir, func(*jsontree.Editor) (bool, error) { return true, nil })
	if err == nil || err.Error() != dir+": cannot read settings: not a regular file but a directory" {
		t.Errorf("a folder: %v", err)
	}
	file := filepath.Join(dir, "file")
	writeFile(t, file, "{}", 0o644)
	err = EditFile(filepath.Join(file, "settings.json"), func(e *jsontree.Editor) (bool, error) {
		return true, e.Set([]string{"a"}, []byte("1"))
	})
	if err == nil || !strings.HasPrefix(err.Error(), filepath.Join(file, "settings.json")+": ") {
		t.Errorf("below a file: %v", err)
	}
}
