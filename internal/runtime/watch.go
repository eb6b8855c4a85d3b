package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tackcode/tack/internal/config"
	"github.com/tackcode/tack/internal/extension"
	"github.com/tackcode/tack/internal/hook"
	"github.com/tackcode/tack/internal/watch"
)

// The hook events of files and places are fired here:
//
//   - FileChanged, when a file the session watches changed on disk and the
//     change is not one of its own writes (the file tools write through
//     watching.writes). The session watches the files it read or wrote
//     (the file tools' FileState), the paths its SessionStart, CwdChanged
//     and FileChanged hooks answered with (watchPaths), and the file names
//     its FileChanged matchers list (".envrc|.env") in the working
//     directory, which follow the directory when it moves. The hooks run
//     as soon as the file has been still for a moment, within a turn or
//     between turns; the context they add reaches the model with the next
//     request (the next prompt's, between turns). Commands the session runs
//     are other processes: what they write is reported.
//   - ConfigChange, when a settings file (user, project, local, managed;
//     not a --settings file, which has no source) or a file in a skill
//     folder changed. Unless a hook blocks (which a change of the managed
//     settings ignores), the settings files are read again, all of them
//     (reloadSettings says what a running session takes of them): a
//     blocked edit holds off until the next change that is read. Skills
//     are reported only; a session takes them up when it starts.
//   - CwdChanged, when a command left the main thread's shell in another
//     directory: a cd, or the fall back from a directory that vanished
//     (the directory the next commands run in did change, and a hook that
//     follows the working directory must know). Every payload's cwd is the
//     new directory from then on. A subagent's cd moves only its own shell
//     and fires nothing.
//
// The watcher starts with the session when a FileChanged or ConfigChange
// hook is configured, or once a reload brings one: a session without them
// starts none, and reads its settings once.

// Who watches a path, in the session's watcher.
const (
	watchRead     = "files"    // the files the session read or wrote
	watchAsked    = "hooks"    // the watchPaths hooks answered with
	watchNames    = "names"    // the FileChanged matchers' file names, in the cwd
	watchSettings = "settings" // the settings files
	watchSkills   = "skills"   // the skill folders
)

// watching is what the session watches on disk.
type watching struct {
	s *Session
	// writes are the session's own writes, which the watcher leaves out;
	// every thread's tools write through it.
	writes watch.Writes

	mu sync.Mutex
	w  *watch.Watcher // nil until a hook wants it
	// files says the FileChanged paths are watched (a FileChanged hook is
	// configured).
	files bool
	// asked are the watchPaths answered before the watcher started.
	asked []string
	// settings are the settings files, with their ConfigChange source.
	settings map[string]string
}

// watchFiles is the thread step that connects the thread to the session's
// watcher: the files its tools read or write are watched, and on the main
// thread the shell's moves fire CwdChanged. A running subagent is noted,
// for reloads to reach it.
func (t *thread) watchFiles(context.Context) error {
	s := t.s
	if !t.spec.hookAgent { // what a hook's agent reads is not the session's
		t.env.Files.OnRecord(s.watching.read)
	}
	if t.parent != nil {
		return s.running(t, true)
	}
	// The watcher itself starts once the session is built (New): its
	// events reach the main thread.
	t.env.Shell.OnCwdChange(t.cwdChanged)
	return nil
}

// refresh starts the watcher once a FileChanged or ConfigChange hook is
// configured, and watches the FileChanged paths once a FileChanged hook is.
func (wg *watching) refresh() {
	s := wg.s
	hooks := s.main.hooks
	wantFiles := hooks.Has(hook.FileChanged)
	if !wantFiles && !hooks.Has(hook.ConfigChange) {
		return
	}
	wg.mu.Lock()
	defer wg.mu.Unlock()
	if wg.w == nil {
		w, err := watch.New(watch.Options{Writes: &wg.writes, OnEvent: wg.changed, OnError: func(err error) { s.notify(err.Error()) }})
		if err != nil {
			s.notify(err.Error() + ": FileChanged and ConfigChange hooks will not fire")
			return
		}
		wg.w = w
		wg.watchSettings()
	}
	if wantFiles {
		if !wg.files {
			wg.files = true
			wg.report(wg.w.Add(watchRead, s.main.env.Files.Paths()...))
			wg.report(wg.w.Add(watchAsked, wg.asked...))
			wg.asked = nil
		}
		wg.report(wg.w.Set(watchNames, s.matcherFiles(s.main.env.Cwd())...))
	}
}

// watchSettings watches the settings files the session reads and its skill
// folders; a file whose folder does not exist is left out. Callers hold
// wg.mu.
func (wg *watching) watchSettings() {
	s := wg.s
	opts, err := loadOptions(s.cfg, s.place(), optionsEnv(s.cfg.Env))
	if err != nil {
		return // the session could not have started
	}
	wg.settings = map[string]string{}
	sources := map[config.Scope]string{config.ScopeUser: "user_settings", config.ScopeProject: "project_settings",
		config.ScopeLocal: "local_settings", config.ScopeManaged: "policy_settings"}
	for _, f := range opts.Files() {
		source, ok := sources[f.Scope]
		if !ok || !isDir(filepath.Dir(f.Path)) {
			continue // --settings has no ConfigChange source
		}
		if wg.w.Add(watchSettings, f.Path) == nil {
			wg.settings[f.Path] = source
		}
	}
	for _, dir := range s.skillDirs() {
		if isDir(dir) {
			wg.report(wg.w.Add(watchSkills, dir))
		}
	}
}

// skillDirs are the folders the session's skills come from, but plugins'.
func (s *Session) skillDirs() []string {
	opts, err := s.extOptions()
	if err != nil {
		return nil // the session could not have started
	}
	var dirs []string
	for _, r := range extension.Roots(opts) {
		dirs = append(dirs, filepath.Join(r.Dir, "skills"))
	}
	return dirs
}

// read watches a file the session read or wrote (FileState.OnRecord).
func (wg *watching) read(path string) {
	wg.mu.Lock()
	defer wg.mu.Unlock()
	if wg.w != nil && wg.files {
		wg.report(wg.w.Add(watchRead, path))
	}
}

// ask watches the paths a hook answered with (watchPaths).
func (wg *watching) ask(paths []string) {
	if len(paths) == 0 {
		return
	}
	wg.mu.Lock()
	defer wg.mu.Unlock()
	if wg.w == nil || !wg.files {
		wg.asked = append(wg.asked, paths...)
		return
	}
	wg.report(wg.w.Add(watchAsked, paths...))
}

// moved makes the FileChanged matchers' names those of dir, the new
// working directory.
func (wg *watching) moved(dir string) {
	wg.mu.Lock()
	defer wg.mu.Unlock()
	if wg.w != nil && wg.files {
		wg.report(wg.w.Set(watchNames, wg.s.matcherFiles(dir)...))
	}
}

// report tells the user what could not be watched (the error names it).
func (wg *watching) report(err error) {
	if err != nil {
		wg.s.notify(err.Error())
	}
}

// close stops the watcher, waiting for hooks it started.
func (wg *watching) close() {
	if wg == nil {
		return
	}
	wg.mu.Lock()
	w := wg.w
	wg.w = nil
	wg.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
}

// changed fires the events of one change (on the watcher's goroutine).
func (wg *watching) changed(ev watch.Event) {
	s := wg.s
	fileChanged := false
	for _, owner := range ev.Owners {
		switch owner {
		case watchSettings:
			wg.mu.Lock()
			source := wg.settings[ev.Path]
			wg.mu.Unlock()
			s.configChanged(source, ev.Path)
		case watchSkills:
			s.configChanged("skills", ev.Path)
		default:
			fileChanged = true
		}
	}
	if fileChanged && s.main.hooks.Has(hook.FileChanged) {
		s.fileChanged(ev)
	}
}

// fileChanged runs the FileChanged hooks of one change; the context they
// give joins the next request. What they say is shown last: once the user
// sees it, the context is on its way.
func (s *Session) fileChanged(ev watch.Event) {
	out := s.main.hooks.Run(s.ctx, &hook.FileChangedInput{Base: s.main.hookBase(), FilePath: ev.Path, Event: string(ev.Kind)})
	if len(out.AdditionalContext) > 0 {
		s.main.engine.Announce(hook.ContextText(string(hook.FileChanged), out.AdditionalContext))
	}
	s.watching.ask(out.WatchPaths)
	s.showHookMessages(out)
}

// configChanged runs the ConfigChange hooks of a changed settings file or
// skill, then reads the settings again unless a hook blocked.
func (s *Session) configChanged(source, path string) {
	out := s.main.hooks.Run(s.ctx, &hook.ConfigChangeInput{Base: s.main.hookBase(), Source: source, FilePath: path})
	s.showHookMessages(out)
	switch {
	case out.Block && source == "policy_settings":
		s.notify("ConfigChange: a hook blocked the change of " + path + ", but the managed settings always apply" + because(out.Reason))
	case out.Block:
		s.notify("ConfigChange: a hook blocked the change of " + path + "; the session keeps its settings" + because(out.Reason))
		return
	}
	if source == "skills" {
		return
	}
	if err := s.reloadSettings(); err != nil {
		s.notify("settings: " + err.Error() + "; the session keeps its settings")
		return
	}
	s.notify("settings: read " + path + " again")
	s.watching.refresh()
}

// cwdChanged fires CwdChanged after a command moved the main thread's
// shell; the FileChanged names move with it.
func (t *thread) cwdChanged(ctx context.Context, from, to string) {
	t.s.watching.moved(to)
	if !t.hooks.Has(hook.CwdChanged) {
		return
	}
	out := t.hooks.Run(ctx, &hook.CwdChangedInput{Base: t.lifecycleBase(), OldCwd: from, NewCwd: to})
	t.s.showHookMessages(out)
	t.s.watching.ask(out.WatchPaths)
}

// showHookMessages shows the user what the hooks of an event outside a
// turn said, and their failures.
func (s *Session) showHookMessages(out hook.Outcome) {
	for _, m := range append(out.SystemMessages, out.Errors...) {
		s.notify(m)
	}
}

// matcherFiles are the files the FileChanged matchers name, in dir.
func (s *Session) matcherFiles(dir string) []string {
	var out []string
	for _, name := range s.main.hooks.FileChangedNames() {
		out = append(out, filepath.Join(dir, name))
	}
	return out
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// because renders a hook's reason after a notice.
func because(reason string) string {
	if reason = strings.TrimSpace(reason); reason != "" {
		return ": " + reason
	}
	return ""
}
