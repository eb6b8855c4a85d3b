package shellcmd

import "strings"

// What shell and environment variables mean to the commands after them.

// SafeEnv reports whether an environment variable set for one command
// (LANG=C sort) cannot change what the command runs or writes.
func SafeEnv(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "CI",
		"NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "RUST_BACKTRACE", "COLUMNS", "LINES":
		return true
	}
	return strings.HasPrefix(name, "LC_") && isName(name)
}

// resolutionVar reports whether a variable changes which program a
// command name runs (PATH, hash tables), which file a word names (HOME,
// PWD, CDPATH, IFS), what globs match (GLOBIGNORE), or makes shells and
// language runtimes load code (BASH_ENV, LD_PRELOAD, NODE_OPTIONS…).
func resolutionVar(name string) bool {
	switch name {
	case "PATH", "path", "HOME", "PWD", "OLDPWD", "CDPATH", "cdpath", "IFS", "GLOBIGNORE", "FIGNORE", "EXECIGNORE",
		"BASH_ENV", "ENV", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "BASH_LOADABLES_PATH",
		"fpath", "FPATH", "module_path", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "PYTHONPATH", "PYTHONSTARTUP",
		"PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "PAGER", "EDITOR", "VISUAL":
		return true
	}
	return strings.HasPrefix(name, "GIT_") || strings.HasPrefix(name, "DYLD_") || strings.HasPrefix(name, "BASH_FUNC_")
}

// harmlessVar reports whether setting a shell variable for the rest of the
// line is harmless: a safe environment name, or a lower-case name that no
// shell or common tool gives a meaning to.
func harmlessVar(name string) bool {
	if SafeEnv(name) {
		return true
	}
	if name == "" || !isName(name) || strings.ToLower(name) != name {
		return false
	}
	switch name {
	case "path", "cdpath", "fpath", "manpath", "module_path", "mailpath", "fignore", "psvar", "watch",
		"histchars", "prompt", "ifs", "home", "_":
		return false
	}
	return !strings.HasSuffix(name, "_proxy") && !strings.HasSuffix(name, "_functions")
}

// isName reports whether s is a valid shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}
