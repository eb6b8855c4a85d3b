package extension

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetPluginEnabledEditsInPlace(t *testing.T) {
	cases := []struct {
		name, in, want string
		id             string
		on             bool
	}{
		{"missing object", "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"}\n}\n", "{\n  \"model\": \"opus\",\n  \"env\": {\"A\": \"1\"},\n  \"enabledPlugins\": {\n    \"p@m\": true\n  }\n}\n", "p@m", true},
		{"add to object", "{\n    \"enabledPlugins\": {\n        \"a@m\": true\n    },\n    \"x\": 1\n}", "{\n    \"enabledPlugins\": {\n        \"a@m\": true,\n        \"p@m\": true\n    },\n    \"x\": 1\n}", "p@m", true},
		{"flip", "{\"enabledPlugins\": {\"p@m\": true, \"q@m\": true}, \"z\": [1,2]}", "{\"enabledPlugins\": {\"p@m\": false, \"q@m\": true}, \"z\": [1,2]}", "p@m", false},
		{"one-line add", "{\"enabledPlugins\": {\"a@m\": true}}", "{\"enabledPlugins\": {\"a@m\": true, \"p@m\": true}}", "p@m", true},
		{"empty object", "{\n  \"enabledPlugins\": {}\n}\n", "{\n  \"enabledPlugins\": {\n    \"p@m\": true\n  }\n}\n", "p@m", true},
		{"crlf", "{\r\n  \"a\": 1\r\n}\r\n", "{\r\n  \"a\": 1,\r\n  \"enabledPlugins\": {\r\n    \"p@m\": true\r\n  }\r\n}\r\n", "p@m", true},
		{"empty file", "", "{\n  \"enabledPlugins\": {\n    \"p@m\": true\n  }\n}\n", "p@m", true},
		{"tabs", "{\n\t\"a\": \"\\u00e9\"\n}", "{\n\t\"a\": \"\\u00e9\",\n\t\"enabledPlugins\": {\n\t\t\"p@m\": true\n\t}\n}", "p@m", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(p, []byte(c.in), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := SetPluginEnabled(p, c.id, c.on); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v not kept", fi.Mode())
			}
		})
	}
}

func TestRemovePluginSetting(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"middle", "{\n  \"enabledPlugins\": {\n    \"a@m\": true,\n    \"p@m\": true,\n    \"b@m\": false\n  }\n}", "{\n  \"enabledPlugins\": {\n    \"a@m\": true,\n    \"b@m\": false\n  }\n}"},
		{"last", "{\"enabledPlugins\": {\"a@m\": true, \"p@m\": true}}", "{\"enabledPlugins\": {\"a@m\": true}}"},
		{"only", "{\"x\": 1, \"enabledPlugins\": {\"p@m\": true}}", "{\"x\": 1, \"enabledPlugins\": {}}"},
		{"first", "{\"enabledPlugins\": {\"p@m\": true, \"a@m\": false}}", "{\"enabledPlugins\": {\"a@m\": false}}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "settings.json")
			os.WriteFile(p, []byte(c.in), 0o644)
			removed, err := RemovePluginSetting(p, "p@m")
			if err != nil || !removed {
				t.Fatalf("removed=%v err=%v", removed, err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "absent.json")
	if removed, err := RemovePluginSetting(p, "p@m"); removed || err != nil {
		t.Errorf("absent file: removed=%v err=%v", removed, err)
	}
	if _, err := os.Stat(p); err == nil {
		t.Error("removing from an absent file created it")
	}
}

func TestEditRefusesBrokenSettings(t *testing.T) {
	p := filepath.Join(t.TempDir(), "settings.json")
	in := "{\n  \"a\": 1,\n}\n"
	os.WriteFile(p, []byte(in), 0o644)
	err := SetPluginEnabled(p, "p@m", true)
	if err == nil || !strings.Contains(err.Error(), "settings.json:2:9: invalid JSON: trailing comma") {
		t.Errorf("err = %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != in {
		t.Error("a broken file was rewritten")
	}
}
