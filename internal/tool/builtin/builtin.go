// Package builtin assembles tack's built-in tools.
package builtin

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/ask"
	"github.com/tackcode/tack/internal/tool/bash"
	"github.com/tackcode/tack/internal/tool/fs"
	"github.com/tackcode/tack/internal/tool/plan"
	"github.com/tackcode/tack/internal/tool/search"
	"github.com/tackcode/tack/internal/tool/tasks"
	"github.com/tackcode/tack/internal/tool/web"
)

// All returns every built-in tool.
func All() []tool.Tool {
	return slices.Concat(ask.Tools(), bash.Tools(), tasks.Background(), fs.Tools(), plan.Tools(), search.Tools(), tasks.Tools(), web.Tools())
}

// Select returns the tools named (as --tools gives them): nil means the
// default set, an empty list none, and "default" stands for the default set
// inside a list. An unknown name is an error that lists the known ones.
func Select(names []string) ([]tool.Tool, error) {
	all := All()
	if names == nil {
		return all, nil
	}
	byName := make(map[string]tool.Tool, len(all))
	for _, t := range all {
		byName[t.Name()] = t
	}
	var out []tool.Tool
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		if n == "default" {
			return all, nil
		}
		t, ok := byName[n]
		if !ok {
			known := make([]string, 0, len(byName))
			for k := range byName {
				known = append(known, k)
			}
			sort.Strings(known)
			return nil, fmt.Errorf("unknown tool %q (known: %s)", n, strings.Join(known, ", "))
		}
		out = append(out, t)
	}
	return out, nil
}
