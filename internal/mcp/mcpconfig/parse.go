package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/jsontree"
)

// doc is one JSON source being read: its bytes, its tree and how to name a
// place in it.
type doc struct {
	src   []byte // without a UTF-8 byte order mark
	lines *jsontree.Lines
	path  string
	// fixed, when set, is the Source of every place in the document: raw
	// JSON handed over by a caller has no file positions of its own.
	fixed *Source
	root  *jsontree.Node
}

// bom is the UTF-8 byte order mark some Windows editors write. It is not
// JSON, but reading past it is what the user meant; offsets are relative to
// the text after it, which is what editors number.
var bom = []byte("\xef\xbb\xbf")

// parseDoc parses src as a JSON document named path. A syntax error is an
// *config.Error at its position.
func parseDoc(src []byte, path string, keep jsontree.Filter) (*doc, *config.Error) {
	src = bytes.TrimPrefix(src, bom)
	d := &doc{src: src, lines: jsontree.NewLines(src), path: path}
	root, serr := jsontree.Parse(src, keep)
	if serr != nil {
		return nil, &config.Error{Source: d.at(serr.Off).problem(), Msg: "invalid JSON: " + serr.Msg}
	}
	d.root = root
	return d, nil
}

// at returns the source of byte offset off.
func (d *doc) at(off int) Source {
	if d.fixed != nil {
		return *d.fixed
	}
	s := Source{Path: d.path}
	s.Line, s.Col = d.lines.Pos(off)
	return s
}

func (d *doc) errAt(off int, server, key, msg string) *config.Error {
	return &config.Error{Source: d.at(off).problem(), Server: server, Key: key, Msg: msg}
}

// joinKey appends key to a JSON path for messages: a.b, or a["b c"] when
// key is not a plain name.
func joinKey(path, key string) string {
	switch {
	case !validName().MatchString(key):
		return path + "[" + string(appendQuoted(nil, key)) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

func indexKey(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// entryKeys are the keys of a server entry tack interprets.
var entryKeys = []string{"type", "command", "args", "env", "url", "headers", "headersHelper", "oauth"}

// servers reads the servers of the mcpServers object n, whose JSON path is
// key. It returns the servers in file order; a problem with one entry is in
// that server's Err.
func (d *doc) servers(n *jsontree.Node, key string, scope Scope, lookup func(string) (string, bool)) ([]*Server, *config.Error) {
	if n.Kind != jsontree.Object {
		return nil, d.errAt(n.Off, "", key, fmt.Sprintf("expected an object of servers by name, got %s", n.Kind))
	}
	var out []*Server
	seen := map[string]int{}
	for _, m := range n.Members {
		s := d.entry(m, key, scope, lookup)
		if i, dup := seen[m.Key]; dup {
			// JSON.parse, which Claude Code uses, keeps the last value
			// at the first one's place; so does tack.
			out[i] = s
			continue
		}
		seen[m.Key] = len(out)
		out = append(out, s)
	}
	return out, nil
}

// entry reads one server entry: member m of an mcpServers object at path
// parent.
func (d *doc) entry(m jsontree.Member, parent string, scope Scope, lookup func(string) (string, bool)) *Server {
	name, v := m.Key, m.Value
	key := joinKey(parent, name)
	s := &Server{Name: name, Scope: scope, Source: d.at(m.KeyOff), Raw: json.RawMessage(bytes.Clone(d.src[v.Off:v.End]))}
	fail := func(off int, k, msg string) *Server {
		s.Err = d.errAt(off, name, k, msg)
		return s
	}
	if v.Kind != jsontree.Object {
		return fail(v.Off, key, fmt.Sprintf("a server must be an object, got %s", v.Kind))
	}
	get := func(k string) *jsontree.Node {
		n := v.Lookup(k)
		if n != nil && n.Kind == jsontree.Null {
			return nil // null means unset
		}
		return n
	}
	var missing []string
	missingAt := -1
	var missingKey string
	// expand expands the string n at JSON path k, noting the variables
	// that are not set; it reports whether all of them were.
	expand := func(n *jsontree.Node, k string) (string, bool) {
		out, miss := Expand(n.Str, lookup)
		for _, name := range miss {
			if !contains(missing, name) {
				missing = append(missing, name)
			}
		}
		if len(miss) > 0 && missingAt < 0 {
			missingAt, missingKey = n.Off, k
		}
		return out, len(miss) == 0
	}
	str := func(k string) (string, *jsontree.Node, *Server) {
		n := get(k)
		if n == nil {
			return "", nil, nil
		}
		if n.Kind != jsontree.String {
			return "", n, fail(n.Off, joinKey(key, k), fmt.Sprintf("expected a string, got %s", n.Kind))
		}
		return n.Str, n, nil
	}
	stringMap := func(k string) (map[string]string, *Server) {
		n := get(k)
		if n == nil {
			return nil, nil
		}
		if n.Kind != jsontree.Object {
			return nil, fail(n.Off, joinKey(key, k), fmt.Sprintf("expected an object of strings, got %s", n.Kind))
		}
		out := make(map[string]string, len(n.Members))
		for _, mm := range n.Members {
			kk := joinKey(joinKey(key, k), mm.Key)
			if mm.Value.Kind != jsontree.String {
				return nil, fail(mm.Value.Off, kk, fmt.Sprintf("expected a string, got %s", mm.Value.Kind))
			}
			out[mm.Key], _ = expand(mm.Value, kk)
		}
		return out, nil
	}

	typ := TypeStdio
	typeNode := get("type")
	if typeNode != nil {
		if typeNode.Kind != jsontree.String {
			return fail(typeNode.Off, joinKey(key, "type"), fmt.Sprintf("expected a string, got %s", typeNode.Kind))
		}
		t, err := ParseType(typeNode.Str)
		if err != nil {
			return fail(typeNode.Off, joinKey(key, "type"), fmt.Sprintf("unknown type %q (want stdio, http, sse or ws)", typeNode.Str))
		}
		typ = t
	}
	s.Type = typ

	if typ == TypeStdio {
		cmd, cmdNode, bad := str("command")
		if bad != nil {
			return bad
		}
		if cmdNode == nil {
			msg := `missing "command" (the program that runs the server)`
			if get("url") != nil && typeNode == nil {
				msg = `missing "command"; a server reached by URL needs "type": "http" or "sse"`
			} else if hint := d.misspelt(v, "command"); hint != "" {
				msg += hint
			}
			return fail(v.Off, key, msg)
		}
		if strings.TrimSpace(cmd) == "" {
			return fail(cmdNode.Off, joinKey(key, "command"), "command is empty")
		}
		s.Command, _ = expand(cmdNode, joinKey(key, "command"))
		if n := get("args"); n != nil {
			k := joinKey(key, "args")
			if n.Kind != jsontree.Array {
				return fail(n.Off, k, fmt.Sprintf("expected a list of strings, got %s", n.Kind))
			}
			s.Args = make([]string, 0, len(n.Elems))
			for i, e := range n.Elems {
				if e.Kind != jsontree.String {
					return fail(e.Off, indexKey(k, i), fmt.Sprintf("expected a string, got %s", e.Kind))
				}
				arg, _ := expand(e, indexKey(k, i))
				s.Args = append(s.Args, arg)
			}
		}
		env, bad := stringMap("env")
		if bad != nil {
			return bad
		}
		s.Env = env
	} else {
		_, urlNode, bad := str("url")
		if bad != nil {
			return bad
		}
		if urlNode == nil {
			msg := fmt.Sprintf(`missing "url" (a %s server is reached by URL)`, typ)
			if hint := d.misspelt(v, "url"); hint != "" {
				msg += hint
			}
			return fail(v.Off, key, msg)
		}
		var complete bool
		s.URL, complete = expand(urlNode, joinKey(key, "url"))
		if complete { // else the unset variable is the problem to report
			if msg := checkURL(s.URL, typ); msg != "" {
				return fail(urlNode.Off, joinKey(key, "url"), msg)
			}
		}
		headers, bad := stringMap("headers")
		if bad != nil {
			return bad
		}
		s.Headers = headers
		helper, _, bad := str("headersHelper")
		if bad != nil {
			return bad
		}
		s.HeadersHelper = helper
	}

	if n := get("oauth"); n != nil {
		o, e := d.oauth(n, joinKey(key, "oauth"), name)
		if e != nil {
			s.Err = e
			return s
		}
		s.OAuth = o
	}
	for _, mm := range v.Members {
		if contains(entryKeys, mm.Key) {
			continue
		}
		if s.Extra == nil {
			s.Extra = map[string]json.RawMessage{}
		}
		s.Extra[mm.Key] = json.RawMessage(bytes.Clone(d.src[mm.Value.Off:mm.Value.End]))
	}
	if len(missing) > 0 {
		what := "environment variable " + missing[0] + " is not set"
		if len(missing) > 1 {
			what = "environment variables " + strings.Join(missing, ", ") + " are not set"
		}
		fail(missingAt, missingKey, fmt.Sprintf("%s; server %q cannot start (set it, or write ${%s:-default})", what, name, missing[0]))
		s.Err.Missing = missing
		return s
	}
	return s
}

// misspelt returns a hint naming an unknown key of entry v that looks like a
// misspelling of want, or "".
func (d *doc) misspelt(v *jsontree.Node, want string) string {
	for _, m := range v.Members {
		if !contains(entryKeys, m.Key) && closeTo(m.Key, want) {
			return fmt.Sprintf(" (is %q a misspelling of %q?)", m.Key, want)
		}
	}
	return ""
}

// closeTo reports whether a is a case variant of b or at most two edits from
// it: the typos that turn a server entry into one without a command.
func closeTo(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b {
		return true
	}
	if len(a) < 3 {
		return false
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] <= 2
}

// checkURL says what is wrong with the URL of a remote server, or "".
func checkURL(raw string, t Type) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("invalid URL %q: %v", raw, unwrapURLError(err))
	}
	schemes := []string{"http", "https"}
	if t == TypeWS {
		schemes = []string{"ws", "wss"}
	}
	if !contains(schemes, strings.ToLower(u.Scheme)) {
		return fmt.Sprintf("invalid URL %q: want an %s:// or %s:// URL", raw, schemes[0], schemes[1])
	}
	if u.Host == "" {
		return fmt.Sprintf("invalid URL %q: no host", raw)
	}
	return ""
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// oauth reads an entry's "oauth" object.
func (d *doc) oauth(n *jsontree.Node, key, server string) (*OAuth, *config.Error) {
	if n.Kind != jsontree.Object {
		return nil, d.errAt(n.Off, server, key, fmt.Sprintf("expected an object, got %s", n.Kind))
	}
	o := &OAuth{}
	if c := n.Lookup("clientId"); c != nil && c.Kind != jsontree.Null {
		if c.Kind != jsontree.String {
			return nil, d.errAt(c.Off, server, key+".clientId", fmt.Sprintf("expected a string, got %s", c.Kind))
		}
		o.ClientID = c.Str
	}
	if p := n.Lookup("callbackPort"); p != nil && p.Kind != jsontree.Null {
		var port int
		if p.Kind != jsontree.Number {
			return nil, d.errAt(p.Off, server, key+".callbackPort", fmt.Sprintf("expected a port number, got %s", p.Kind))
		}
		if _, err := fmt.Sscan(p.Str, &port); err != nil || fmt.Sprint(port) != p.Str || port < 1 || port > 65535 {
			return nil, d.errAt(p.Off, server, key+".callbackPort", fmt.Sprintf("invalid port %s (want a whole number from 1 to 65535)", p.Str))
		}
		o.CallbackPort = port
	}
	return o, nil
}

// ParseEntry reads one server entry handed over as raw JSON — an inline
// server of a plugin manifest or of an agent's frontmatter — with ${VAR}
// expanded through lookup. Problems are reported at src, the place the
// caller read the entry from. The result's Err is set when the entry cannot
// be used.
func ParseEntry(name string, raw json.RawMessage, scope Scope, src Source, lookup func(string) (string, bool)) *Server {
	d, perr := parseDoc(raw, src.Path, nil)
	if perr != nil {
		perr.Source, perr.Server = src.problem(), name
		return &Server{Name: name, Scope: scope, Source: src, Raw: raw, Err: perr}
	}
	d.fixed = &src
	if d.root == nil {
		return &Server{Name: name, Scope: scope, Source: src, Raw: raw, Err: &config.Error{Source: src.problem(), Server: name, Msg: "empty server entry"}}
	}
	return d.entry(jsontree.Member{Key: name, Value: d.root}, "", scope, lookup)
}

// ParseConfig reads an MCP configuration document, {"mcpServers": {…}}, as
// .mcp.json and --mcp-config hold, with ${VAR} expanded through lookup;
// path names it in errors. Plugins' .mcp.json files use the same format.
// A problem with the document as a whole is returned as the *config.Error and no
// server is returned; a problem with one entry is in that server's Err.
func ParseConfig(src []byte, path string, scope Scope, lookup func(string) (string, bool)) ([]*Server, *config.Error) {
	d, err := parseDoc(src, path, nil)
	if err != nil {
		return nil, err
	}
	return d.mcpServersFile(scope, lookup)
}

// mcpServersFile reads a {"mcpServers": {…}} document.
func (d *doc) mcpServersFile(scope Scope, lookup func(string) (string, bool)) ([]*Server, *config.Error) {
	if d.root == nil {
		return nil, nil // an empty file defines nothing
	}
	if d.root.Kind != jsontree.Object {
		return nil, d.errAt(d.root.Off, "", "", fmt.Sprintf(`an MCP configuration must be a JSON object such as {"mcpServers": {…}}, got %s`, d.root.Kind))
	}
	n := d.root.Lookup("mcpServers")
	if n == nil {
		if len(d.root.Members) > 0 {
			// A bare map of servers is a common mistake (it is the format
			// of some other tools); Claude Code reads no server from it.
			return nil, d.errAt(d.root.Off, "", "", `no "mcpServers" key: the servers go in {"mcpServers": {"name": {…}}}`)
		}
		return nil, nil
	}
	if n.Kind == jsontree.Null {
		return nil, nil
	}
	return d.servers(n, "mcpServers", scope, lookup)
}

// sortedKVs returns m's pairs sorted by key.
func sortedKVs(m map[string]string) []KV {
	out := make([]KV, 0, len(m))
	for k, v := range m {
		out = append(out, KV{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// rawStrings returns the object member key of the server's raw entry as
// written (before expansion), for display.
func (s *Server) rawStrings(key string) map[string]string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(s.Raw, &raw) != nil {
		return nil
	}
	var m map[string]string
	if json.Unmarshal(raw[key], &m) != nil {
		return nil
	}
	return m
}

// MaskedEnv returns the server's env for display, sorted by name, each value
// masked with MaskValue (applied to the value as written).
func (s *Server) MaskedEnv() []KV { return s.masked("env", s.Env) }

// MaskedHeaders returns the server's headers for display, masked as
// MaskedEnv masks env values.
func (s *Server) MaskedHeaders() []KV { return s.masked("headers", s.Headers) }

func (s *Server) masked(key string, expanded map[string]string) []KV {
	raw := s.rawStrings(key)
	out := sortedKVs(expanded)
	for i, kv := range out {
		w, ok := raw[kv.Key]
		if !ok {
			w = kv.Value
		}
		out[i].Value = MaskValue(w)
	}
	return out
}
