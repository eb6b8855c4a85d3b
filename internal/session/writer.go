package session

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/protocol"
)

// Meta is what every record of a session repeats.
type Meta struct {
	SessionID string
	Cwd       string
	Version   string
	GitBranch string
	// Entrypoint is "cli", or sdk-ts / sdk-py / sdk-cli when an SDK drives tack.
	Entrypoint string
	// Sidechain marks a subagent's transcript.
	Sidechain bool
}

// Writer appends a session's records to its JSONL file. The file is created
// on the first record. Each record is written whole with one write call, so
// a crash leaves at most one torn last line, which readers skip.
type Writer struct {
	path string
	meta Meta
	now  func() time.Time

	mu       sync.Mutex
	f        *os.File
	lastUUID string
	buf      bytes.Buffer
}

// NewWriter returns a writer for the transcript at path. parentUUID is the
// uuid of the record the next one follows ("" for a new session).
func NewWriter(path string, meta Meta, parentUUID string) *Writer {
	return &Writer{path: path, meta: meta, lastUUID: parentUUID, now: time.Now}
}

// Path is the transcript file.
func (w *Writer) Path() string { return w.path }

// record is one transcript line for a user or assistant message.
type record struct {
	ParentUUID    *string `json:"parentUuid"`
	IsSidechain   bool    `json:"isSidechain"`
	UserType      string  `json:"userType"`
	Cwd           string  `json:"cwd"`
	SessionID     string  `json:"sessionId"`
	Version       string  `json:"version"`
	GitBranch     string  `json:"gitBranch,omitempty"`
	Entrypoint    string  `json:"entrypoint,omitempty"`
	Type          string  `json:"type"`
	Message       any     `json:"message"`
	UUID          string  `json:"uuid"`
	Timestamp     string  `json:"timestamp"`
	RequestID     string  `json:"requestId,omitempty"`
	ToolUseResult any     `json:"toolUseResult,omitempty"`
}

// Record appends m if it is a conversation message (user or assistant).
func (w *Writer) Record(m protocol.Message) error {
	rec := record{IsSidechain: w.meta.Sidechain, UserType: "external", Cwd: w.meta.Cwd, SessionID: w.meta.SessionID,
		Version: w.meta.Version, GitBranch: w.meta.GitBranch, Entrypoint: w.meta.Entrypoint,
		Timestamp: w.now().UTC().Format("2006-01-02T15:04:05.000Z")}
	switch m := m.(type) {
	case *protocol.User:
		rec.Type, rec.UUID, rec.ToolUseResult = "user", m.UUID, m.ToolUseResult
		rec.Message = userMessage{Role: m.Message.Role, Content: m.Message.Content}
	case *protocol.Assistant:
		rec.Type, rec.UUID, rec.Message, rec.RequestID = "assistant", m.UUID, m.Message, m.RequestID
	default:
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastUUID != "" {
		parent := w.lastUUID
		rec.ParentUUID = &parent
	}
	line, err := jsonx.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode transcript record: %w", err)
	}
	if err := w.open(); err != nil {
		return err
	}
	w.buf.Reset()
	w.buf.Write(line)
	w.buf.WriteByte('\n')
	if _, err := w.f.Write(w.buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	w.lastUUID = rec.UUID
	return nil
}

// userMessage keeps a user message's content as written (a block list).
type userMessage struct {
	Role    llm.Role    `json:"role"`
	Content []llm.Block `json:"content"`
}

// open creates or opens the file for appending, first ending a torn last
// line so the next record starts on a line of its own.
func (w *Writer) open() error {
	if w.f != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
		return fmt.Errorf("create transcript directory: %w", err)
	}
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open transcript: %w", err)
	}
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err != nil && err != io.EOF {
			f.Close()
			return fmt.Errorf("read %s: %w", w.path, err)
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return fmt.Errorf("write %s: %w", w.path, err)
			}
		}
	}
	w.f = f
	return nil
}

// Sync flushes the file to disk.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	return nil
}

// Close syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}
