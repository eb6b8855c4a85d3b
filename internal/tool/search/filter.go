package search

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// fileFilter selects the files Grep searches by glob and file type.
type fileFilter struct {
	include []string // a file must match one of these, if any
	exclude []string // a file or directory matching one is skipped
	types   []string // a file's name must match one of these, if any
}

// newFileFilter parses Grep's glob and type parameters. glob holds one or
// more patterns separated by spaces or commas (commas inside braces
// belong to the pattern); "!" negates one. A pattern with a slash matches
// the path relative to the search root, one without matches the file name
// at any depth, as with ripgrep's --glob. typ names one or more ripgrep
// file types, separated the same way.
func newFileFilter(glob, typ string) (*fileFilter, error) {
	f := &fileFilter{}
	for _, p := range splitList(glob) {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(p, "!"), "./"), "/")
		if p == "" {
			continue
		}
		if !doublestar.ValidatePattern(p) {
			return nil, fmt.Errorf("invalid glob pattern %q", p)
		}
		if neg {
			f.exclude = append(f.exclude, p)
		} else {
			f.include = append(f.include, p)
		}
	}
	for _, t := range splitList(typ) {
		globs, ok := fileTypes[typeAliases[t]]
		if !ok {
			globs, ok = fileTypes[t]
		}
		if !ok {
			return nil, fmt.Errorf("unknown file type %q; known types: %s", t, strings.Join(typeNames(), ", "))
		}
		f.types = append(f.types, globs...)
	}
	return f, nil
}

// empty reports whether the filter lets every file through.
func (f *fileFilter) empty() bool {
	return len(f.include) == 0 && len(f.exclude) == 0 && len(f.types) == 0
}

// keepFile reports whether the file at rel (relative to the search root,
// name its last element) passes the filter.
func (f *fileFilter) keepFile(rel, name string) bool {
	if matchAny(f.exclude, rel, name) {
		return false
	}
	if len(f.include) > 0 && !matchAny(f.include, rel, name) {
		return false
	}
	return len(f.types) == 0 || matchAny(f.types, rel, name)
}

// keepDir reports whether a directory is worth entering.
func (f *fileFilter) keepDir(rel, name string) bool {
	return !matchAny(f.exclude, rel, name)
}

func matchAny(patterns []string, rel, name string) bool {
	for _, p := range patterns {
		target := name
		if strings.Contains(p, "/") {
			target = rel
		}
		if doublestar.MatchUnvalidated(p, target) {
			return true
		}
	}
	return false
}

// splitList splits s at spaces and at commas outside braces.
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '{':
				depth++
				continue
			case '}':
				depth = max(0, depth-1)
				continue
			case ',':
				if depth > 0 {
					continue
				}
			case ' ', '\t', '\n':
			default:
				continue
			}
		}
		if i > start {
			out = append(out, s[start:i])
		}
		start = i + 1
	}
	return out
}

// typeNames lists the known file types, for error messages.
func typeNames() []string {
	names := make([]string, 0, len(fileTypes))
	for n := range fileTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// typeAliases map common names to ripgrep's type names.
var typeAliases = map[string]string{
	"golang": "go", "javascript": "js", "jsx": "js", "typescript": "ts", "tsx": "ts",
	"python": "py", "rs": "rust", "rb": "ruby", "kt": "kotlin", "cs": "csharp",
	"c++": "cpp", "bash": "sh", "shell": "sh", "zsh": "sh", "yml": "yaml",
	"markdown": "md", "htm": "html", "scss": "css", "text": "txt", "tf": "terraform",
	"proto": "protobuf", "ex": "elixir", "hs": "haskell", "pl": "perl", "ml": "ocaml",
}

// fileTypes are ripgrep's file types (a selection), as name globs.
var fileTypes = map[string][]string{
	"asm":       {"*.asm", "*.s", "*.S"},
	"c":         {"*.[chH]", "*.[chH].in", "*.cats"},
	"clojure":   {"*.clj", "*.cljc", "*.cljs", "*.cljx"},
	"cmake":     {"*.cmake", "CMakeLists.txt"},
	"cpp":       {"*.[ChH]", "*.cc", "*.[ch]pp", "*.[ch]xx", "*.hh", "*.inl", "*.[ChH].in", "*.cc.in", "*.[ch]pp.in", "*.[ch]xx.in", "*.hh.in"},
	"csharp":    {"*.cs"},
	"css":       {"*.css", "*.scss", "*.sass", "*.less"},
	"csv":       {"*.csv"},
	"dart":      {"*.dart"},
	"docker":    {"*Dockerfile*", "*.dockerfile"},
	"elixir":    {"*.ex", "*.eex", "*.exs", "*.heex", "*.leex"},
	"erlang":    {"*.erl", "*.hrl"},
	"fsharp":    {"*.fs", "*.fsx", "*.fsi"},
	"go":        {"*.go"},
	"gradle":    {"*.gradle", "*.gradle.kts"},
	"graphql":   {"*.graphql", "*.graphqls", "*.gql"},
	"groovy":    {"*.groovy", "*.gradle"},
	"h":         {"*.h", "*.hh", "*.hpp", "*.hxx"},
	"haskell":   {"*.hs", "*.lhs", "*.cabal"},
	"html":      {"*.htm", "*.html", "*.ejs"},
	"java":      {"*.java", "*.jsp", "*.jspx", "*.properties"},
	"js":        {"*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"},
	"json":      {"*.json", "*.jsonc", "*.json5", "composer.lock", "*.sarif"},
	"jsonl":     {"*.jsonl"},
	"julia":     {"*.jl"},
	"kotlin":    {"*.kt", "*.kts"},
	"lua":       {"*.lua"},
	"make":      {"[Gg][Nn][Uu]makefile", "[Mm]akefile", "[Gg][Nn][Uu]makefile.am", "[Mm]akefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile.in", "*.mk", "*.mak"},
	"md":        {"*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mkd", "*.mkdn", "*.mdx"},
	"nim":       {"*.nim", "*.nimble", "*.nims"},
	"nix":       {"*.nix"},
	"objc":      {"*.h", "*.m"},
	"ocaml":     {"*.ml", "*.mli", "*.mll", "*.mly"},
	"perl":      {"*.perl", "*.pl", "*.PL", "*.plh", "*.plx", "*.pm", "*.t"},
	"php":       {"*.php", "*.php3", "*.php4", "*.php5", "*.phpt", "*.phtml"},
	"protobuf":  {"*.proto"},
	"ps":        {"*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"},
	"py":        {"*.py", "*.pyi"},
	"r":         {"*.R", "*.r", "*.Rmd", "*.Rnw"},
	"ruby":      {"*.rb", "*.gemspec", "Gemfile", ".irbrc", "Rakefile", "config.ru"},
	"rust":      {"*.rs"},
	"scala":     {"*.scala", "*.sbt"},
	"sh":        {"*.bash", "*.bashrc", ".bash_*", "*.sh", "*.zsh", ".zshrc", ".zprofile", ".profile", "*.ksh", "*.csh"},
	"sql":       {"*.sql", "*.psql"},
	"svelte":    {"*.svelte"},
	"swift":     {"*.swift"},
	"tex":       {"*.tex", "*.ltx", "*.cls", "*.sty", "*.bib"},
	"terraform": {"*.tf", "*.tfvars", "*.tf.json"},
	"toml":      {"*.toml", "Cargo.lock"},
	"ts":        {"*.ts", "*.tsx", "*.cts", "*.mts"},
	"txt":       {"*.txt"},
	"vue":       {"*.vue"},
	"xml":       {"*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt", "*.svg"},
	"yaml":      {"*.yaml", "*.yml"},
	"zig":       {"*.zig"},
}
