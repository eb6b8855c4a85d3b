// Package lazyregexp holds package-level regular expressions that are
// compiled the first time they are used. A regexp.MustCompile in a var
// declaration runs at start-up in every process, `tack -p` and `tack
// --version` included, whether or not the expression is ever matched.
package lazyregexp

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call and returns
// the same *regexp.Regexp on every call. expr must be valid: an invalid one
// panics on first use, as regexp.MustCompile does.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
