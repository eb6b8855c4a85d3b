package permission

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// pathEnv holds the directories that anchor a rule's path pattern. The zero
// value only validates syntax.
type pathEnv struct {
	base string // the rule's Base, or cwd: anchor of "/pattern"
	cwd  string // anchor of "./pattern" and "pattern"
	home string // anchor of "~/pattern"
}

// pathPattern is a compiled Read/Edit specifier: an absolute doublestar
// pattern, with gitignore-like anchoring.
type pathPattern struct {
	abs string
	// lit is the pattern's literal start: any path it matches begins with
	// it, which rejects most paths cheaply.
	lit string
}

// compilePathPattern anchors spec:
//
//	//abs/path   absolute
//	~/path       under the home directory
//	/path        under the rule's base (its settings file's project root)
//	./path       under the working directory
//	path/x       under the working directory (a slash anchors, as in gitignore)
//	name         at any depth under the working directory
//
// '*' and '?' stay within one path segment, "**" crosses directories, and
// {a,b} alternates. A pattern that names a directory also covers
// everything under it (see match).
func compilePathPattern(spec string, env pathEnv) (*pathPattern, error) {
	if spec == "" {
		return nil, errors.New("empty path pattern")
	}
	if strings.HasPrefix(spec, "~") && spec != "~" && !strings.HasPrefix(spec, "~/") {
		return nil, fmt.Errorf("path pattern %q: ~user is not supported; use ~/ or an absolute //path", spec)
	}
	if !doublestar.ValidatePattern(spec) {
		return nil, fmt.Errorf("bad path pattern %q (check its [ ] and { } pairs)", spec)
	}
	var anchor, rest string
	switch {
	case strings.HasPrefix(spec, "//"):
		anchor, rest = "/", strings.TrimLeft(spec, "/")
	case spec == "~" || strings.HasPrefix(spec, "~/"):
		anchor, rest = env.home, strings.TrimPrefix(strings.TrimPrefix(spec, "~"), "/")
		if anchor == "" && env.cwd != "" {
			return nil, fmt.Errorf("path pattern %q: no home directory is known", spec)
		}
	case strings.HasPrefix(spec, "/"):
		anchor, rest = env.base, strings.TrimLeft(spec, "/")
	case strings.HasPrefix(spec, "./"):
		anchor, rest = env.cwd, strings.TrimPrefix(spec, "./")
	default:
		anchor, rest = env.cwd, spec
		if !strings.Contains(strings.TrimSuffix(spec, "/"), "/") {
			rest = "**/" + spec
		}
	}
	if env.cwd == "" {
		return &pathPattern{}, nil // syntax check only
	}
	abs := path.Clean(escapeGlob(anchor) + "/" + rest)
	return &pathPattern{abs: abs, lit: literalPrefix(abs)}, nil
}

// match reports whether p (absolute and clean) or one of its parent
// directories matches: a pattern naming a directory covers its contents.
func (pp *pathPattern) match(p string) bool {
	if !strings.HasPrefix(p, pp.lit) {
		return false
	}
	for {
		if ok, _ := doublestar.Match(pp.abs, p); ok {
			return true
		}
		if p == "/" {
			return false
		}
		p = path.Dir(p)
		if len(p) < len(pp.lit) && !strings.HasPrefix(pp.lit, p) {
			return false
		}
	}
}

// matchesUnder reports whether p could match dir or something under it:
// removing or replacing dir affects everything it holds.
func (pp *pathPattern) matchesUnder(dir string) bool {
	if pp.match(dir) {
		return true
	}
	psegs := strings.Split(pp.abs, "/")
	dsegs := strings.Split(dir, "/")
	if dir == "/" {
		dsegs = []string{""}
	}
	for i, ps := range psegs {
		if ps == "**" || i >= len(dsegs) {
			return true
		}
		if ok, _ := doublestar.Match(ps, dsegs[i]); !ok {
			return false
		}
	}
	return false
}

// escapeGlob escapes the doublestar metacharacters of a literal directory.
func escapeGlob(dir string) string {
	if !strings.ContainsAny(dir, `*?[]{}\`) {
		return dir
	}
	var b strings.Builder
	for _, c := range dir {
		if strings.ContainsRune(`*?[]{}\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// literalPrefix is the part of a doublestar pattern before its first
// metacharacter, unescaped.
func literalPrefix(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteByte(p[i])
			}
			continue
		case '*', '?', '[', '{':
			return b.String()
		}
		b.WriteByte(c)
	}
	return b.String()
}

// domainPattern is a compiled WebFetch specifier, domain:HOST.
//
// "domain:example.com" matches exactly the host example.com;
// "domain:*.example.com" matches its subdomains at any depth but not
// example.com itself; "domain:*" matches every host. Ports, schemes and
// paths are not part of a domain rule.
type domainPattern struct {
	host string
	sub  bool
	any  bool
}

func compileDomain(spec string) (*domainPattern, error) {
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return nil, fmt.Errorf("WebFetch specifier %q: want domain:HOST, e.g. domain:example.com", spec)
	}
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	if d == "*" {
		return &domainPattern{any: true}, nil
	}
	bad := func(why string) error {
		return fmt.Errorf("bad domain %q: %s", strings.TrimPrefix(spec, "domain:"), why)
	}
	switch {
	case d == "":
		return nil, bad("empty")
	case strings.Contains(d, "://"):
		return nil, bad("give the host name only, without a scheme")
	case strings.ContainsAny(d, "/?#"):
		return nil, bad("give the host name only, without a path")
	case strings.Contains(d, "@"):
		return nil, bad("give the host name only, without user info")
	}
	if strings.HasPrefix(d, "[") { // IPv6 literal
		if !strings.HasSuffix(d, "]") || strings.Trim(d[1:len(d)-1], "0123456789abcdef:.") != "" || len(d) < 4 {
			return nil, bad("malformed IPv6 literal")
		}
		return &domainPattern{host: d[1 : len(d)-1]}, nil
	}
	if strings.Contains(d, ":") {
		return nil, bad("domain rules match host names; drop the port")
	}
	p := &domainPattern{}
	if rest, ok := strings.CutPrefix(d, "*."); ok {
		p.sub, d = true, rest
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" {
			return nil, bad("empty label")
		}
		if strings.Contains(label, "*") {
			return nil, bad(`a wildcard is only allowed as a leading "*." label`)
		}
		if strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
			return nil, bad("unexpected characters (internationalised names must be given in punycode)")
		}
		if strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return nil, bad("a label cannot start or end with '-'")
		}
	}
	p.host = d
	return p, nil
}

// match reports whether host (lower case, no port, no trailing dot)
// matches.
func (d *domainPattern) match(host string) bool {
	switch {
	case d.any:
		return host != ""
	case d.sub:
		return strings.HasSuffix(host, "."+d.host)
	}
	return host == d.host
}
