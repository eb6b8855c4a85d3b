package cli

import (
	"context"

	"github.com/tackcode/tack/agent"
)

// checkNetwork lists the proxy, certificate authorities and client
// certificate in use, a line each and only those set, and fails when one
// of their files cannot be used.
func checkNetwork(_ context.Context, _ IO, opts agent.Options) []checkResult {
	st, err := agent.CheckNetwork(opts)
	if err == nil {
		err = st.Err
	}
	if err != nil {
		return []checkResult{{Check: "network", Verdict: verdictFail, Detail: err.Error(), Fix: "fix the file named, or unset the variable"}}
	}
	var out []checkResult
	for _, l := range st.Lines {
		out = append(out, checkResult{Check: "network", Verdict: verdictOK, Detail: l})
	}
	return out
}
