// Package layers holds the import rules of tack's architecture (see the
// repository's architecture document) as data, and its test checks every
// package of the module against them with `go list`, so that an arrow
// running back up the layers fails the build's tests instead of eroding the
// structure:
//
//	surfaces (cli, tui, sdkproto, acp) → agent → runtime → engine → the rest
//
// The package has no code of its own.
package layers
