package mcpconfig

import (
	"net/url"
	"strings"

	"github.com/tackcode/tack/internal/lazyregexp"
)

// varRef matches ${…} as Claude Code does: a '$', a '{', one or more
// characters other than '}', and the '}'.
var varRef = lazyregexp.New(`\$\{([^}]+)\}`)

// Expand replaces ${VAR} and ${VAR:-default} in s, as Claude Code expands
// the command, args, env values, url and header values of an MCP entry.
//
//   - ${VAR} is the value of VAR. When VAR is unset, the reference is left
//     as written and VAR is reported in missing.
//   - ${VAR:-default} is the value of VAR when it is set — even to "", as in
//     Claude Code (unlike sh, which uses the default for an empty value too)
//     — and default otherwise. The default is everything after the first
//     ":-" and is not itself expanded.
//   - Everything else stays literal: $VAR, $$, a lone $, an unclosed ${.
//
// Expansion is a single pass: a variable's value is never expanded again.
func Expand(s string, lookup func(string) (string, bool)) (out string, missing []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	out = varRef().ReplaceAllStringFunc(s, func(ref string) string {
		content := ref[2 : len(ref)-1]
		name, def, hasDef := strings.Cut(content, ":-")
		if v, ok := lookup(name); ok {
			return v
		}
		if hasDef {
			return def
		}
		missing = append(missing, name)
		return ref
	})
	return out, missing
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// secretFree are the literal parts a value may have besides ${…} references
// and still be shown unmasked: authorisation scheme names, which say nothing
// secret.
var secretFree = map[string]bool{"": true, "bearer": true, "basic": true, "token": true}

// MaskValue hides an env or header value for display. A value that gets its
// secret from the environment (only ${…} references, perhaps after a scheme
// such as "Bearer ") is shown as written, since it reveals nothing and tells
// the user which variable to set; any other value becomes "****".
// raw is the value as written in the file, before expansion.
func MaskValue(raw string) string {
	if strings.Contains(raw, "${") {
		rest := varRef().ReplaceAllString(raw, "")
		if secretFree[strings.ToLower(strings.TrimSpace(rest))] {
			return raw
		}
	}
	if raw == "" {
		return ""
	}
	return "****"
}

// MaskURL hides the values of a URL's query parameters and its password,
// where API keys are often put.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.RawQuery == "" && u.User == nil) {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "****")
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" {
				parts[i] = k + "=****"
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	s := u.String()
	return strings.ReplaceAll(s, "%2A%2A%2A%2A", "****")
}
