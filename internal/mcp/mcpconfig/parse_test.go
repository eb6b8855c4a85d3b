package mcpconfig

import (
	"strings"
	"testing"
)

func TestSyntaxErrorsArePositioned(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{\n  \"a\": 1,\n}", "f:2:9: invalid JSON: trailing comma before '}'"},
		{"{\n  // note\n  \"a\": 1\n}", "f:2:3: invalid JSON: comments are not allowed in JSON"},
		{"{\"a\": 'x'}", "f:1:7: invalid JSON: strings must be in double quotes"},
		{"{\"a\": 1 \"b\": 2}", "f:1:9: invalid JSON: missing ',' before this key"},
		{"{\"a\": [1 2]}", "f:1:10: invalid JSON: missing ',' before this list element"},
		{"{\"a\": tru}", "f:1:7: invalid JSON: invalid value tru"},
		{"{\"a\": True}", "f:1:7: invalid JSON: invalid value True (JSON literals"},
		{"{\"a\": \"x\n\"}", "f:1:7: invalid JSON: string is not closed on its line"},
		{"{\"a\": \"\\q\"}", "f:1:8: invalid JSON: invalid escape \\q"},
		{"{\"a\": 01}", "f:1:7: invalid JSON: invalid number (JSON does not allow leading zeros)"},
		{"{\"a\": 1", "f:1:1: invalid JSON: '{' is not closed"},
		{"{a: 1}", "f:1:2: invalid JSON: object keys must be strings in double quotes"},
		{"{} {}", "f:1:4: invalid JSON: invalid character '{' after the end of the top-level value"},
		{"{\"é\": ]}", "f:1:7: invalid JSON: invalid character ']' where a value was expected"}, // columns count characters
	}
	for _, c := range cases {
		_, err := parseDoc([]byte(c.src), "f", nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s…", c.src, err, c.want)
		}
	}
}
