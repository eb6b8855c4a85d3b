// Package version holds tack's version, set at build time with
// -ldflags "-X github.com/tackcode/tack/internal/version.Version=…".
package version

// Version is tack's version.
var Version = "0.1.0-dev"
