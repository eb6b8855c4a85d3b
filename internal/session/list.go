package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Info describes a stored session, for pickers, --continue and --resume.
type Info struct {
	ID   string
	Path string // the transcript; "" for a sidecar directory without one
	// Name is the custom title: what --resume NAME matches.
	Name string
	// Summary is what the Agent SDK's listing shows: the title, else the
	// last prompt, else a summary record, else the first prompt.
	Summary     string
	Cwd         string
	GitBranch   string
	Tag         string
	FirstPrompt string
	LastPrompt  string
	Created     time.Time
	Modified    time.Time
	Size        int64
	// Messages counts user and assistant records that are not meta. Files
	// over 128 KiB are read only at the head and tail, as the SDK does, and
	// the count is then estimated from them (MessagesEstimated).
	Messages          int
	MessagesEstimated bool
	// CostUSD and Model come from the launch record, when there is one.
	CostUSD float64
	Model   string
	// Hidden sessions are not listed: a sidechain first line, no summary,
	// or no transcript at all (Purge sees them).
	Hidden bool
}

// listWindow is how much of each end of a file the listing reads.
const listWindow = 64 << 10

// IsSessionID reports whether s is a session id (a UUID, any case).
func IsSessionID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// List returns the sessions of a project directory, newest first (ties by
// id), leaving out those the SDK hides.
func List(projectDir string) ([]Info, error) {
	all, err := scan(projectDir, true)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, in := range all {
		if !in.Hidden {
			out = append(out, in)
		}
	}
	return out, nil
}

type candidate struct {
	id   string
	path string
	info fs.FileInfo
}

// candidates are the project's transcripts, newest first.
func candidates(projectDir string) ([]candidate, error) {
	ents, err := os.ReadDir(projectDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []candidate
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !IsSessionID(id) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, candidate{id: id, path: filepath.Join(projectDir, e.Name()), info: fi})
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if c := b.info.ModTime().Compare(a.info.ModTime()); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out, nil
}

// scan reads the Info of every transcript, hidden ones included.
func scan(projectDir string, withWorkflow bool) ([]Info, error) {
	cands, err := candidates(projectDir)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(cands))
	for _, c := range cands {
		in, err := readInfo(projectDir, c, withWorkflow)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// Latest is the session --continue resumes: the most recently modified
// transcript of the project that is not empty, not a sidechain and has
// something to show.
func Latest(projectDir string) (Info, error) {
	cands, err := candidates(projectDir)
	if err != nil {
		return Info{}, err
	}
	for _, c := range cands {
		if c.info.Size() == 0 {
			continue
		}
		in, err := readInfo(projectDir, c, true)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return Info{}, err
		}
		if !in.Hidden {
			return in, nil
		}
	}
	return Info{}, fmt.Errorf("no session to continue in %s: %w", projectDir, ErrNotFound)
}

// Resolve finds the session --resume names: a session id, or else the most
// recent session whose custom title is idOrName.
func Resolve(projectDir, idOrName string) (Info, error) {
	if IsSessionID(idOrName) {
		path, fi, err := stored(projectDir, idOrName)
		if err != nil {
			return Info{}, err
		}
		return readInfo(projectDir, candidate{id: idOrName, path: path, info: fi}, true)
	}
	if idOrName == "" {
		return Info{}, fmt.Errorf("empty session name: %w", ErrNotFound)
	}
	all, err := List(projectDir)
	if err != nil {
		return Info{}, err
	}
	for _, in := range all {
		if in.Name == idOrName {
			return in, nil
		}
	}
	return Info{}, fmt.Errorf("no session named %q in %s: %w", idOrName, projectDir, ErrNotFound)
}

// ResolveID is Resolve's session id alone: a session id is checked to
// have a transcript, without reading it (a resume reads it whole next).
func ResolveID(projectDir, idOrName string) (string, error) {
	if IsSessionID(idOrName) {
		_, _, err := stored(projectDir, idOrName)
		return idOrName, err
	}
	in, err := Resolve(projectDir, idOrName)
	return in.ID, err
}

// stored is the transcript of session id, which must not be empty.
func stored(projectDir, id string) (string, os.FileInfo, error) {
	path := filepath.Join(projectDir, id+".jsonl")
	fi, err := os.Stat(path)
	if err != nil || fi.Size() == 0 {
		return "", nil, fmt.Errorf("session %s in %s: %w", id, projectDir, ErrNotFound)
	}
	return path, fi, nil
}

// readInfo derives a session's Info from the head and tail of its file.
func readInfo(projectDir string, c candidate, withWorkflow bool) (Info, error) {
	in := Info{ID: c.id, Path: c.path, Modified: c.info.ModTime(), Size: c.info.Size()}
	f, err := os.Open(c.path)
	if err != nil {
		return in, fmt.Errorf("read session %s: %w", c.id, err)
	}
	defer f.Close()
	size := c.info.Size()
	var head, tail []byte
	whole := size <= 2*listWindow
	if whole {
		head, err = io.ReadAll(io.LimitReader(f, 2*listWindow))
		tail = head
	} else {
		head = make([]byte, listWindow)
		tail = make([]byte, listWindow)
		if _, err = f.ReadAt(head, 0); err == nil {
			_, err = f.ReadAt(tail, size-listWindow)
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return in, fmt.Errorf("read session %s: %w", c.id, err)
	}
	if len(head) == 0 {
		in.Hidden = true
		return in, nil
	}
	first := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		first = head[:i]
	}
	sidechain := bytes.Contains(first, []byte(`"isSidechain":true`)) || bytes.Contains(first, []byte(`"isSidechain": true`))

	headLines := completeLines(head, !whole, false)
	tailLines := headLines
	if !whole {
		tailLines = completeLines(tail, false, true)
	}
	var h, t windowScan
	h.scan(headLines)
	if whole {
		t = h
	} else {
		t.scan(tailLines)
	}
	in.Name = t.customTitle
	if in.Name == "" {
		in.Name = readTitleSidecar(projectDir, c.id)
	}
	if in.Name == "" {
		in.Name = h.customTitle
	}
	in.FirstPrompt = h.firstPrompt
	if in.FirstPrompt == "" {
		in.FirstPrompt = h.commandFallback
	}
	in.LastPrompt = t.lastPrompt
	in.Tag = t.tag
	in.Cwd = h.firstCwd
	in.GitBranch = t.lastBranch
	if in.GitBranch == "" {
		in.GitBranch = h.firstBranch
	}
	if ts, err := time.Parse(time.RFC3339Nano, h.firstTimestamp); err == nil {
		in.Created = ts
	}
	for _, s := range []string{in.Name, h.aiTitleOr(t), in.LastPrompt, t.summary, in.FirstPrompt, h.media} {
		if s != "" {
			in.Summary = s
			break
		}
	}
	if whole {
		in.Messages = h.messages
	} else {
		// Estimate from the records per byte at both ends.
		read := h.bytes + t.bytes
		if read > 0 {
			in.Messages = int(float64(h.messages+t.messages) * float64(size) / float64(read))
		}
		in.MessagesEstimated = true
	}
	in.Hidden = sidechain || in.Summary == ""
	if withWorkflow {
		if l, err := loadLaunchFile(projectDir, c.id); err == nil {
			in.CostUSD, in.Model = l.CostUSD, l.Model
		}
		// A missing or broken launch record does not hide the session;
		// resuming it reports the error.
	}
	return in, nil
}

// completeLines splits a window into lines, dropping a line cut by the
// window's end (dropLast) or start (dropFirst).
func completeLines(b []byte, dropLast, dropFirst bool) [][]byte {
	if dropFirst {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			return nil
		}
	}
	if dropLast {
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		} else {
			return nil
		}
	}
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		var l []byte
		if i < 0 {
			l, b = b, nil
		} else {
			l, b = b[:i], b[i+1:]
		}
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// windowScan is what the listing takes from one end of a file.
type windowScan struct {
	customTitle, aiTitle, lastPrompt, summary, tag string
	firstPrompt, commandFallback, media            string
	firstCwd, firstBranch, lastBranch              string
	firstTimestamp                                 string
	messages, bytes                                int
}

func (w *windowScan) scan(lines [][]byte) {
	var d doc
	for _, raw := range lines {
		w.bytes += len(raw) + 1
		ln, ok := d.decodeLine(bytes.TrimSpace(raw))
		if !ok {
			continue
		}
		if w.firstTimestamp == "" {
			w.firstTimestamp = ln.timestamp
		}
		if w.firstCwd == "" {
			w.firstCwd = ln.cwd
		}
		if ln.gitBranch != "" {
			if w.firstBranch == "" {
				w.firstBranch = ln.gitBranch
			}
			w.lastBranch = ln.gitBranch
		}
		// The last value wins, even an empty one, as in the SDK's search.
		l := ln.label()
		if l.hasSummary {
			w.summary = l.summary
		}
		if l.hasLastPrompt {
			w.lastPrompt = l.lastPrompt
		}
		switch ln.typ {
		case TypeCustomTitle:
			if l.hasTitle {
				w.customTitle = l.customTitle
			}
		case TypeAITitle:
			if l.hasAITitle {
				w.aiTitle = l.aiTitle
			}
		case TypeTag:
			if l.hasTag {
				w.tag = l.tag
			}
		case TypeUser, TypeAssistant:
			if !ln.isMeta && !ln.sidechain {
				w.messages++
			}
			if ln.typ != TypeUser || w.firstPrompt != "" {
				continue
			}
			if p, fallback, ok := firstPromptOf(&ln); ok {
				w.firstPrompt = p
			} else {
				if fallback != "" && w.commandFallback == "" {
					w.commandFallback = fallback
				}
				if w.media == "" && !ln.isMeta && !isToolResultRecord(&node{line: &ln}) {
					w.media = mediaOf(&ln)
				}
			}
		}
	}
}

// aiTitleOr is the AI title from the tail, else from the head (w).
func (w *windowScan) aiTitleOr(tail windowScan) string {
	if tail.aiTitle != "" {
		return tail.aiTitle
	}
	return w.aiTitle
}

// mediaOf names a prompt made only of an image or a document.
func mediaOf(ln *line) string {
	for _, b := range ln.content {
		switch b.Type {
		case "image":
			return "Image"
		case "document":
			return "Document"
		}
	}
	return ""
}

// readTitleSidecar reads <projectDir>/<id>/custom-title.json, which the
// SDK consults when the transcript's tail has no title.
func readTitleSidecar(projectDir, id string) string {
	data, err := os.ReadFile(filepath.Join(projectDir, id, "custom-title.json"))
	if err != nil {
		return ""
	}
	var v struct {
		CustomTitle string `json:"customTitle"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	return v.CustomTitle
}

// SetName names session id: a custom-title record is appended to its
// transcript (the SDK's renameSession writes the same line) and the
// workflow record, if any, gets the name and resume arguments. A live
// session should use its Writer's SetTitle instead.
func SetName(projectDir, id, name string) error {
	if !IsSessionID(id) {
		return fmt.Errorf("rename session %q: not a session id", id)
	}
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("rename session %s: empty name", id)
	}
	path := filepath.Join(projectDir, id+".jsonl")
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return fmt.Errorf("rename session %s in %s: %w", id, projectDir, ErrNotFound)
	}
	if err := appendLine(path, metaLine(TypeCustomTitle, "customTitle", name, id)); err != nil {
		return fmt.Errorf("rename session %s: %w", id, err)
	}
	err := UpdateWorkflow(projectDir, id, func(w *Workflow) {
		w.Name, w.Resume = name, ResumeArgs(name)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rename session %s: %w", id, err)
	}
	return nil
}

// appendLine appends one whole line to a transcript, after repairing its
// last line.
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if err := repairTail(f); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// Delete removes session id: its transcript and its <id>/ sidecar directory.
func Delete(projectDir, id string) error {
	if !IsSessionID(id) {
		return fmt.Errorf("delete session %q: not a session id", id)
	}
	err := os.Remove(filepath.Join(projectDir, id+".jsonl"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if err := os.RemoveAll(filepath.Join(projectDir, id)); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// Purge deletes every session of projectDir that keep rejects (all of them
// when keep is nil), hidden ones and sidecar directories without a
// transcript included, and returns the ids it deleted.
func Purge(projectDir string, keep func(Info) bool) ([]string, error) {
	all, err := scan(projectDir, true)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, in := range all {
		seen[in.ID] = true
	}
	// Sidecar directories whose transcript was never written (a session
	// that sent nothing) or is gone.
	ents, err := os.ReadDir(projectDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("purge sessions: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() && IsSessionID(e.Name()) && !seen[e.Name()] {
			in := Info{ID: e.Name(), Hidden: true}
			if fi, err := e.Info(); err == nil {
				in.Modified = fi.ModTime()
			}
			if wf, err := LoadWorkflow(projectDir, in.ID); err == nil {
				in.Name, in.Cwd = wf.Title(in.ID), wf.Cwd
			}
			if l, err := loadLaunchFile(projectDir, in.ID); err == nil {
				in.CostUSD, in.Model = l.CostUSD, l.Model
			}
			all = append(all, in)
		}
	}
	var removed []string
	for _, in := range all {
		if keep != nil && keep(in) {
			continue
		}
		if err := Delete(projectDir, in.ID); err != nil {
			return removed, err
		}
		removed = append(removed, in.ID)
	}
	return removed, nil
}
