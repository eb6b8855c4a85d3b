package session

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

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
// on the first record. Each record is one whole line written with one write
// call, so a crash leaves at most one torn last line, which readers skip and
// the next Writer cuts off before appending.
type Writer struct {
	path string
	meta Meta
	now  func() time.Time

	mu       sync.Mutex
	f        *os.File
	lastUUID string
	buf      bytes.Buffer
	// prompt is the last prompt recorded; written as a last-prompt record
	// at the next Sync when it differs from written.
	prompt, written string
	// unsynced says lines were written since the last sync: a Close right
	// after a Sync (the end of a prompt, then of the session) syncs once.
	unsynced bool
	// mirror receives the lines of each successful write (SetMirror).
	mirror func(path string, lines [][]byte)
}

// NewWriter returns a writer for the transcript at path. parentUUID is the
// uuid of the record the next one follows ("" for a new session; a loaded
// Transcript's Leaf when resuming).
func NewWriter(path string, meta Meta, parentUUID string) *Writer {
	return &Writer{path: path, meta: meta, lastUUID: parentUUID, now: time.Now}
}

// SetMirror makes every successful write hand its lines (each one JSON
// record, without its newline, in file order) to fn, with the file's path,
// before the write returns: a host keeping a copy of the transcript gets
// exactly what the file got, and only once the file has it. fn runs with
// the writer locked and must not write to w. Call it before the first
// record.
func (w *Writer) SetMirror(fn func(path string, lines [][]byte)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.mirror = fn
}

// Path is the transcript file.
func (w *Writer) Path() string { return w.path }

// Leaf is the uuid the next record will chain to.
func (w *Writer) Leaf() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastUUID
}

// record is one transcript line for a user or assistant message.
type record struct {
	ParentUUID                *string    `json:"parentUuid"`
	IsSidechain               bool       `json:"isSidechain"`
	PromptID                  string     `json:"promptId,omitempty"`
	UserType                  string     `json:"userType"`
	Cwd                       string     `json:"cwd"`
	SessionID                 string     `json:"sessionId"`
	Version                   string     `json:"version"`
	GitBranch                 string     `json:"gitBranch,omitempty"`
	Entrypoint                string     `json:"entrypoint,omitempty"`
	Type                      string     `json:"type"`
	Message                   any        `json:"message"`
	IsMeta                    bool       `json:"isMeta,omitempty"`
	IsCompactSummary          bool       `json:"isCompactSummary,omitempty"`
	IsVisibleInTranscriptOnly bool       `json:"isVisibleInTranscriptOnly,omitempty"`
	UUID                      string     `json:"uuid"`
	Timestamp                 string     `json:"timestamp"`
	RequestID                 string     `json:"requestId,omitempty"`
	ToolUseResult             any        `json:"toolUseResult,omitempty"`
	ForkedFrom                *forkedRef `json:"forkedFrom,omitempty"`
}

type forkedRef struct {
	SessionID   string `json:"sessionId"`
	MessageUUID string `json:"messageUuid"`
}

// boundary is a system/compact_boundary record. type and subtype come first:
// the SDK finds the boundaries of large files by looking for
// "compact_boundary" in the first 256 bytes of a line.
type boundary struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID *string         `json:"logicalParentUuid"`
	IsSidechain       bool            `json:"isSidechain"`
	UserType          string          `json:"userType"`
	Cwd               string          `json:"cwd"`
	SessionID         string          `json:"sessionId"`
	Version           string          `json:"version"`
	GitBranch         string          `json:"gitBranch,omitempty"`
	Entrypoint        string          `json:"entrypoint,omitempty"`
	Content           string          `json:"content"`
	IsMeta            bool            `json:"isMeta"`
	Level             string          `json:"level"`
	CompactMetadata   CompactMetadata `json:"compactMetadata"`
	UUID              string          `json:"uuid"`
	Timestamp         string          `json:"timestamp"`
}

// CompactMetadata describes a compaction.
type CompactMetadata struct {
	// Trigger is "manual" (/compact) or "auto".
	Trigger string `json:"trigger"`
	// PreTokens is the context size before compaction.
	PreTokens int64 `json:"preTokens"`
}

func (w *Writer) base(typ, id string) record {
	return record{IsSidechain: w.meta.Sidechain, UserType: "external", Cwd: w.meta.Cwd, SessionID: w.meta.SessionID,
		Version: w.meta.Version, GitBranch: w.meta.GitBranch, Entrypoint: w.meta.Entrypoint, Type: typ, UUID: id,
		Timestamp: w.timestamp()}
}

func (w *Writer) timestamp() string { return w.now().UTC().Format("2006-01-02T15:04:05.000Z") }

// Record appends m if it is a conversation message (user or assistant).
func (w *Writer) Record(m protocol.Message) error {
	var rec record
	switch m := m.(type) {
	case *protocol.User:
		rec = w.base(TypeUser, m.UUID)
		rec.ToolUseResult, rec.PromptID = m.ToolUseResult, m.PromptID
		rec.Message = userMessage{Role: m.Message.Role, Content: m.Message.Content}
	case *protocol.Assistant:
		rec = w.base(TypeAssistant, m.UUID)
		rec.Message, rec.RequestID = m.Message, m.RequestID
	default:
		return nil
	}
	return w.appendRecord(&rec)
}

// RecordMeta appends a user message marked isMeta: sent to the model on
// resume, hidden from listings and from the SDK's getSessionMessages
// (skill bodies, caveats, hook feedback). id "" gets a new uuid.
func (w *Writer) RecordMeta(id string, m llm.Message) error {
	if id == "" {
		id = uuid.NewString()
	}
	rec := w.base(TypeUser, id)
	rec.Message = userMessage{Role: llm.RoleUser, Content: m.Content}
	rec.IsMeta = true
	return w.appendRecord(&rec)
}

// WriteCompactBoundary records a compaction: a system/compact_boundary
// record with a null parentUuid, which starts a new chain (readers, the SDK
// included, return only what follows it), then a user record holding
// summary, marked isCompactSummary, that the next records follow.
func (w *Writer) WriteCompactBoundary(summary string, md CompactMetadata) error {
	return w.compaction(md, uuid.NewString(), []llm.Block{llm.Text(summary)})
}

// RecordCompaction is WriteCompactBoundary for the engine
// (engine.CompactRecorder): first, the opening message of the compacted
// history (the summary, with re-read memory), becomes the summary record.
func (w *Writer) RecordCompaction(trigger string, preTokens int, first protocol.Message) error {
	u, ok := first.(*protocol.User)
	if !ok {
		return fmt.Errorf("record compaction in %s: the new history opens with %T, not a user message", w.path, first)
	}
	id := u.UUID
	if id == "" {
		id = uuid.NewString()
	}
	return w.compaction(CompactMetadata{Trigger: trigger, PreTokens: int64(preTokens)}, id, u.Message.Content)
}

func (w *Writer) compaction(md CompactMetadata, summaryID string, summary []llm.Block) error {
	if md.Trigger == "" {
		md.Trigger = "manual"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	b := boundary{Type: TypeSystem, Subtype: "compact_boundary", IsSidechain: w.meta.Sidechain, UserType: "external",
		Cwd: w.meta.Cwd, SessionID: w.meta.SessionID, Version: w.meta.Version, GitBranch: w.meta.GitBranch,
		Entrypoint: w.meta.Entrypoint, Content: "Conversation compacted", Level: "info", CompactMetadata: md,
		UUID: uuid.NewString(), Timestamp: w.timestamp()}
	if w.lastUUID != "" {
		logical := w.lastUUID
		b.LogicalParentUUID = &logical
	}
	bline, err := jsonx.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode compact boundary: %w", err)
	}
	sum := w.base(TypeUser, summaryID)
	parent := b.UUID
	sum.ParentUUID = &parent
	sum.Message = userMessage{Role: llm.RoleUser, Content: summary}
	sum.IsCompactSummary, sum.IsVisibleInTranscriptOnly = true, true
	sline, err := jsonx.Marshal(sum)
	if err != nil {
		return fmt.Errorf("encode compact summary: %w", err)
	}
	// Both lines in one write: a boundary without its summary would start
	// an empty chain.
	w.buf.Reset()
	w.buf.Write(bline)
	w.buf.WriteByte('\n')
	w.buf.Write(sline)
	w.buf.WriteByte('\n')
	if err := w.write(w.buf.Bytes()); err != nil {
		return err
	}
	w.lastUUID = sum.UUID
	return nil
}

// SetTitle appends a custom-title record: the session's name, which
// --resume NAME and the SDK's listing use. The last one wins.
func (w *Writer) SetTitle(title string) error {
	if title == "" {
		return fmt.Errorf("set title of %s: empty title", w.path)
	}
	line := metaLine(TypeCustomTitle, "customTitle", title, w.meta.SessionID)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.write(line)
}

// SetPrompt sets the prompt the next Sync writes as the last-prompt record,
// when the surface knows it better than the recorded messages tell.
func (w *Writer) SetPrompt(prompt string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prompt = prompt
}

// metaLine encodes {"type":typ,key:value,"sessionId":id} and a newline.
func metaLine(typ, key, value, sessionID string) []byte {
	var b []byte
	b = append(b, `{"type":`...)
	b = jsonx.AppendString(b, typ)
	b = append(b, ',')
	b = jsonx.AppendString(b, key)
	b = append(b, ':')
	b = jsonx.AppendString(b, value)
	b = append(b, `,"sessionId":`...)
	b = jsonx.AppendString(b, sessionID)
	return append(b, "}\n"...)
}

func (w *Writer) appendRecord(rec *record) error {
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
	w.buf.Reset()
	w.buf.Write(line)
	w.buf.WriteByte('\n')
	if err := w.write(w.buf.Bytes()); err != nil {
		return err
	}
	w.lastUUID = rec.UUID
	if rec.Type == TypeUser && !rec.IsMeta && !rec.IsCompactSummary && !w.meta.Sidechain {
		if um, ok := rec.Message.(userMessage); ok {
			if p, ok := promptText(um.Content); ok {
				w.prompt = p
			}
		}
	}
	return nil
}

// write appends whole lines with one write call. Callers hold mu.
func (w *Writer) write(lines []byte) error {
	if err := w.open(); err != nil {
		return err
	}
	w.unsynced = true
	if _, err := w.f.Write(lines); err != nil {
		return fmt.Errorf("write %s: %w", w.path, err)
	}
	if w.mirror != nil {
		w.mirror(w.path, SplitLines(bytes.Clone(lines)))
	}
	return nil
}

// SplitLines cuts whole JSONL text into its non-empty lines, without their
// newlines; the lines share b's memory.
func SplitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		if len(line) > 0 {
			out = append(out, line)
		}
		b = rest
	}
	return out
}

// userMessage keeps a user message's content as written (a block list).
type userMessage struct {
	Role    llm.Role    `json:"role"`
	Content []llm.Block `json:"content"`
}

// open creates or opens the file for appending, first repairing its last
// line so that no fragment ends up inside the chain.
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
	if err := repairTail(f); err != nil {
		f.Close()
		return err
	}
	w.f = f
	return nil
}

// repairTail makes f end with a newline before anything is appended. What
// follows the last newline is either a whole record written without one
// (kept: a newline is added) or a line torn by a crash (cut off), so a
// fragment never swallows the next record.
func repairTail(f *os.File) error {
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	size := info.Size()
	if size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if last[0] == '\n' {
		return nil
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	end := int64(0) // where the last line starts
	for hi := size; hi > 0; {
		lo := max(hi-chunk, 0)
		n, err := f.ReadAt(buf[:hi-lo], lo)
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s: %w", f.Name(), err)
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = lo + int64(i) + 1
			break
		}
		hi = lo
	}
	frag := make([]byte, size-end)
	if _, err := f.ReadAt(frag, end); err != nil && err != io.EOF {
		return fmt.Errorf("read %s: %w", f.Name(), err)
	}
	if v, err := scanLine(bytes.TrimSpace(frag)); err == nil && v.kind == kindObject {
		if _, err := f.Write([]byte("\n")); err != nil {
			return fmt.Errorf("end last line of %s: %w", f.Name(), err)
		}
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("cut torn line of %s: %w", f.Name(), err)
	}
	return nil
}

// flushPrompt writes the pending last-prompt record. Callers hold mu.
func (w *Writer) flushPrompt() error {
	if w.prompt == "" || w.prompt == w.written || w.f == nil || w.meta.Sidechain {
		return nil
	}
	if err := w.write(metaLine(TypeLastPrompt, "lastPrompt", w.prompt, w.meta.SessionID)); err != nil {
		return err
	}
	w.written = w.prompt
	return nil
}

// Flush writes the last-prompt record if the prompt changed, without
// waiting for the disk.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	return w.flushPrompt()
}

// Sync ends a turn: it writes the last-prompt record if the prompt changed,
// then flushes the file to disk.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	if err := w.flushPrompt(); err != nil {
		return err
	}
	return w.sync()
}

// sync flushes the file to disk if lines were written since the last
// sync. Callers hold mu.
func (w *Writer) sync() error {
	if !w.unsynced {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.path, err)
	}
	w.unsynced = false
	return nil
}

// Close writes a pending last-prompt record, syncs and closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.flushPrompt()
	if serr := w.sync(); err == nil {
		err = serr
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}
