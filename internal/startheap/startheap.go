// Package startheap gives a short-lived process a larger heap before its
// first collection. The Go runtime starts collecting at a 4 MiB heap and
// doubles from there, so a process that builds a large structure right away
// — a resumed session of thousands of messages — collects several times
// while it builds it: each cycle marks what is there so far, and the write
// barrier of a running cycle makes every copy into fresh memory costlier.
// None of those cycles can free much, since what is built is all live.
//
// Set turns collection off until the heap reaches a budget, and gives the
// runtime back its default pacing at the first collection after that, so a
// session that keeps running is paced as usual from then on.
package startheap

import (
	"math"
	"runtime"
	"runtime/debug"
)

// Set turns the collector off until the Go heap reaches budget bytes (a
// soft memory limit makes the runtime collect then), after which the
// default percent (100) and no limit apply. It does nothing when the
// environment sets GOGC or GOMEMLIMIT: the user's choice stands. It is
// for a program's main, once, before the work starts.
func Set(budget int64, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(budget)
	armRestore()
}

// armRestore puts back the default pacing at the first collection: the
// finalizer of an object nothing references runs after the cycle that
// finds it unreachable.
func armRestore() {
	sentinel := new([32]byte) // not a tiny allocation, which would share its block
	runtime.AddCleanup(sentinel, func(struct{}) {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}, struct{}{})
}
