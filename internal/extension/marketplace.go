package extension

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/lazyregexp"
)

// This file keeps the plugins a user installs from marketplaces, in the
// layout Claude Code uses under <config dir>/plugins, so that both tools
// see the same installs:
//
//	known_marketplaces.json   {"NAME": {"source": {…}, "installLocation": DIR, "lastUpdated": TIME}}
//	installed_plugins.json    {"version": 2, "plugins": {"NAME@MARKET": [{"scope": "user",
//	                           "installPath": DIR, "version": V, "installedAt": T, "lastUpdated": T,
//	                           "gitCommitSha": SHA}]}}
//	marketplaces/NAME/        a git marketplace's clone (a folder marketplace is read in place)
//	cache/MARKET/PLUGIN/VERSION/  the installed copy of a plugin
//
// Entries and keys tack does not know are kept as they are when it rewrites
// these files. Whether a plugin is on is not stored here but in the user
// settings' enabledPlugins (see SetPluginEnabled).

// MarketplaceManifestPath is where a marketplace's catalogue sits.
const MarketplaceManifestPath = ".claude-plugin/marketplace.json"

// MarketplaceSource says where a marketplace comes from, as
// known_marketplaces.json records it.
type MarketplaceSource struct {
	// Source is "directory", "git" or "github".
	Source string `json:"source"`
	Path   string `json:"path,omitempty"` // directory
	URL    string `json:"url,omitempty"`  // git
	Repo   string `json:"repo,omitempty"` // github: owner/repo
	Ref    string `json:"ref,omitempty"`
}

// String renders the source as the user would type it.
func (s MarketplaceSource) String() string {
	switch s.Source {
	case "directory":
		return s.Path
	case "github":
		return s.Repo
	}
	return s.URL
}

// KnownMarketplace is one entry of known_marketplaces.json.
type KnownMarketplace struct {
	Name            string            `json:"-"`
	Source          MarketplaceSource `json:"source"`
	InstallLocation string            `json:"installLocation"`
	LastUpdated     string            `json:"lastUpdated"`
}

// InstalledPlugin is one installation record of installed_plugins.json.
type InstalledPlugin struct {
	ID           string `json:"-"`
	Scope        string `json:"scope"`
	ProjectPath  string `json:"projectPath,omitempty"`
	InstallPath  string `json:"installPath"`
	Version      string `json:"version,omitempty"`
	InstalledAt  string `json:"installedAt,omitempty"`
	LastUpdated  string `json:"lastUpdated,omitempty"`
	GitCommitSha string `json:"gitCommitSha,omitempty"`
}

// Catalog is a marketplace's .claude-plugin/marketplace.json.
type Catalog struct {
	Name        string
	Owner       *Author
	Description string
	// PluginRoot is metadata.pluginRoot: the folder bare plugin sources
	// are relative to.
	PluginRoot string
	Plugins    []CatalogPlugin
}

// CatalogPlugin is one plugin a marketplace lists.
type CatalogPlugin struct {
	Name        string
	Description string
	Version     string
	Source      PluginSource
}

// PluginSource is where a marketplace's plugin is fetched from.
type PluginSource struct {
	// Kind is "path" (a folder of the marketplace), "git" (a repository
	// URL) or "github" (owner/repo).
	Kind string
	Path string
	URL  string
	Repo string
	Ref  string
}

// Store is the plugins folder of one configuration directory.
type Store struct {
	// Dir is <config dir>/plugins.
	Dir string
	// Now stamps records; nil means time.Now.
	Now func() time.Time
	// Git is the git program; "" means "git" on PATH.
	Git string
}

// NewStore returns the store of configDir.
func NewStore(configDir string) *Store {
	return &Store{Dir: filepath.Join(configDir, "plugins")}
}

func (s *Store) knownPath() string     { return filepath.Join(s.Dir, "known_marketplaces.json") }
func (s *Store) installedPath() string { return filepath.Join(s.Dir, "installed_plugins.json") }

func (s *Store) now() string {
	t := time.Now()
	if s.Now != nil {
		t = s.Now()
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// readObject reads a JSON object file as raw members; a missing file is
// empty.
func readObject(path string) (map[string]json.RawMessage, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string]json.RawMessage{}, nil
		}
		return nil, fmt.Errorf("read %s: %w", path, unwrapPath(err))
	}
	if _, perr := parseJSONFile(src, path); perr != nil {
		return nil, perr
	}
	m := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(src)) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, &config.Error{Source: config.Source{Path: path}, Msg: "expected a JSON object", Err: err}
	}
	return m, nil
}

func writeObject(path string, m any) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// Marketplaces returns the known marketplaces, sorted by name.
func (s *Store) Marketplaces() ([]KnownMarketplace, error) {
	raw, err := readObject(s.knownPath())
	if err != nil {
		return nil, err
	}
	out := make([]KnownMarketplace, 0, len(raw))
	for name, r := range raw {
		var km KnownMarketplace
		if err := json.Unmarshal(r, &km); err != nil {
			return nil, &config.Error{Source: config.Source{Path: s.knownPath()}, Key: name, Msg: "not a marketplace record", Err: err}
		}
		km.Name = name
		out = append(out, km)
	}
	slices.SortFunc(out, func(a, b KnownMarketplace) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Marketplace returns the known marketplace named name.
func (s *Store) Marketplace(name string) (KnownMarketplace, error) {
	list, err := s.Marketplaces()
	if err != nil {
		return KnownMarketplace{}, err
	}
	for _, m := range list {
		if m.Name == name {
			return m, nil
		}
	}
	return KnownMarketplace{}, fmt.Errorf("marketplace %q is not known (tack plugin marketplace add SOURCE)", name)
}

var githubRepo = lazyregexp.New(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// ParseMarketplaceSource reads what the user gives `marketplace add`: a
// local folder (or its marketplace.json), a git URL (https://, ssh,
// git@host:path, file://, or a path ending in .git), or a GitHub owner/repo.
func ParseMarketplaceSource(arg, cwd string) (MarketplaceSource, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return MarketplaceSource{}, errors.New("empty marketplace source")
	}
	ref := ""
	if i := strings.LastIndexByte(arg, '#'); i > 0 && !strings.HasPrefix(arg, "/") && !strings.HasPrefix(arg, ".") {
		arg, ref = arg[:i], arg[i+1:]
	}
	switch {
	case strings.HasPrefix(arg, "https://"), strings.HasPrefix(arg, "http://"), strings.HasPrefix(arg, "ssh://"),
		strings.HasPrefix(arg, "git://"), strings.HasPrefix(arg, "file://"), strings.HasPrefix(arg, "git@"):
		return MarketplaceSource{Source: "git", URL: arg, Ref: ref}, nil
	}
	p := arg
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	if fi, err := os.Stat(p); err == nil {
		if strings.HasSuffix(p, ".git") && fi.IsDir() && !isDir(filepath.Join(p, ".claude-plugin")) {
			return MarketplaceSource{Source: "git", URL: p, Ref: ref}, nil // a bare repository
		}
		if !fi.IsDir() {
			if filepath.Base(p) != "marketplace.json" {
				return MarketplaceSource{}, fmt.Errorf("%s is a file, not a marketplace folder", p)
			}
			p = filepath.Dir(filepath.Dir(p))
		}
		return MarketplaceSource{Source: "directory", Path: filepath.Clean(p)}, nil
	}
	if githubRepo().MatchString(arg) && !strings.HasPrefix(arg, ".") {
		return MarketplaceSource{Source: "github", Repo: arg, Ref: ref}, nil
	}
	return MarketplaceSource{}, fmt.Errorf("marketplace source %q is neither an existing folder, a git URL nor a GitHub owner/repo", arg)
}

// ReadCatalog reads dir's .claude-plugin/marketplace.json.
func ReadCatalog(dir string) (*Catalog, error) {
	path := filepath.Join(dir, MarketplaceManifestPath)
	src, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &config.Error{Source: config.Source{Path: path}, Msg: "not a marketplace: .claude-plugin/marketplace.json is missing"}
		}
		return nil, &config.Error{Source: config.Source{Path: path}, Msg: "cannot read the marketplace catalogue", Err: unwrapPath(err)}
	}
	n, perr := parseJSONFile(src, path)
	if perr != nil {
		return nil, perr
	}
	f := field{path: path}
	if n == nil || n.kind != kindMap {
		return nil, errAt(path, n, "", `a marketplace catalogue is a JSON object {"name": …, "plugins": […]}`, nil)
	}
	c := &Catalog{}
	nameNode := n.get("name")
	if nameNode == nil || nameNode.kind != kindString || !validName().MatchString(nameNode.str) {
		return nil, errAt(path, orNode(nameNode, n), "name", `missing or invalid "name" (letters, digits, '-', '_' and '.')`, nil)
	}
	c.Name = nameNode.str
	if o := n.get("owner"); o != nil && o.kind == kindMap {
		c.Owner = &Author{}
		c.Owner.Name, _ = f.str(o.get("name"), "owner.name")
		c.Owner.Email, _ = f.str(o.get("email"), "owner.email")
	}
	if md := n.get("metadata"); md != nil && md.kind == kindMap {
		c.Description, _ = f.str(md.get("description"), "metadata.description")
		c.PluginRoot, _ = f.str(md.get("pluginRoot"), "metadata.pluginRoot")
	}
	if c.Description == "" {
		c.Description, _ = f.str(n.get("description"), "description")
	}
	ps := n.get("plugins")
	if ps == nil || ps.kind != kindSeq {
		return nil, errAt(path, orNode(ps, n), "plugins", `missing "plugins" (the list of plugins the marketplace offers)`, nil)
	}
	for i, e := range ps.elems {
		key := fmt.Sprintf("plugins[%d]", i)
		if e.kind != kindMap {
			return nil, f.typeErr(e, key, "a plugin entry object")
		}
		var cp CatalogPlugin
		nn := e.get("name")
		if nn == nil || nn.kind != kindString || !validName().MatchString(nn.str) {
			return nil, errAt(path, orNode(nn, e), key+".name", `missing or invalid "name"`, nil)
		}
		cp.Name = nn.str
		cp.Description, _ = f.str(e.get("description"), key+".description")
		cp.Version, _ = f.str(e.get("version"), key+".version")
		src, err := pluginSource(e.get("source"), path, key+".source")
		if err != nil {
			return nil, err
		}
		if src.Kind == "" {
			return nil, errAt(path, e, key+".source", `missing "source" (a "./relative/path", {"source": "github", "repo": "owner/repo"} or {"source": "url", "url": "…git"})`, nil)
		}
		cp.Source = src
		c.Plugins = append(c.Plugins, cp)
	}
	return c, nil
}

func orNode(n, fallback *node) *node {
	if n != nil {
		return n
	}
	return fallback
}

func pluginSource(n *node, path, key string) (PluginSource, *config.Error) {
	f := field{path: path}
	if n == nil || n.kind == kindNull {
		return PluginSource{}, nil
	}
	if n.kind == kindString {
		if strings.Contains(n.str, "://") || strings.HasPrefix(n.str, "git@") {
			return PluginSource{Kind: "git", URL: n.str}, nil
		}
		return PluginSource{Kind: "path", Path: n.str}, nil
	}
	if n.kind != kindMap {
		return PluginSource{}, f.typeErr(n, key, "a path or a source object")
	}
	kind, _ := f.str(n.get("source"), key+".source")
	ref, _ := f.str(n.get("ref"), key+".ref")
	switch kind {
	case "github":
		repo, _ := f.str(n.get("repo"), key+".repo")
		if !githubRepo().MatchString(repo) {
			return PluginSource{}, errAt(path, n, key+".repo", `a github source needs "repo": "owner/repo"`, nil)
		}
		return PluginSource{Kind: "github", Repo: repo, Ref: ref}, nil
	case "url", "git":
		url, _ := f.str(n.get("url"), key+".url")
		if url == "" {
			return PluginSource{}, errAt(path, n, key+".url", `a url source needs "url"`, nil)
		}
		return PluginSource{Kind: "git", URL: url, Ref: ref}, nil
	case "directory", "path", "local":
		p, _ := f.str(n.get("path"), key+".path")
		return PluginSource{Kind: "path", Path: p}, nil
	}
	return PluginSource{}, errAt(path, n, key+".source", fmt.Sprintf("unsupported plugin source %q (want a relative path, github or url)", kind), nil)
}

// git runs the git program.
func (s *Store) git(ctx context.Context, dir string, args ...string) (string, error) {
	prog := s.Git
	if prog == "" {
		prog = "git"
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	// Never ask for credentials on a terminal tack does not own.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimSpace(out.String()), nil
}

// clone clones url (at ref, when set) into dest, shallowly.
func (s *Store) clone(ctx context.Context, url, ref, dest string) error {
	args := []string{"clone", "--depth", "1", "--quiet"}
	if ref != "" {
		args = append(args, "--branch", ref)
	}
	if strings.HasPrefix(url, "/") { // a local repository: --depth needs file://
		url = "file://" + url
	}
	_, err := s.git(ctx, "", append(args, "--", url, dest)...)
	return err
}

// fetchURL is the URL a source is cloned from.
func fetchURL(src MarketplaceSource) string {
	if src.Source == "github" {
		return "https://github.com/" + src.Repo + ".git"
	}
	return src.URL
}

// AddMarketplace fetches a marketplace (a git clone into
// marketplaces/NAME; a folder is read in place), reads its catalogue and
// records it in known_marketplaces.json under the catalogue's name.
func (s *Store) AddMarketplace(ctx context.Context, src MarketplaceSource) (*KnownMarketplace, *Catalog, error) {
	known, err := readObject(s.knownPath())
	if err != nil {
		return nil, nil, err
	}
	var loc string
	var cat *Catalog
	switch src.Source {
	case "directory":
		if cat, err = ReadCatalog(src.Path); err != nil {
			return nil, nil, err
		}
		loc = src.Path
	case "git", "github":
		if err := os.MkdirAll(filepath.Join(s.Dir, "marketplaces"), 0o755); err != nil {
			return nil, nil, fmt.Errorf("add marketplace: %w", err)
		}
		tmp, err := os.MkdirTemp(filepath.Join(s.Dir, "marketplaces"), ".fetch-")
		if err != nil {
			return nil, nil, fmt.Errorf("add marketplace: %w", err)
		}
		defer os.RemoveAll(tmp)
		dest := filepath.Join(tmp, "repo")
		if err := s.clone(ctx, fetchURL(src), src.Ref, dest); err != nil {
			if src.Source == "github" {
				return nil, nil, fmt.Errorf("marketplace %s: cannot fetch it from GitHub: %w", src.Repo, err)
			}
			return nil, nil, fmt.Errorf("marketplace %s: %w", src.URL, err)
		}
		if cat, err = ReadCatalog(dest); err != nil {
			return nil, nil, err
		}
		loc = filepath.Join(s.Dir, "marketplaces", cat.Name)
		if _, dup := known[cat.Name]; !dup {
			if err := os.RemoveAll(loc); err != nil {
				return nil, nil, fmt.Errorf("add marketplace: %w", err)
			}
			if err := os.Rename(dest, loc); err != nil {
				return nil, nil, fmt.Errorf("add marketplace: %w", err)
			}
		}
	default:
		return nil, nil, fmt.Errorf("unknown marketplace source type %q", src.Source)
	}
	if prev, dup := known[cat.Name]; dup {
		var km KnownMarketplace
		_ = json.Unmarshal(prev, &km)
		return nil, nil, fmt.Errorf("marketplace %q is already added (from %s): remove it first", cat.Name, km.Source)
	}
	km := KnownMarketplace{Name: cat.Name, Source: src, InstallLocation: loc, LastUpdated: s.now()}
	raw, _ := json.Marshal(km)
	known[cat.Name] = raw
	if err := writeObject(s.knownPath(), known); err != nil {
		return nil, nil, err
	}
	return &km, cat, nil
}

// RemoveMarketplace forgets a marketplace and deletes its clone. Plugins
// installed from it stay installed; the caller uninstalls them first if it
// wants them gone.
func (s *Store) RemoveMarketplace(name string) error {
	known, err := readObject(s.knownPath())
	if err != nil {
		return err
	}
	raw, ok := known[name]
	if !ok {
		return fmt.Errorf("marketplace %q is not known", name)
	}
	var km KnownMarketplace
	_ = json.Unmarshal(raw, &km)
	delete(known, name)
	if err := writeObject(s.knownPath(), known); err != nil {
		return err
	}
	if within(filepath.Join(s.Dir, "marketplaces"), km.InstallLocation) {
		if err := os.RemoveAll(km.InstallLocation); err != nil {
			return fmt.Errorf("remove marketplace %s: %w", name, err)
		}
	}
	return nil
}

// within reports whether path is strictly inside dir.
func within(dir, path string) bool {
	r, err := filepath.Rel(dir, path)
	return err == nil && r != "." && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// installedFile is installed_plugins.json, unknown keys kept.
type installedFile struct {
	top     map[string]json.RawMessage
	plugins map[string]json.RawMessage
}

func (s *Store) readInstalled() (*installedFile, error) {
	top, err := readObject(s.installedPath())
	if err != nil {
		return nil, err
	}
	f := &installedFile{top: top, plugins: map[string]json.RawMessage{}}
	if raw, ok := top["plugins"]; ok {
		if err := json.Unmarshal(raw, &f.plugins); err != nil {
			return nil, &config.Error{Source: config.Source{Path: s.installedPath()}, Key: "plugins", Msg: "expected an object", Err: err}
		}
	}
	return f, nil
}

func (s *Store) writeInstalled(f *installedFile) error {
	f.top["version"] = json.RawMessage("2")
	raw, err := json.Marshal(f.plugins)
	if err != nil {
		return err
	}
	f.top["plugins"] = raw
	return writeObject(s.installedPath(), f.top)
}

// records reads one plugin's installation records: a list (version 2) or
// one object (version 1).
func records(id string, raw json.RawMessage) []InstalledPlugin {
	var list []InstalledPlugin
	if json.Unmarshal(raw, &list) != nil {
		var one InstalledPlugin
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		if one.Scope == "" {
			one.Scope = "user"
		}
		list = []InstalledPlugin{one}
	}
	for i := range list {
		list[i].ID = id
	}
	return list
}

// Installed returns the user-scope installation of every installed plugin,
// by "name@marketplace".
func (s *Store) Installed() (map[string]InstalledPlugin, error) {
	f, err := s.readInstalled()
	if err != nil {
		return nil, err
	}
	out := map[string]InstalledPlugin{}
	for id, raw := range f.plugins {
		for _, r := range records(id, raw) {
			if r.Scope == "user" || r.Scope == "" {
				out[id] = r
			}
		}
	}
	return out, nil
}

// SplitID splits "name@marketplace".
func SplitID(id string) (name, market string, err error) {
	i := strings.LastIndexByte(id, '@')
	if i <= 0 || i == len(id)-1 {
		return "", "", fmt.Errorf("plugin %q: write it NAME@MARKETPLACE", id)
	}
	return id[:i], id[i+1:], nil
}

// ResolveID completes a plugin name without "@marketplace" when exactly
// one known marketplace lists it.
func (s *Store) ResolveID(arg string) (string, error) {
	if strings.Contains(arg, "@") {
		_, _, err := SplitID(arg)
		return arg, err
	}
	list, err := s.Marketplaces()
	if err != nil {
		return "", err
	}
	var found []string
	for _, m := range list {
		cat, err := ReadCatalog(m.InstallLocation)
		if err != nil {
			continue
		}
		for _, p := range cat.Plugins {
			if p.Name == arg {
				found = append(found, arg+"@"+m.Name)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("no known marketplace lists a plugin %q", arg)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("plugin %q is in several marketplaces: name one (%s)", arg, strings.Join(found, ", "))
}

// Install copies a marketplace's plugin into cache/MARKET/PLUGIN/VERSION
// and records it in installed_plugins.json. It does not enable it.
func (s *Store) Install(ctx context.Context, id string) (*InstalledPlugin, *Plugin, error) {
	name, market, err := SplitID(id)
	if err != nil {
		return nil, nil, err
	}
	km, err := s.Marketplace(market)
	if err != nil {
		return nil, nil, err
	}
	cat, err := ReadCatalog(km.InstallLocation)
	if err != nil {
		return nil, nil, err
	}
	var entry *CatalogPlugin
	for i := range cat.Plugins {
		if cat.Plugins[i].Name == name {
			entry = &cat.Plugins[i]
		}
	}
	if entry == nil {
		names := make([]string, len(cat.Plugins))
		for i, p := range cat.Plugins {
			names[i] = p.Name
		}
		return nil, nil, fmt.Errorf("marketplace %s has no plugin %q%s", market, name, didYouMean(name, names))
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, "cache"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("install %s: %w", id, err)
	}
	tmp, err := os.MkdirTemp(filepath.Join(s.Dir, "cache"), ".install-")
	if err != nil {
		return nil, nil, fmt.Errorf("install %s: %w", id, err)
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "plugin")
	sha := ""
	switch entry.Source.Kind {
	case "path":
		rel := entry.Source.Path
		if !strings.HasPrefix(rel, "./") && !strings.HasPrefix(rel, "../") && cat.PluginRoot != "" {
			rel = filepath.Join(cat.PluginRoot, rel)
		}
		from, ok := inside(km.InstallLocation, rel)
		if !ok {
			return nil, nil, fmt.Errorf("install %s: source %q leaves the marketplace folder", id, entry.Source.Path)
		}
		if err := copyTree(from, staged); err != nil {
			return nil, nil, fmt.Errorf("install %s: %w", id, err)
		}
	case "git", "github":
		url := entry.Source.URL
		if entry.Source.Kind == "github" {
			url = "https://github.com/" + entry.Source.Repo + ".git"
		}
		if err := s.clone(ctx, url, entry.Source.Ref, staged); err != nil {
			if entry.Source.Kind == "github" {
				return nil, nil, fmt.Errorf("install %s: cannot fetch %s from GitHub: %w", id, entry.Source.Repo, err)
			}
			return nil, nil, fmt.Errorf("install %s: %w", id, err)
		}
		sha, _ = s.git(ctx, staged, "rev-parse", "HEAD")
		if err := os.RemoveAll(filepath.Join(staged, ".git")); err != nil {
			return nil, nil, fmt.Errorf("install %s: %w", id, err)
		}
	default:
		return nil, nil, fmt.Errorf("install %s: unsupported source", id)
	}
	m, merr := readManifest(staged)
	if merr != nil {
		merr.Source.Path = strings.Replace(merr.Source.Path, staged, "("+id+")", 1)
		return nil, nil, fmt.Errorf("install %s: %w", id, merr)
	}
	if m.Name != name {
		return nil, nil, fmt.Errorf("install %s: the plugin's manifest names it %q, the marketplace %q", id, m.Name, name)
	}
	version := firstNonEmpty(m.Version, entry.Version)
	if version == "" && len(sha) >= 12 {
		version = sha[:12]
	}
	if version == "" {
		version = "unknown"
	}
	if strings.ContainsAny(version, `/\`) || version == "." || version == ".." {
		return nil, nil, fmt.Errorf("install %s: version %q cannot name a folder", id, version)
	}
	dest := filepath.Join(s.Dir, "cache", market, name, version)
	if err := os.RemoveAll(dest); err != nil {
		return nil, nil, fmt.Errorf("install %s: %w", id, err)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, nil, fmt.Errorf("install %s: %w", id, err)
	}
	if err := os.Rename(staged, dest); err != nil {
		return nil, nil, fmt.Errorf("install %s: %w", id, err)
	}
	p, _, lerr := pluginLoader{getenv: os.Getenv}.load(dest, id)
	if lerr != nil {
		return nil, nil, fmt.Errorf("install %s: %w", id, lerr)
	}
	f, err := s.readInstalled()
	if err != nil {
		return nil, nil, err
	}
	now := s.now()
	rec := InstalledPlugin{ID: id, Scope: "user", InstallPath: dest, Version: version, InstalledAt: now, LastUpdated: now, GitCommitSha: sha}
	var keep []InstalledPlugin
	for _, r := range records(id, f.plugins[id]) {
		if r.Scope != "user" && r.Scope != "" {
			keep = append(keep, r)
		} else if r.InstalledAt != "" {
			rec.InstalledAt = r.InstalledAt
		}
	}
	raw, _ := json.Marshal(append(keep, rec))
	f.plugins[id] = raw
	if err := s.writeInstalled(f); err != nil {
		return nil, nil, err
	}
	return &rec, p, nil
}

// Uninstall deletes a plugin's installed copy and its record.
func (s *Store) Uninstall(id string) error {
	f, err := s.readInstalled()
	if err != nil {
		return err
	}
	raw, ok := f.plugins[id]
	if !ok {
		return fmt.Errorf("plugin %s is not installed", id)
	}
	var keep []InstalledPlugin
	for _, r := range records(id, raw) {
		if r.Scope != "user" && r.Scope != "" {
			keep = append(keep, r)
			continue
		}
		if within(filepath.Join(s.Dir, "cache"), r.InstallPath) {
			if err := os.RemoveAll(r.InstallPath); err != nil {
				return fmt.Errorf("uninstall %s: %w", id, err)
			}
		}
	}
	if len(keep) == 0 {
		delete(f.plugins, id)
	} else {
		raw, _ := json.Marshal(keep)
		f.plugins[id] = raw
	}
	return s.writeInstalled(f)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// copyTree copies the folder from to to (which must not exist), keeping
// modes and symbolic links, leaving out .git.
func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() && d.Name() == ".git" && rel != "." {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case info.Mode().IsRegular():
			return copyFile(p, dst, info.Mode().Perm())
		}
		return nil // sockets, devices: not part of a plugin
	})
}

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
