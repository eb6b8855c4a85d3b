package memory

import (
	"reflect"
	"testing"
)

func TestImportRefs(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"line", "@a.md", []string{"a.md"}},
		{"in prose", "See @README.md and @docs/x.md for more.", []string{"README.md", "docs/x.md"}},
		{"list item", "- git: @docs/git.md\n- @~/prefs.md", []string{"docs/git.md", "~/prefs.md"}},
		{"prefixes", "@./a @../b @~/c @/d/e", []string{"./a", "../b", "~/c", "/d/e"}},
		{"email", "mail me@example.com or user@host", nil},
		{"after punctuation", "(@a.md) [@b.md] \"@c.md\"", nil},
		{"escaped at", `\@a.md`, nil},
		{"trailing punctuation kept", "see @a.md.", []string{"a.md."}},
		{"escaped space", `@my\ notes.md next`, []string{"my notes.md"}},
		{"backslash ends", `@a\b`, []string{"a"}},
		{"fragment", "@guide.md#setup", []string{"guide.md"}},
		{"not paths", "@ @@x @#x @~x @/ @*x @(x)", nil},
		{"tab before", "\t@a.md", []string{"a.md"}},
		{"unicode space before", "x\u00a0@a.md", []string{"a.md"}},
		{"code span", "use `@a.md` here @b.md", []string{"b.md"}},
		{"double code span", "``x ` @a.md`` @b.md", []string{"b.md"}},
		{"code span across lines", "`start\n@a.md end` @b.md", []string{"b.md"}},
		{"unclosed backtick", "a ` @a.md", []string{"a.md"}},
		{"code span stops at blank line", "`x\n\n@a.md`", []string{"a.md"}},
		{"token stops at backtick", "@a.md`code`", []string{"a.md"}},
		{"fenced", "```\n@a.md\n```\n@b.md", []string{"b.md"}},
		{"fenced with info", "```markdown\n@a.md\n```", nil},
		{"tilde fence", "~~~\n@a.md\n~~~", nil},
		{"longer fence", "````\n```\n@a.md\n````\n@b.md", []string{"b.md"}},
		{"indented fence", "- item\n\n    ```\n    @a.md\n    ```\n@b.md", []string{"b.md"}},
		{"unclosed fence", "```\n@a.md", nil},
		{"inline triple backticks", "```x``` @a.md", []string{"a.md"}},
		{"crlf", "@a.md\r\n@b.md\r\n", []string{"a.md", "b.md"}},
		{"heading", "# @a.md", []string{"a.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := importRefs(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("importRefs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestResolveImport(t *testing.T) {
	for _, tc := range []struct {
		ref, want string
		ok        bool
	}{
		{"a.md", "/p/d/a.md", true},
		{"./a.md", "/p/d/a.md", true},
		{"../a.md", "/p/a.md", true},
		{"~/x/a.md", "/home/u/x/a.md", true},
		{"/etc/a.md", "/etc/a.md", true},
		{"/etc/../a.md", "/a.md", true},
	} {
		got, ok := resolveImport(tc.ref, "/p/d", "/home/u")
		if got != tc.want || ok != tc.ok {
			t.Errorf("resolveImport(%q) = %q %v", tc.ref, got, ok)
		}
	}
	if _, ok := resolveImport("~/a", "/p", ""); ok {
		t.Error("~ without a home")
	}
}

func TestStripBlockComments(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"none", "a\nb\n", "a\nb\n"},
		{"line", "a\n<!-- note -->\nb\n", "a\nb\n"},
		{"indented", "a\n  <!-- note -->\nb\n", "a\nb\n"},
		{"multi-line", "a\n<!--\n@x.md\nsecret\n-->\nb\n", "a\nb\n"},
		{"residue kept", "<!-- n --> kept\nb", " kept\nb"},
		{"inline kept", "a <!-- n --> b\n", "a <!-- n --> b\n"},
		{"unclosed kept", "a\n<!-- open\nb\n", "a\n<!-- open\nb\n"},
		{"in fence kept", "```\n<!-- c -->\n```\n<!-- d -->\n", "```\n<!-- c -->\n```\n"},
		{"two", "<!-- a -->\n<!-- b -->\nc", "c"},
		{"at end without newline", "a\n<!-- n -->", "a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stripBlockComments(tc.in); got != tc.want {
				t.Errorf("stripBlockComments(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestFrontmatter(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		ok        bool
		body      string
		wantGlobs []string
	}{
		{"none", "# Title\n", false, "# Title\n", nil},
		{"no paths", "---\ndescription: x\n---\nBody\n", true, "Body\n", nil},
		{"block list", "---\npaths:\n  - \"src/**/*.ts\"\n  - 'lib/**'\n  - ./docs/*.md # docs\ndescription: y\n---\nBody", true, "Body", []string{"src/**/*.ts", "lib/**", "docs/*.md"}},
		{"block list unindented", "---\npaths:\n- a/**\n- b/**\n---\n", true, "", []string{"a/**", "b/**"}},
		{"flow list", "---\npaths: [\"a/**\", b/*.{ts,tsx}]\n---\nx", true, "x", []string{"a/**", "b/*.{ts,tsx}"}},
		{"comma string", "---\npaths: src/**/*.ts, lib/*.{js,mjs}\n---\nx", true, "x", []string{"src/**/*.ts", "lib/*.{js,mjs}"}},
		{"quoted string", "---\npaths: \"**/*.go\"\n---\nx", true, "x", []string{"**/*.go"}},
		{"empty list", "---\npaths: []\n---\nx", true, "x", nil},
		{"indented key is not paths", "---\nother:\n  paths: a\n---\nx", true, "x", nil},
		{"unclosed", "---\npaths: a\nBody", false, "---\npaths: a\nBody", nil},
		{"crlf", "---\r\npaths: a/**\r\n---\r\nBody\r\n", true, "Body\r\n", []string{"a/**"}},
		{"bom", "\uFEFF---\npaths: a\n---\nB", true, "B", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, body, ok := splitFrontmatter(tc.in)
			if ok != tc.ok || body != tc.body {
				t.Fatalf("splitFrontmatter = %q, %q, %v", fm, body, ok)
			}
			if got := parsePaths(fm); !reflect.DeepEqual(got, tc.wantGlobs) {
				t.Errorf("parsePaths(%q) = %q, want %q", fm, got, tc.wantGlobs)
			}
		})
	}
}

func TestMatchGlobs(t *testing.T) {
	for _, tc := range []struct {
		globs      []string
		base, read string
		want       bool
	}{
		{[]string{"**/*.go"}, "/r", "/r/a/b.go", true},
		{[]string{"**/*.go"}, "/r", "/other/b.go", false},
		{[]string{"src/**"}, "/r", "/r/src/x/y.ts", true},
		{[]string{"src/**"}, "/r", "/r/lib/src/y.ts", false},
		{[]string{"*.{ts,tsx}"}, "/r", "/r/a.tsx", true},
		{[]string{"/abs/**/*.md"}, "/r", "/abs/x/y.md", true},
		{[]string{"a.md", "b.md"}, "/r", "/r/b.md", true},
		{[]string{"**"}, "/r", "/r/..x/y", true},
	} {
		if got := matchGlobs(tc.globs, tc.base, tc.read); got != tc.want {
			t.Errorf("matchGlobs(%q, %q, %q) = %v", tc.globs, tc.base, tc.read, got)
		}
	}
}
