package mcpconfig

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
		e := newEditor([]byte(c.src))
		if err := e.set(c.path, []byte(entryS)); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := string(e.bytes()); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestSetKeepsTheUsersJSONAsWritten(t *testing.T) {
	// add-json stores the entry as the user wrote it: key order, escapes and
	// number literals; only the layout follows the file.
	e := newEditor([]byte("{}\n"))
	if err := e.set([]string{"mcpServers", "w"}, []byte(`{"url":"https://x.example/?q=\u00e9","type":"http", "timeout": 1.50}`)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"mcpServers\": {\n    \"w\": {\n      \"url\": \"https://x.example/?q=\\u00e9\",\n      \"type\": \"http\",\n      \"timeout\": 1.50\n    }\n  }\n}\n"
	if got := string(e.bytes()); got != want {
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
		e := newEditor([]byte(c.src))
		err := e.set(c.path, []byte(entryS))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
		if string(e.bytes()) != c.src {
			t.Errorf("%q was changed to %q", c.src, e.bytes())
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
		e := newEditor([]byte(src))
		if found, err := e.remove([]string{"mcpServers", name}); !found || err != nil {
			t.Fatalf("%s: %v %v", name, found, err)
		}
		if got := string(e.bytes()); got != want {
			t.Errorf("remove %s:\n got %q\nwant %q", name, got, want)
		}
	}

	e := newEditor([]byte("{\n  \"mcpServers\": {\n    \"only\": {}\n  }\n}"))
	e.remove([]string{"mcpServers", "only"})
	if got := string(e.bytes()); got != "{\n  \"mcpServers\": {}\n}" {
		t.Errorf("last one: %q", got)
	}
	// Every copy of a repeated key goes, or an earlier one would come back.
	e = newEditor([]byte(`{"mcpServers": {"d": 1, "k": 2, "d": 3}}`))
	e.remove([]string{"mcpServers", "d"})
	if got := string(e.bytes()); got != `{"mcpServers": {"k": 2}}` {
		t.Errorf("duplicates: %q", got)
	}
	if found, err := e.remove([]string{"mcpServers", "nope"}); found || err != nil {
		t.Errorf("absent: %v %v", found, err)
	}
	if found, err := e.remove([]string{"projects", "/p", "mcpServers", "nope"}); found || err != nil {
		t.Errorf("absent path: %v %v", found, err)
	}
}
