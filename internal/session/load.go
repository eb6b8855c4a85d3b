package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// Entry is one record of the conversation chain, in the order the Agent
// SDK's getSessionMessages returns them (system records included).
type Entry struct {
	// Type is user, assistant, system, attachment or progress.
	Type       string
	Subtype    string // system records: compact_boundary…
	UUID       string
	ParentUUID string // "" for null
	SessionID  string
	Timestamp  string
	// IsMeta marks user records sent to the model but hidden from listings.
	IsMeta bool
	// IsCompactSummary marks the summary that follows a compact boundary.
	IsCompactSummary bool
	// MessageID is an assistant record's API message id; the pieces of one
	// response share it.
	MessageID string
	Model     string
	// Message is the record's message (user and assistant records).
	Message llm.Message
	// Line is the 1-based line of the record in the file.
	Line int
}

// RawRecord is a line of a record type tack does not use, kept aside.
type RawRecord struct {
	Type string
	Line int
	JSON []byte
}

// Metadata is what a transcript says about its session.
type Metadata struct {
	// Name is the session's custom title (custom-title records, else the
	// custom-title.json sidecar): what --resume NAME matches.
	Name string
	// Tag is the last tag record's value.
	Tag string
	// FirstPrompt is the first prompt, as the SDK's listing derives it.
	FirstPrompt string
	// LastPrompt is the last last-prompt record, else the chain's last prompt.
	LastPrompt string
	Cwd        string
	GitBranch  string
	// Model is the model of the last assistant response, else the
	// workflow record's model.
	Model   string
	Created time.Time
	// CostUSD comes from the workflow record, when there is one.
	CostUSD float64
}

// Transcript is a loaded session: the conversation rebuilt from the
// parentUuid chain, ready to be sent to the model again.
type Transcript struct {
	Path      string
	SessionID string
	// Messages alternate user/assistant, start with a user message, and
	// answer every tool_use in the next message; tool calls that never got
	// a result are answered with an InterruptedResult error (not written to
	// the file). The last message may be a user message: a new prompt then
	// joins it. Cache breakpoints are removed.
	Messages []llm.Message
	// Leaf is the uuid the next record chains to ("" for an empty session):
	// NewWriter's parentUUID when resuming.
	Leaf string
	Meta Metadata
	// Unknown holds records of types tack does not know, in file order.
	Unknown []RawRecord
	// Skipped counts lines that are not JSON objects (torn or junk).
	Skipped int
	// Warnings are problems that did not stop the load (a bad sidecar).
	Warnings []error

	graph *graph
	chain []*node // the records behind Messages (see Chain)
}

// Chain returns the records behind Messages, in the order the SDK's
// getSessionMessages returns them (system records included). Its blocks
// share memory with Messages: treat both as read-only or copy. It is made
// anew on each call, from the decoded records: a resume needs Messages
// alone.
func (t *Transcript) Chain() []Entry {
	out := make([]Entry, len(t.chain))
	for i, n := range t.chain {
		out[i] = Entry{Type: n.typ, Subtype: n.subtype, UUID: n.uuid, ParentUUID: n.parent, SessionID: n.sessionID,
			Timestamp: n.timestamp, IsMeta: n.isMeta, IsCompactSummary: n.compact, MessageID: n.msgID, Model: n.model,
			Message: llm.Message{Role: n.role, Content: n.content}, Line: n.lineNo}
	}
	return out
}

// InterruptedResult is the content of the error result given to a tool call
// that has no result in the transcript.
const InterruptedResult = "interrupted: not run"

// ErrNotFound is returned when a session or message does not exist.
var ErrNotFound = errors.New("not found")

// Load reads the transcript at path. It never fails on content: lines that
// are not JSON objects are skipped, unknown record types are kept aside.
func Load(path string) (*Transcript, error) {
	return load(path, false)
}

// LoadSession loads the transcript of session id in projectDir.
func LoadSession(projectDir, id string) (*Transcript, error) {
	return Load(filepath.Join(projectDir, id+".jsonl"))
}

func load(path string, keepRaw bool) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load transcript: %w", err)
	}
	defer f.Close()
	t, err := loadFrom(f, path, keepRaw)
	if err != nil {
		return nil, err
	}
	if t.Meta.Name == "" {
		t.Meta.Name = readTitleSidecar(filepath.Dir(path), t.SessionID)
	}
	if l, err := loadLaunchFile(filepath.Dir(path), t.SessionID); err == nil {
		t.Meta.CostUSD = l.CostUSD
		if t.Meta.Model == "" {
			t.Meta.Model = l.Model
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Warnings = append(t.Warnings, err)
	}
	return t, nil
}

// loadFrom reads a transcript from rd; path names it.
func loadFrom(rd io.Reader, path string, keepRaw bool) (*Transcript, error) {
	t := &Transcript{Path: path, SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	g := newGraph()
	var meta metaScan
	err := decodeBatches(rd, batchSink{size: sizeOf(rd), sized: g.reserve, reuse: !keepRaw, take: func(b *batch) {
		for i := range b.lines {
			t.add(g, &meta, &b.lines[i], keepRaw)
		}
	}})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	t.graph = g
	t.Meta = meta.result()
	t.build(g.leaf())
	return t, nil
}

// sizeOf is the length of what rd reads, when it says; else 0.
func sizeOf(rd io.Reader) int64 {
	switch r := rd.(type) {
	case *os.File:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	case interface{ Size() int64 }:
		return r.Size()
	}
	return 0
}

// add takes one decoded line into the transcript.
func (t *Transcript) add(g *graph, meta *metaScan, dl *decodedLine, keepRaw bool) {
	if !dl.ok {
		t.Skipped++
		return
	}
	ln := &dl.line
	meta.add(ln)
	switch ln.typ {
	case TypeUser, TypeAssistant, TypeSystem, TypeAttachment, TypeProgress:
		if ln.hasUUID {
			n := &node{line: ln, lineNo: dl.lineNo}
			if keepRaw {
				n.raw = dl.raw // the batch buffer is never reused
			}
			g.add(n)
		}
	case TypeLastPrompt, TypeCustomTitle, TypeAITitle, TypeTag, TypeSummary:
	default:
		// Copied: a reference would keep the whole batch buffer alive.
		t.Unknown = append(t.Unknown, RawRecord{Type: ln.typ, Line: dl.lineNo, JSON: append([]byte(nil), dl.raw...)})
	}
}

func trimLine(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// At returns the conversation up to and including the message with the given
// uuid (--resume-session-at). A uuid on another branch of the file resumes
// that branch.
func (t *Transcript) At(uuid string) (*Transcript, error) {
	g := t.graph
	if g == nil || g.byUUID[uuid] == nil {
		return nil, fmt.Errorf("message %s in %s: %w", uuid, t.Path, ErrNotFound)
	}
	out := *t
	out.chain, out.Messages, out.Leaf = nil, nil, ""
	if i := slices.IndexFunc(t.chain, func(n *node) bool { return n.uuid == uuid }); i >= 0 {
		out.setChain(g, t.chain[:i+1:i+1])
		out.Leaf = uuid
		return &out, nil
	}
	out.build(g.byUUID[uuid])
	return &out, nil
}

// build sets the chain ending at leaf (nil: the file's latest leaf).
func (t *Transcript) build(leaf *node) {
	if leaf == nil {
		return
	}
	t.Leaf = leaf.uuid
	t.setChain(t.graph, t.graph.chain(leaf))
}

func (t *Transcript) setChain(g *graph, nodes []*node) {
	t.chain = nodes
	t.Messages = conversation(nodes)
	if t.Meta.LastPrompt == "" {
		for i := len(nodes) - 1; i >= 0; i-- {
			if p, ok := promptOf(nodes[i].line); ok {
				t.Meta.LastPrompt = p
				break
			}
		}
	}
}

// metaScan gathers metadata over every line of a file.
type metaScan struct {
	name, aiTitle, tag, lastPrompt, firstPrompt string
	commandFallback                             string
	cwd, gitBranch, model, created              string
	haveFirst                                   bool
}

func (m *metaScan) add(ln *line) {
	if m.created == "" && ln.timestamp != "" {
		m.created = ln.timestamp
	}
	if m.cwd == "" && ln.cwd != "" {
		m.cwd = ln.cwd
	}
	if ln.gitBranch != "" {
		m.gitBranch = ln.gitBranch
	}
	switch ln.typ {
	case TypeCustomTitle:
		if l := ln.label(); l.customTitle != "" {
			m.name = l.customTitle
		}
	case TypeAITitle:
		if l := ln.label(); l.aiTitle != "" {
			m.aiTitle = l.aiTitle
		}
	case TypeTag:
		if l := ln.label(); l.hasTag {
			m.tag = l.tag
		}
	case TypeLastPrompt:
		if l := ln.label(); l.lastPrompt != "" {
			m.lastPrompt = l.lastPrompt
		}
	case TypeAssistant:
		if ln.model != "" && ln.model != "<synthetic>" && !ln.sidechain {
			m.model = ln.model
		}
	case TypeUser:
		if !m.haveFirst {
			if p, fallback, ok := firstPromptOf(ln); ok {
				m.firstPrompt, m.haveFirst = p, true
			} else if fallback != "" && m.commandFallback == "" {
				m.commandFallback = fallback
			}
		}
	}
}

func (m *metaScan) result() Metadata {
	md := Metadata{Name: m.name, Tag: m.tag, FirstPrompt: m.firstPrompt, LastPrompt: m.lastPrompt,
		Cwd: m.cwd, GitBranch: m.gitBranch, Model: m.model}
	if md.FirstPrompt == "" {
		md.FirstPrompt = m.commandFallback
	}
	if ts, err := time.Parse(time.RFC3339Nano, m.created); err == nil {
		md.Created = ts
	}
	return md
}
