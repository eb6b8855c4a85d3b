package protocol

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// CostReport renders a result's spend the way a /cost command shows it:
// total cost, durations, and the usage of each model.
func (r *Result) CostReport() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Total cost:            $%.4f\n", r.TotalCostUSD)
	fmt.Fprintf(&b, "Total duration (API):  %s\n", roundDur(r.DurationAPIMS))
	fmt.Fprintf(&b, "Total duration (wall): %s\n", roundDur(r.DurationMS))
	if len(r.ModelUsage) == 0 {
		return b.String()
	}
	b.WriteString("Usage by model:\n")
	models := make([]string, 0, len(r.ModelUsage))
	for m := range r.ModelUsage {
		models = append(models, m)
	}
	slices.Sort(models)
	for _, m := range models {
		u := r.ModelUsage[m]
		fmt.Fprintf(&b, "  %s: %s input, %s output, %s cache read, %s cache write ($%.4f)\n", m,
			tokens(u.InputTokens), tokens(u.OutputTokens), tokens(u.CacheReadInputTokens), tokens(u.CacheCreationInputTokens), u.CostUSD)
	}
	return b.String()
}

func roundDur(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Second {
		return d.String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// tokens writes a count compactly: 950, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
