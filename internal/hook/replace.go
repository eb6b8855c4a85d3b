package hook

import (
	"fmt"
	"strings"
)

// Replace makes cfg, admitted as New admits it, the configuration the
// runner runs in place of the one it was made with: the session read its
// settings again. The hooks Add brought (a skill's) stay, after it. An
// invalid handler is reported and nothing changes. A once-only handler
// that already ran stays done as long as it keeps its place.
func (r *Runner) Replace(cfg Config) error {
	entries, err := compile(r.opts.admit(cfg))
	if err != nil {
		return fmt.Errorf("hook configuration: %w", err)
	}
	r.entriesMu.Lock()
	defer r.entriesMu.Unlock()
	for ev, es := range r.entries {
		for _, e := range es {
			// Add marks the position of what it brings.
			if strings.HasPrefix(e.pos, "added") {
				entries[ev] = append(entries[ev], e)
			}
		}
	}
	r.entries = entries
	return nil
}
