//go:build !unix

package atomicfile

import "io/fs"

// alive reports true: without a way to ask, a temporary file could belong
// to a write in progress, and is kept.
func alive(int) bool { return true }

// OwnerOf returns nil: files have no Unix owner here.
func OwnerOf(fs.FileInfo) *Owner { return nil }
