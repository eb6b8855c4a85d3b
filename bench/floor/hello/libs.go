//go:build floorlibs

package main

// Built with -tags floorlibs, the floor links what tack links but its own
// code: see bench/floor/libs.
import _ "github.com/tackcode/tack/bench/floor/libs"
