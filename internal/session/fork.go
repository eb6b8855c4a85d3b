package session

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/atomicfile"
	"github.com/tackcode/tack/internal/jsonx"
)

// Fork copies the conversation of session srcID (up to atUUID when it is not
// "") into a new session newID of the same project, as --fork-session and
// the SDK's forkSession do: the records get new uuids chained one after the
// other, the new session id and forkedFrom {sessionId, messageUuid}. A named
// source gives the fork the title "<name> (fork)". The workflow record and
// request prefix are copied under the new id. It returns the fork, loaded.
func Fork(projectDir, srcID, newID, atUUID string) (*Transcript, error) {
	if !IsSessionID(srcID) || !IsSessionID(newID) {
		return nil, fmt.Errorf("fork session %q as %q: not a session id", srcID, newID)
	}
	if srcID == newID {
		return nil, fmt.Errorf("fork session %s: the fork needs a new id", srcID)
	}
	src, err := load(filepath.Join(projectDir, srcID+".jsonl"), true)
	if err != nil {
		return nil, fmt.Errorf("fork session %s: %w", srcID, err)
	}
	if atUUID != "" {
		if src, err = src.At(atUUID); err != nil {
			return nil, fmt.Errorf("fork session %s: %w", srcID, err)
		}
	}
	var out []byte
	prev := ""
	for _, n := range src.chain {
		if n.sidechain {
			continue
		}
		id := uuid.NewString()
		sets := []field{
			{"uuid", jsonx.AppendString(nil, id)},
			{"parentUuid", []byte("null")},
			{"sessionId", jsonx.AppendString(nil, newID)},
			{"forkedFrom", forkedFrom(srcID, n.uuid)},
		}
		if prev != "" {
			sets[1].value = jsonx.AppendString(nil, prev)
		}
		out = append(rewriteObject(out, n.raw, sets), '\n')
		prev = id
	}
	title := ""
	if src.Meta.Name != "" {
		title = src.Meta.Name + " (fork)"
		out = append(out, metaLine(TypeCustomTitle, "customTitle", title, newID)...)
	}
	if src.Meta.LastPrompt != "" {
		out = append(out, metaLine(TypeLastPrompt, "lastPrompt", src.Meta.LastPrompt, newID)...)
	}
	dst := filepath.Join(projectDir, newID+".jsonl")
	if err := writeNew(dst, out); err != nil {
		return nil, fmt.Errorf("fork session %s: %w", srcID, err)
	}
	if err := forkRecords(projectDir, srcID, newID, title); err != nil {
		return nil, fmt.Errorf("fork session %s: %w", srcID, err)
	}
	if p, err := LoadPrefix(projectDir, srcID); err == nil {
		if err := SavePrefix(projectDir, newID, *p); err != nil {
			return nil, fmt.Errorf("fork session %s: %w", srcID, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("fork session %s: %w", srcID, err)
	}
	return Load(dst)
}

// forkRecords copies the workflow and launch records of srcID to newID: the
// fork has its own name (title, or its id when the source had none) and
// resume arguments, and its own creation time. A record that does not load
// is not copied: the session that resumes the fork reports it, and writes
// the fork's own after its first prompt.
func forkRecords(projectDir, srcID, newID, title string) error {
	if wf, err := LoadWorkflow(projectDir, srcID); err == nil {
		wf.Name, wf.Resume = title, nil
		if err := SaveWorkflow(projectDir, newID, *wf); err != nil {
			return err
		}
	}
	if l, err := LoadLaunch(projectDir, srcID); err == nil {
		l.CreatedAt = time.Time{}
		return SaveLaunch(projectDir, newID, *l)
	}
	return nil
}

func forkedFrom(sessionID, messageUUID string) []byte {
	b := append([]byte(nil), `{"sessionId":`...)
	b = jsonx.AppendString(b, sessionID)
	b = append(b, `,"messageUuid":`...)
	b = jsonx.AppendString(b, messageUUID)
	return append(b, '}')
}

// writeNew writes a file that must not exist yet, whole or not at all.
func writeNew(path string, data []byte) error {
	return atomicfile.WriteFile(path, data, atomicfile.Options{Mode: 0o600, Exclusive: true})
}

// field is a member to set in a JSON object.
type field struct {
	key   string
	value []byte // JSON
}

// rewriteObject appends obj to dst with the given members replaced (or
// added at the end), keeping every other member and the order as they are.
func rewriteObject(dst, obj []byte, sets []field) []byte {
	var d doc
	if d.parse(obj) != nil || d.root().kind != kindObject {
		return dst
	}
	done := make([]bool, len(sets))
	dst = append(dst, '{')
	first := true
	d.members(0, func(k, v int) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		key := d.tape[k]
		dst = append(dst, key.raw(obj)...)
		dst = append(dst, ':')
		for i, s := range sets {
			// A repeated key gets the new value each time: JSON.parse keeps
			// the last.
			if key.is(obj, s.key) {
				done[i] = true
				dst = append(dst, s.value...)
				return
			}
		}
		dst = append(dst, d.tape[v].raw(obj)...)
	})
	for i, s := range sets {
		if done[i] {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = jsonx.AppendString(dst, s.key)
		dst = append(dst, ':')
		dst = append(dst, s.value...)
	}
	return append(dst, '}')
}
