package agent

import (
	"io"

	"github.com/tackcode/tack/internal/runtime"
)

// ExplainSettings writes the settings a session with opts would run under:
// the files read, each value with the file it came from, and warnings. A
// malformed settings file is an error naming its file, line and column.
func ExplainSettings(w io.Writer, opts Options) error {
	return runtime.ExplainSettings(w, configOf(opts))
}
