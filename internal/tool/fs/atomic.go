package fs

import (
	"context"
	"os"
	"path/filepath"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/tool"
)

// newFileMode is the mode of files the tools create, before the umask.
const newFileMode = 0o644

// atomicWriter writes the tools' files through atomicfile, so that readers
// — and the file after a crash — see either the old or the new content,
// never a mix, and an interrupted write leaves no temporary file behind.
type atomicWriter struct {
	// beforeRename, when set, runs once the new content is complete and
	// before it replaces the original; tests use it to fail at the last
	// step.
	beforeRename func() error
}

// write replaces path with data. old is the existing file's info (nil for a
// new file): its permission and set-id bits, and its owner where the
// process may set it, carry over; a new file gets newFileMode less the
// umask, as an editor's would. A symlink is followed, so the link stays a
// link.
func (w atomicWriter) write(path string, data []byte, old os.FileInfo) error {
	o := atomicfile.Options{Mode: newFileMode, Umask: true, BeforeCommit: w.beforeRename}
	target := path
	if old != nil {
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			target = resolved
		}
		o.Mode = old.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid | os.ModeSticky)
		o.Umask, o.Owner = false, atomicfile.OwnerOf(old)
	}
	return atomicfile.WriteFile(target, data, o)
}

// save writes data to path, as write does, through the session's record of
// its own writes (so that its file watcher does not report the change),
// then records the file's new stamp, so that the model may edit it again
// without reading it back.
func (w atomicWriter) save(ctx context.Context, env *tool.Env, path string, data []byte, old os.FileInfo) error {
	write := func() error { return w.write(path, data, old) }
	if env.TextFiles != nil {
		write = func() error { return env.TextFiles.WriteTextFile(ctx, path, string(data)) }
	}
	if err := env.Writes.Do(path, write); err != nil {
		return err
	}
	if info, err := os.Stat(path); err == nil {
		env.Files.Record(path, info, false)
	}
	return nil
}

// loadText is the text of path, from env.TextFiles when the session has
// them, else from the disk.
func loadText(ctx context.Context, env *tool.Env, path string) ([]byte, error) {
	if env.TextFiles == nil {
		return os.ReadFile(path)
	}
	text, err := env.TextFiles.ReadTextFile(ctx, path)
	return []byte(text), err
}
