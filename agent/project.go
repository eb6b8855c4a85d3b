package agent

import "github.com/tackcode/tack/internal/runtime"

// PurgeItem is one thing kept about a project: its folder of sessions
// (Kind "dir"), its entry in ~/.claude.json ("config", under Key) or its
// lines in a shared file ("filter": the prompt history).
type PurgeItem struct {
	Kind string
	Path string
	Key  string
	// What says what it holds.
	What string
}

// PurgeProject lists what tack keeps about the project in opts.Cwd (the
// working directory by default; the folder need not exist any more) and,
// unless dryRun, removes it: its transcripts, workflow records, prompt
// history and auto memory (the project's folder under
// ~/.claude/projects), its entry in ~/.claude.json and its prompts in
// ~/.claude/history.jsonl. It returns the project's absolute path and the
// items removed (or that would be).
func PurgeProject(opts Options, dryRun bool) (string, []PurgeItem, error) {
	dir := opts.Cwd
	if dir == "" {
		dir = "."
	}
	project, items, err := runtime.PurgeProject(dir, opts.Env, dryRun)
	return project, convert(items, func(in runtime.PurgeItem) PurgeItem { return PurgeItem(in) }), err
}
