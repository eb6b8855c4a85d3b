// Package search holds the tools that find files by name (Glob) and by
// content (Grep). Both walk the tree in parallel, skip version-control
// directories and honour .gitignore files the way git does.
package search

import "github.com/tackcode/tack/internal/tool"

// Tools returns Glob and Grep.
func Tools() []tool.Tool {
	return []tool.Tool{globTool{}, grepTool{}}
}
