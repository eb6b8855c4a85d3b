package permission

import (
	"path/filepath"
	"testing"

	"github.com/tackcode/tack/internal/shellcmd"
)

func TestPathPattern(t *testing.T) {
	env := pathEnv{base: "/work", cwd: "/work/proj", home: "/home/u"}
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		// //abs: absolute.
		{"//etc/passwd", "/etc/passwd", true},
		{"//etc/passwd", "/etc/passwd2", false},
		{"//etc", "/etc/hosts", true}, // a directory covers its contents
		{"//etc/**", "/etc/ssl/certs/a.pem", true},
		{"//etc/*", "/etc/ssl/certs/a.pem", true}, // /etc/ssl matches, and covers the rest
		{"//etc/*.conf", "/etc/ssl/a.conf", false},
		// ~/: the home directory.
		{"~/.ssh/**", "/home/u/.ssh/id_rsa", true},
		{"~/.ssh", "/home/u/.ssh/id_rsa", true},
		{"~/.ssh/**", "/home/v/.ssh/id_rsa", false},
		{"~", "/home/u/anything/at/all", true},
		// /path: the rule's base (its settings file's project root).
		{"/src/*.go", "/work/src/a.go", true},
		{"/src/*.go", "/work/proj/src/a.go", false},
		{"/src/*.go", "/work/src/sub/a.go", false},
		{"/../shared/**", "/shared/x", true}, // ".." normalised
		// ./path: the working directory.
		{"./.env", "/work/proj/.env", true},
		{"./.env", "/work/proj/sub/.env", false},
		{"./a/../b/*", "/work/proj/b/c", true},
		{"./a/../b/*", "/work/proj/a/c", false},
		// path/x: anchored to the working directory like gitignore.
		{"src/**/*.ts", "/work/proj/src/a.ts", true},
		{"src/**/*.ts", "/work/proj/src/x/y/a.ts", true},
		{"src/**/*.ts", "/work/proj/lib/src/a.ts", false},
		{"src/*.go", "/work/proj/src/x/a.go", false},
		{"src/{a,b}.go", "/work/proj/src/b.go", true},
		// name: at any depth under the working directory.
		{".env", "/work/proj/.env", true},
		{".env", "/work/proj/a/b/.env", true},
		{".env", "/work/other/.env", false},
		{".env", "/work/proj/.env.local", false},
		{".env.*", "/work/proj/x/.env.prod", true},
		{"*.pem", "/work/proj/keys/a.pem", true},
		{"build/", "/work/proj/sub/build/out.o", true},
		{"secrets", "/work/proj/a/secrets/k", true},
		{"**/secrets/**", "/work/proj/a/secrets/k", true},
		{"**", "/work/proj/anything", true},
		{"**", "/elsewhere/x", false},
	}
	for _, tt := range tests {
		p, err := compilePathPattern(tt.pattern, env)
		if err != nil {
			t.Fatalf("compile %q: %v", tt.pattern, err)
		}
		if got := p.match(tt.path); got != tt.want {
			t.Errorf("%q (as %q) matches %q = %v, want %v", tt.pattern, p.abs, tt.path, got, tt.want)
		}
	}
}

func TestPathPatternEscapesAnchors(t *testing.T) {
	// Glob characters in the anchoring directories are literal.
	p, err := compilePathPattern("/f", pathEnv{base: "/work/[x]", cwd: "/work/[x]", home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.match("/work/[x]/f") || p.match("/work/x/f") {
		t.Errorf("pattern %q does not keep the base literal", p.abs)
	}
}

func TestDomainPattern(t *testing.T) {
	tests := []struct {
		spec, url string
		want      bool
	}{
		{"domain:example.com", "https://example.com/x", true},
		{"domain:example.com", "https://EXAMPLE.com:443/x", true},
		{"domain:example.com", "example.com/docs", true},
		{"domain:example.com", "https://example.com./x", true},
		{"domain:example.com", "https://www.example.com/", false},
		{"domain:example.com", "https://evilexample.com/", false},
		{"domain:example.com", "https://example.com.evil.net/", false},
		{"domain:example.com", "https://example.com@evil.net/", false},
		{"domain:*.example.com", "https://a.example.com/", true},
		{"domain:*.example.com", "https://a.b.example.com/", true},
		{"domain:*.example.com", "https://example.com/", false},
		{"domain:*.example.com", "https://evil-example.com/", false},
		{"domain:*", "https://anything.org/", true},
		{"domain:[::1]", "http://[::1]:8080/", true},
		{"domain:127.0.0.1", "http://127.0.0.1:3000/", true},
	}
	for _, tt := range tests {
		d, err := compileDomain(tt.spec)
		if err != nil {
			t.Fatalf("compile %q: %v", tt.spec, err)
		}
		if got := d.match(urlHost(tt.url)); got != tt.want {
			t.Errorf("%s matches %s (host %q) = %v, want %v", tt.spec, tt.url, urlHost(tt.url), got, tt.want)
		}
	}
}

func TestWordPaths(t *testing.T) {
	tests := []struct {
		word    shellcmd.Word
		dirs    []string
		want    []string
		unknown bool
	}{
		{word: shellcmd.Word{Text: "a.txt"}, want: []string{"/p/a.txt"}},
		{word: shellcmd.Word{Text: "../x"}, want: []string{"/x"}},
		{word: shellcmd.Word{Text: "/etc/passwd"}, want: []string{"/etc/passwd"}},
		{word: shellcmd.Word{Text: "~/x", Tilde: true}, want: []string{"/home/u/x"}},
		{word: shellcmd.Word{Text: "~/x"}, want: []string{"/p/~/x"}}, // quoted: a directory named ~
		{word: shellcmd.Word{Text: shellcmd.RunTime + ".go", Glob: true}, want: []string{"/p"}},
		{word: shellcmd.Word{Text: "src/" + shellcmd.RunTime, Glob: true}, want: []string{"/p/src"}},
		{word: shellcmd.Word{Text: "." + shellcmd.RunTime, Glob: true}, want: []string{"/"}}, // .* may match ..
		{word: shellcmd.Word{Text: shellcmd.RunTime + "/../x", Glob: true}, unknown: true},
		{word: shellcmd.Word{Text: shellcmd.RunTime, Dynamic: true}, unknown: true},
		{word: shellcmd.Word{Text: "x"}, dirs: []string{"", "sub", "/abs"}, want: []string{"/p/x", "/p/sub/x", "/abs/x"}},
	}
	for _, tt := range tests {
		dirs := tt.dirs
		if dirs == nil {
			dirs = []string{""}
		}
		got, ok := wordPaths(tt.word, "/p", "/home/u", dirs, false)
		if ok == tt.unknown {
			t.Errorf("wordPaths(%q) ok = %v", tt.word.Text, ok)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("wordPaths(%q) = %q, want %q", tt.word.Text, got, tt.want)
			continue
		}
		for i := range got {
			if filepath.Clean(got[i]) != tt.want[i] {
				t.Errorf("wordPaths(%q) = %q, want %q", tt.word.Text, got, tt.want)
			}
		}
	}
}
