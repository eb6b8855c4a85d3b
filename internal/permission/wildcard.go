package permission

import "strings"

// wildcard is a compiled pattern where a wildcard stands for any run of
// characters: lits[0] * lits[1] * … * lits[n]. With no wildcard, lits has
// one element and the match is exact.
type wildcard struct {
	lits []string
}

// compileWildcard compiles a pattern whose every '*' is a wildcard.
func compileWildcard(p string) wildcard {
	return wildcard{lits: strings.Split(p, "*")}
}

// match reports whether s matches the whole pattern. A leftmost match of
// each literal is enough: wildcards can absorb anything in between.
func (w wildcard) match(s string) bool {
	lits := w.lits
	if len(lits) == 1 {
		return s == lits[0]
	}
	if !strings.HasPrefix(s, lits[0]) {
		return false
	}
	s = s[len(lits[0]):]
	last := lits[len(lits)-1]
	for _, lit := range lits[1 : len(lits)-1] {
		i := strings.Index(s, lit)
		if i < 0 {
			return false
		}
		s = s[i+len(lit):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// maxIntersect bounds the work of intersects; larger inputs are assumed to
// intersect.
const maxIntersect = 1 << 18

// intersects reports whether some string matches the pattern and also s,
// where each shellcmd.RunTime mark in s stands for any run of characters: can a
// command whose run-time parts are unknown match the pattern?
func (w wildcard) intersects(s string) bool {
	const star = -1
	var p []int
	for i, lit := range w.lits {
		if i > 0 {
			p = append(p, star)
		}
		for j := 0; j < len(lit); j++ {
			p = append(p, int(lit[j]))
		}
	}
	n, m := len(p), len(s)
	if (n+1)*(m+1) > maxIntersect {
		return true
	}
	// next[j] holds row i+1, cur[j] row i: can p[i:] and s[j:] meet?
	next := make([]bool, m+1)
	cur := make([]bool, m+1)
	next[m] = true
	for j := m - 1; j >= 0; j-- {
		next[j] = s[j] == 0 && next[j+1]
	}
	for i := n - 1; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case p[i] == star:
				cur[j] = next[j] || j < m && cur[j+1]
			case j < m && s[j] == 0:
				cur[j] = cur[j+1] || next[j]
			case j < m:
				cur[j] = p[i] == int(s[j]) && next[j+1]
			default:
				cur[j] = false
			}
		}
		next, cur = cur, next
	}
	return next[0]
}
