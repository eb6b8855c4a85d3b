// Package web holds the tools that reach the web: WebFetch, which reads a
// page and has the small model answer a prompt from it, and WebSearch, which
// runs the API's server-side web search.
package web

import (
	"errors"

	"github.com/tackcode/tack/internal/tool"
)

// Tools returns WebFetch and WebSearch.
func Tools() []tool.Tool {
	return []tool.Tool{newFetchTool(), searchTool{}}
}

// errNoModel is returned when the session gives tools no model to call.
var errNoModel = errors.New("no model is configured for this tool")
