// Package startheap gives a process a larger heap before its first
// collection, for its start-up. The Go runtime starts collecting at a 4 MiB
// heap and doubles from there, so a process that builds a large structure
// right away — a resumed session of thousands of messages — collects several
// times while it builds it: each cycle marks what is there so far, and the
// write barrier of a running cycle makes every copy into fresh memory
// costlier. None of those cycles can free much, since what is built is all
// live.
//
// Set turns collection off until the heap reaches a budget or the start-up
// window has passed, whichever comes first, and then gives the runtime back
// its default pacing, so that a session that keeps running (an interactive
// one, which allocates little at a time) is paced as usual.
package startheap

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// Set turns the collector off until the Go heap reaches budget bytes (a
// soft memory limit makes the runtime collect then) or window has passed;
// after that the default percent (100) and no limit apply. It does nothing
// when the environment sets GOGC or GOMEMLIMIT: the user's choice stands.
// It is for a program's main, once, before the work starts.
func Set(budget int64, window time.Duration, getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(budget)
	var once sync.Once
	restore := func() {
		once.Do(func() {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
		})
	}
	time.AfterFunc(window, restore)
	// The cleanup of an object nothing references runs after the first
	// cycle, which finds it unreachable. Not a tiny allocation, which
	// would share its block with others.
	runtime.AddCleanup(new([32]byte), func(struct{}) { restore() }, struct{}{})
}
