package jsontree

import (
	"strings"
	"testing"
)

const entryS = `{"type":"stdio","command":"x","args":["-y"],"env":{}}`

func TestSetInsertsInTheFileStyle(t *testing.T) {
	cases := []struct {
		name, src string
		path      []string
		want      string
	}{{
		name: "empty object, two spaces, beside big unrelated keys",
		src: `{
  "numStartups": 3,
  "projects": {
    "/p": {
      "allowedTools": [],
      "history": [{"display": "fix \u00e9 \/ it", "pastedContents": {}}],
      "mcpServers": {}
    }
  },
  "tipsHistory": {"a": 1.0e2}
}
`,
		path: []string{"projects", "/p", "mcpServers", "s"},
		want: `{
  "numStartups": 3,
  "projects": {
    "/p": {
      "allowedTools": [],
      "history": [{"display": "fix \u00e9 \/ it", "pastedContents": {}}],
      "mcpServers": {
        "s": {
          "type": "stdio",
          "command": "x",
          "args": [
            "-y"
          ],
          "env": {}
        }
      }
    }
  },
  "tipsHistory": {"a": 1.0e2}
}
`,
	}, {
		name: "after the last member, four spaces, CRLF",
		src:  "{\r\n    \"mcpServers\": {\r\n        \"a\": {\"command\": \"a\"}\r\n    }\r\n}\r\n",
		path: []string{"mcpServers", "s"},
		want: "{\r\n    \"mcpServers\": {\r\n        \"a\": {\"command\": \"a\"},\r\n        \"s\": {\r\n            \"type\": \"stdio\",\r\n            \"command\": \"x\",\r\n            \"args\": [\r\n                \"-y\"\r\n            ],\r\n            \"env\": {}\r\n        }\r\n    }\r\n}\r\n",
	}, {
		name: "tabs",
		src:  "{\n\t\"mcpServers\": {\n\t\t\"a\": {}\n\t}\n}",
		path: []string{"mcpServers", "s"},
		want: "{\n\t\"mcpServers\": {\n\t\t\"a\": {},\n\t\t\"s\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"x\",\n\t\t\t\"args\": [\n\t\t\t\t\"-y\"\n\t\t\t],\n\t\t\t\"env\": {}\n\t\t}\n\t}\n}",
	}, {
		name: "compact file stays compact",
		src:  `{"mcpServers":{"a":{"command":"a"}}}`,
		path: []string{"mcpServers", "s"},
		want: `{"mcpServers":{"a":{"command":"a"},"s":{"type":"stdio","command":"x","args":["-y"],"env":{}}}}`,
	}, {
		name: "one-line object in a pretty file",
		src:  "{\n  \"mcpServers\": {\"a\": {\"command\": \"a\"}}\n}\n",
		path: []string{"mcpServers", "s"},
		want: "{\n  \"mcpServers\": {\"a\": {\"command\": \"a\"}, \"s\": {\"type\": \"stdio\", \"command\": \"x\", \"args\": [\"-y\"], \"env\": {}}}\n}\n",
	}, {
		name: "missing objects on the way are created",
		src:  "{\n  \"userID\": \"abc\"\n}\n",
		path: []string{"projects", "/p", "mcpServers", "s"},
		want: "{\n  \"userID\": \"abc\",\n  \"projects\": {\n    \"/p\": {\n      \"mcpServers\": {\n        \"s\": {\n          \"type\": \"stdio\",\n          \"command\": \"x\",\n          \"args\": [\n            \"-y\"\n          ],\n          \"env\": {}\n        }\n      }\n    }\n  }\n}\n",
	}, {
		name: "null on the way is replaced",
		src:  "{\n  \"mcpServers\": null\n}",
		path: []string{"mcpServers", "s"},
		want: "{\n  \"mcpServers\": {\n    \"s\": {\n      \"type\": \"stdio\",\n      \"command\": \"x\",\n      \"args\": [\n        \"-y\"\n      ],\n      \"env\": {}\n    }\n  }\n}",
	}, {
		name: "empty file",
		src:  "",
		path: []string{"mcpServers", "s"},
		want: "{\n  \"mcpServers\": {\n    \"s\": {\n      \"type\": \"stdio\",\n      \"command\": \"x\",\n      \"args\": [\n        \"-y\"\n      ],\n      \"env\": {}\n    }\n  }\n}\n",
	}, {
		name: "byte order mark kept",
		src:  "\xef\xbb\xbf{\"mcpServers\": {}}",
		path: []string{"mcpServers", "s"},
		want: "\xef\xbb\xbf{\"mcpServers\": {\"s\":{\"type\":\"stdio\",\"command\":\"x\",\"args\":[\"-y\"],\"env\":{}}}}",
	}, {
		name: "existing value replaced in place",
		src:  "{\n  \"mcpServers\": {\n    \"s\": {\"command\": \"old\"},\n    \"z\": {\"command\": \"z\"}\n  }\n}\n",
		path: []string{"mcpServers", "s"},
		want: "{\n  \"mcpServers\": {\n    \"s\": {\n      \"type\": \"stdio\",\n      \"command\": \"x\",\n      \"args\": [\n        \"-y\"\n      ],\n      \"env\": {}\n    },\n    \"z\": {\"command\": \"z\"}\n  }\n}\n",
	}}
	for _, c := range cases {
		e := NewEditor([]byte(c.src))
		if err := e.Set(c.path, []byte(entryS)); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := string(e.Bytes()); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestSetKeepsTheUsersJSONAsWritten(t *testing.T) {
	// add-json stores the entry as the user wrote it: key order, escapes and
	// number literals; only the layout follows the file.
	e := NewEditor([]byte("{}\n"))
	if err := e.Set([]string{"mcpServers", "w"}, []byte(`{"url":"https://x.example/?q=\u00e9","type":"http", "timeout": 1.50}`)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"w\": {\n      \"url\": \"https://x.example/?q=\\u00e9\",\n      \"type\": \"http\",\n      \"timeout\": 1.50\n    }\n  }\n}\n"
	if got := string(e.Bytes()); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestSetRefusesWhatItCannotEdit(t *testing.T) {
	local := []string{"projects", "/p", "mcpServers", "s"}
	cases := []struct {
		src  string
		path []string
		want string
	}{
		{`{"mcpServers": []}`, []string{"mcpServers", "s"}, "mcpServers is a list, not an object"},
		{`[1]`, local, "the file holds a list, not a JSON object"},
		{"{\n  \"a\": 1,\n}", local, "line 2, column 9: invalid JSON: trailing comma"},
		{`{"projects": {"/p": 3}}`, local, `projects["/p"] is a number, not an object`},
	}
	for _, c := range cases {
		e := NewEditor([]byte(c.src))
		err := e.Set(c.path, []byte(entryS))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
		if string(e.Bytes()) != c.src {
			t.Errorf("%q was changed to %q", c.src, e.Bytes())
		}
	}
}

func TestRemove(t *testing.T) {
	src := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"},\n    \"c\": {\"command\": \"c\"}\n  },\n  \"other\": true\n}\n"
	cases := map[string]string{
		"a": "{\n  \"mcpServers\": {\n    \"b\": {\"command\": \"b\"},\n    \"c\": {\"command\": \"c\"}\n  },\n  \"other\": true\n}\n",
		"b": "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"c\": {\"command\": \"c\"}\n  },\n  \"other\": true\n}\n",
		"c": "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"}\n  },\n  \"other\": true\n}\n",
	}
	for name, want := range cases {
		e := NewEditor([]byte(src))
		if found, err := e.Remove([]string{"mcpServers", name}); !found || err != nil {
			t.Fatalf("%s: %v %v", name, found, err)
		}
		if got := string(e.Bytes()); got != want {
			t.Errorf("remove %s:\n got %q\nwant %q", name, got, want)
		}
	}

	e := NewEditor([]byte("{\n  \"mcpServers\": {\n    \"only\": {}\n  }\n}"))
	e.Remove([]string{"mcpServers", "only"})
	if got := string(e.Bytes()); got != "{\n  \"mcpServers\": {}\n}" {
		t.Errorf("last one: %q", got)
	}
	// Every copy of a repeated key goes, or an earlier one would come back.
	e = NewEditor([]byte(`{"mcpServers": {"d": 1, "k": 2, "d": 3}}`))
	e.Remove([]string{"mcpServers", "d"})
	if got := string(e.Bytes()); got != `{"mcpServers": {"k": 2}}` {
		t.Errorf("duplicates: %q", got)
	}
	if found, err := e.Remove([]string{"mcpServers", "nope"}); found || err != nil {
		t.Errorf("absent: %v %v", found, err)
	}
	if found, err := e.Remove([]string{"projects", "/p", "mcpServers", "nope"}); found || err != nil {
		t.Errorf("absent path: %v %v", found, err)
	}
}

func TestEditsOfNothingLeaveTheDocumentAsItWas(t *testing.T) {
	for _, src := range []string{"", "  \n", "\xef\xbb\xbf"} {
		e := NewEditor([]byte(src))
		if found, err := e.Remove([]string{"a", "b"}); found || err != nil {
			t.Errorf("%q: remove %v %v", src, found, err)
		}
		if v, err := e.Lookup([]string{"a"}); v != nil || err != nil {
			t.Errorf("%q: lookup %v %v", src, v, err)
		}
		if got := string(e.Bytes()); got != src {
			t.Errorf("%q became %q", src, got)
		}
	}
	e := NewEditor([]byte(`{"a": 1}`))
	if err := e.Set(nil, []byte("1")); err == nil {
		t.Error("Set with an empty path")
	}
	if _, err := e.Remove(nil); err == nil {
		t.Error("Remove with an empty path")
	}
	if _, err := e.AppendUnique(nil, []byte("1")); err == nil {
		t.Error("AppendUnique with an empty path")
	}
	if err := e.Set([]string{"b"}, []byte("{")); err == nil || !strings.Contains(err.Error(), "b is not valid JSON") {
		t.Errorf("Set of invalid JSON: %v", err)
	}
	if _, err := e.AppendUnique([]string{"b"}, []byte("")); err == nil {
		t.Error("AppendUnique of nothing")
	}
	if got := string(e.Bytes()); got != `{"a": 1}` {
		t.Errorf("changed to %q", got)
	}
}

func TestAppendUnique(t *testing.T) {
	allow := []string{"permissions", "allow"}
	cases := []struct {
		name, src, value, want string
		path                   []string
	}{{
		name:  "empty file",
		src:   "",
		value: `"Bash(ls *)"`,
		want:  "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls *)\"]\n  }\n}\n",
	}, {
		name:  "missing objects in a four-space file",
		src:   "{\n    \"model\": \"opus\"\n}\n",
		value: `"Read"`,
		want:  "{\n    \"model\": \"opus\",\n    \"permissions\": {\n        \"allow\": [\"Read\"]\n    }\n}\n",
	}, {
		name:  "missing list beside another",
		src:   "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"]\n  }\n}\n",
		value: `"Read"`,
		want:  "{\n  \"permissions\": {\n    \"deny\": [\"Read(./.env)\"],\n    \"allow\": [\"Read\"]\n  }\n}\n",
	}, {
		name:  "null list",
		src:   `{"permissions": {"allow": null}}`,
		value: `"Read"`,
		want:  `{"permissions": {"allow": ["Read"]}}`,
	}, {
		name:  "null on the way",
		src:   "{\r\n  \"permissions\": null\r\n}\r\n",
		value: `"Read"`,
		want:  "{\r\n  \"permissions\": {\r\n    \"allow\": [\"Read\"]\r\n  }\r\n}\r\n",
	}, {
		name:  "empty list",
		src:   "{\n  \"permissions\": {\"allow\": []}\n}",
		value: `"Read"`,
		want:  "{\n  \"permissions\": {\"allow\": [\"Read\"]}\n}",
	}, {
		name:  "one line, spaced",
		src:   `{"permissions": {"allow": ["Read"]}}`,
		value: `"Edit"`,
		want:  `{"permissions": {"allow": ["Read", "Edit"]}}`,
	}, {
		name:  "one line, compact",
		src:   `{"permissions":{"allow":["Read"]}}`,
		value: `{"a": [1, 2]}`,
		want:  `{"permissions":{"allow":["Read",{"a":[1,2]}]}}`,
	}, {
		name:  "one line, the separator of the elements",
		src:   `{"permissions": {"allow": ["Read","Grep"]}}`,
		value: `"Edit"`,
		want:  `{"permissions": {"allow": ["Read","Grep","Edit"]}}`,
	}, {
		name:  "one element a line, as JSON.stringify writes",
		src:   "{\n  \"permissions\": {\n    \"allow\": [\n      \"Read\"\n    ]\n  }\n}\n",
		value: `"Edit"`,
		want:  "{\n  \"permissions\": {\n    \"allow\": [\n      \"Read\",\n      \"Edit\"\n    ]\n  }\n}\n",
	}, {
		name:  "objects one a line, tabs, CRLF",
		src:   "{\r\n\t\"hooks\": [\r\n\t\t{\"a\": 1},\r\n\t\t{\"b\": 2}\r\n\t]\r\n}\r\n",
		path:  []string{"hooks"},
		value: `{"c":[3]}`,
		want:  "{\r\n\t\"hooks\": [\r\n\t\t{\"a\": 1},\r\n\t\t{\"b\": 2},\r\n\t\t{\r\n\t\t\t\"c\": [\r\n\t\t\t\t3\r\n\t\t\t]\r\n\t\t}\r\n\t]\r\n}\r\n",
	}, {
		name:  "several elements a line",
		src:   "{\n  \"n\": [\n    1, 2,\n    3, 4\n  ]\n}",
		path:  []string{"n"},
		value: `5`,
		want:  "{\n  \"n\": [\n    1, 2,\n    3, 4, 5\n  ]\n}",
	}, {
		name:  "byte order mark kept",
		src:   "\xef\xbb\xbf{\"permissions\": {}}",
		value: `"Read"`,
		want:  "\xef\xbb\xbf{\"permissions\": {\"allow\":[\"Read\"]}}",
	}}
	for _, c := range cases {
		path := c.path
		if path == nil {
			path = allow
		}
		e := NewEditor([]byte(c.src))
		added, err := e.AppendUnique(path, []byte(c.value))
		if err != nil || !added {
			t.Errorf("%s: added=%v err=%v", c.name, added, err)
			continue
		}
		if got := string(e.Bytes()); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		// The same element again is not added twice.
		if added, err := e.AppendUnique(path, []byte(c.value)); added || err != nil {
			t.Errorf("%s: added again: %v %v", c.name, added, err)
		}
		if got := string(e.Bytes()); got != c.want {
			t.Errorf("%s: changed by a duplicate to %q", c.name, got)
		}
	}
}

func TestAppendUniqueFindsEqualElements(t *testing.T) {
	src := `{"l": ["R\u0065ad", 1.0, {"a": 1, "b": [null, true]}, -0]}`
	for _, v := range []string{`"Read"`, `1`, `1e0`, `{"b": [null, true], "a": 1}`, `0`} {
		e := NewEditor([]byte(src))
		if added, err := e.AppendUnique([]string{"l"}, []byte(v)); added || err != nil {
			t.Errorf("%s: added=%v err=%v", v, added, err)
		}
		if got := string(e.Bytes()); got != src {
			t.Errorf("%s: changed to %q", v, got)
		}
	}
	for _, v := range []string{`"read"`, `2`, `{"a": 1}`, `{"a": 1, "b": [true, null]}`, `[]`, `null`} {
		e := NewEditor([]byte(src))
		if added, err := e.AppendUnique([]string{"l"}, []byte(v)); !added || err != nil {
			t.Errorf("%s: added=%v err=%v", v, added, err)
		}
	}
}

func TestAppendUniqueRefusesWhatItCannotEdit(t *testing.T) {
	cases := []struct{ src, want string }{
		{`{"permissions": []}`, "permissions is a list, not an object"},
		{`{"permissions": {"allow": "x"}}`, "permissions.allow is a string, not a list"},
		{`{"permissions": {"allow": {}}}`, "permissions.allow is an object, not a list"},
		{`[]`, "the file holds a list, not a JSON object"},
		{"{\n  \"permissions\": {\"allow\": [1,]}}", "line 2, column 30: invalid JSON: trailing comma"},
	}
	for _, c := range cases {
		e := NewEditor([]byte(c.src))
		added, err := e.AppendUnique([]string{"permissions", "allow"}, []byte(`"Read"`))
		if added || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: added=%v err=%v, want %q", c.src, added, err, c.want)
		}
		if got := string(e.Bytes()); got != c.src {
			t.Errorf("%q was changed to %q", c.src, got)
		}
	}
}

func TestEditorLookup(t *testing.T) {
	src := "\xef\xbb\xbf{\n  \"a\": {\"b c\": [1, \"x\"]},\n  \"big\": [{\"deep\": true}],\n  \"a\": {\"b c\": [2]}\n}"
	e := NewEditor([]byte(src))
	v, err := e.Lookup([]string{"a", "b c"})
	if err != nil || v == nil || v.Kind != Array || len(v.Elems) != 1 || v.Elems[0].Str != "2" {
		t.Fatalf("got %+v, %v", v, err)
	}
	if got := string(e.Text()[v.Off:v.End]); got != "[2]" {
		t.Errorf("offsets point at %q", got)
	}
	for _, path := range [][]string{{"nope"}, {"a", "nope"}, {"a", "b c", "d"}, {"big", "deep"}} {
		if v, err := e.Lookup(path); v != nil || err != nil {
			t.Errorf("%v: %+v %v", path, v, err)
		}
	}
	if root, err := e.Lookup(nil); err != nil || root.Lookup("big").Elems[0].Lookup("deep") == nil {
		t.Errorf("the whole document: %+v %v", root, err)
	}
	if _, err := NewEditor([]byte(`{"a": tru}`)).Lookup([]string{"a"}); err == nil || !strings.Contains(err.Error(), "line 1, column 7: invalid JSON") {
		t.Errorf("broken document: %v", err)
	}
}

func TestPathString(t *testing.T) {
	cases := map[string][]string{
		"":                       nil,
		"a":                      {"a"},
		"permissions.allow":      {"permissions", "allow"},
		`projects["/p"].mcp-x_1`: {"projects", "/p", "mcp-x_1"},
		`[""]["a\"b"].c`:         {"", `a"b`, "c"},
	}
	for want, path := range cases {
		if got := PathString(path); got != want {
			t.Errorf("%q: got %q, want %q", path, got, want)
		}
	}
}
