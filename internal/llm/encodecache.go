package llm

import (
	"bytes"
	"fmt"
	"sort"
	"sync"
)

// EncodeCache keeps the JSON of the messages one request sent, so that the
// next request of the same conversation encodes only what is new, and sends
// the bytes of the rest where they already lie: a request's body is a list
// of segments (see EncodedBody), so a session of a thousand turns pays per
// request for one turn's bytes — no encoding, no copy and no allocation of
// the whole history.
//
// A message is recognised by its position, its role and its content slice
// (the address of its first block and its length). That is sound because a
// conversation's history is never modified in place: a message that changes
// (a breakpoint put on it, a block appended) gets a new or longer content
// slice, so it misses the cache and is encoded afresh; a history cut by
// compaction moves every message, so none matches. The cache holds those
// addresses, so the memory they point to cannot be reused for another
// message while the cache can still match it. Checking every message is
// still a walk of the whole history per request; a request that extends the
// previous one's array (Request.Extends) skips it, and looks only at the
// messages that can have changed.
//
// Each message's bytes (with the comma that precedes it, for all but the
// first) lie in the buffer of the request that encoded it; a buffer is never
// written again once its request is built, so bodies share them freely.
// Messages encoded by one request lie side by side, so a body is a few runs
// rather than one segment per message; when the runs grow past maxRuns (a
// long session gathers one per turn), the next request copies all its
// messages into its own buffer once, and later ones reference that. It is
// safe for concurrent use.
type EncodeCache struct {
	mu   sync.Mutex
	keys []messageKey // the latest request's messages, in order
	enc  [][]byte     // their bytes, in the buffers that hold them
	// spans are the same bytes as the runs of memory they lie in, in
	// order: span j holds messages [spans[j-1].end, spans[j].end). A
	// request that extends the latest one (Request.Extends) takes the
	// runs before its first changed message whole, without a look at the
	// messages they hold.
	spans []span
	// base is the first element of the latest request's messages array
	// (which it keeps from being reused for another), and marked the
	// positions of the messages in it that carried a cache breakpoint.
	base   *Message
	marked []int
	runs   int // how many runs of reused bytes the latest body had
	// specs and tools are the latest request's tools array and its bytes:
	// a session offers the same tools request after request, and the
	// array (the tools' descriptions and schemas) is as large as a long
	// turn.
	specs []ToolSpec
	tools []byte
}

// span is a run of consecutive messages' bytes, side by side in memory.
type span struct {
	end int // one past its last message
	b   []byte
}

// encodeTools writes the tools array, reusing the previous request's bytes
// when it offered the same tools. c may be nil. The caller holds c.mu.
func (c *EncodeCache) encodeTools(w *bodyWriter, tools []ToolSpec) {
	if c != nil && c.tools != nil && SameToolSpecs(c.specs, tools) {
		w.reuse(c.tools)
		return
	}
	start := w.buf.Len()
	w.buf.WriteByte('[')
	for i, t := range tools {
		if i > 0 {
			w.buf.WriteByte(',')
		}
		t.encode(&w.buf)
	}
	w.buf.WriteByte(']')
	if c != nil {
		c.specs, c.tools = append(c.specs[:0], tools...), nil
		w.toolsAt = [2]int{start, w.buf.Len()}
	}
}

// SameToolSpecs reports whether two tools arrays encode alike. Their
// strings and schemas are the same memory from request to request, which
// the comparisons find first.
func SameToolSpecs(a, b []ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.Description != y.Description || x.DeferLoading != y.DeferLoading ||
			!bytes.Equal(x.InputSchema, y.InputSchema) || !bytes.Equal(x.Raw, y.Raw) ||
			(x.CacheControl == nil) != (y.CacheControl == nil) || (x.CacheControl != nil && *x.CacheControl != *y.CacheControl) {
			return false
		}
	}
	return true
}

// maxRuns bounds the runs of reused bytes in a body: a copy of the whole
// history every maxRuns requests or so costs less per request than the
// segments it saves carrying.
const maxRuns = 64

type messageKey struct {
	role  Role
	first *Block
	n     int
}

func keyOf(m *Message) (messageKey, bool) {
	if len(m.Content) == 0 {
		return messageKey{}, false
	}
	return messageKey{role: m.Role, first: &m.Content[0], n: len(m.Content)}, true
}

// encodeMessages writes the messages array's elements, reusing the bytes of
// messages the previous request sent at the same place. c may be nil: then
// every message is encoded. With extends (see Request.Extends), and msgs
// in the previous request's array, the messages before the first that may
// have changed go as the spans that hold them, unread. The caller holds
// c.mu and calls c.done with the finished body's buffer.
func (c *EncodeCache) encodeMessages(w *bodyWriter, msgs []Message, extends bool) error {
	if c == nil {
		for i := range msgs {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := msgs[i].encode(&w.buf); err != nil {
				return fmt.Errorf("message %d %w", i, err)
			}
		}
		return nil
	}
	prev := len(c.keys)
	copyAll := c.runs > maxRuns
	from := 0
	if extends && !copyAll && prev > 0 && len(msgs) > 0 && &msgs[0] == c.base {
		from = min(prev, len(msgs)) - 1
		for _, p := range c.marked {
			from = min(from, p)
		}
		c.cutSpans(from)
		for _, sp := range c.spans {
			w.reuse(sp.b)
		}
	} else {
		c.spans = c.spans[:0]
	}
	c.keys = grow(c.keys, len(msgs))
	c.enc = grow(c.enc, len(msgs))
	c.base, c.marked = nil, c.marked[:0]
	w.fresh, w.from = w.fresh[:0], from
	for i := from; i < len(msgs); i++ {
		m := &msgs[i]
		if m.hasBreakpoint() {
			c.marked = append(c.marked, i)
		}
		key, ok := keyOf(m)
		if ok && i < prev && c.keys[i] == key {
			if copyAll {
				start := w.buf.Len()
				w.buf.Write(c.enc[i])
				w.fresh = append(w.fresh, freshSpan{i, start, w.buf.Len()})
			} else {
				w.reuse(c.enc[i])
			}
			continue
		}
		start := w.buf.Len()
		if i > 0 {
			w.buf.WriteByte(',')
		}
		if err := m.encode(&w.buf); err != nil {
			c.keys, c.spans = c.keys[:0], c.spans[:0] // half updated: trust none of it
			return fmt.Errorf("message %d %w", i, err)
		}
		c.keys[i] = key // the zero key, never matched, when !ok
		w.fresh = append(w.fresh, freshSpan{i, start, w.buf.Len()})
	}
	if len(msgs) > 0 {
		c.base = &msgs[0]
	}
	return nil
}

// Prepare encodes msgs as the start of a request's messages, so that the
// next request whose messages begin with the same ones (as messageKey
// tells them) sends these bytes rather than encoding them again. A resumed
// session's history is the case: encoding a long one is a large part of
// the first request's cost, and Prepare can run on another core while the
// session gets ready. msgs must not change while it runs: leave out a
// message the caller may still edit in place. It does nothing once a
// request has gone through the cache, whose bytes are the ones to reuse.
func (c *EncodeCache) Prepare(msgs []Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) > 0 || len(msgs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(messagesSize(msgs))
	ends := make([]int, len(msgs))
	keys := make([]messageKey, len(msgs))
	for i := range msgs {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := msgs[i].encode(&buf); err != nil {
			return fmt.Errorf("message %d %w", i, err)
		}
		keys[i], _ = keyOf(&msgs[i]) // the zero key, never matched, when none
		ends[i] = buf.Len()
	}
	// Each message's bytes run to the buffer's end, as cutSpans expects.
	b := buf.Bytes()
	enc := make([][]byte, len(msgs))
	start := 0
	for i, end := range ends {
		enc[i] = b[start:end]
		start = end
	}
	c.keys, c.enc = keys, enc
	c.spans = []span{{end: len(msgs), b: b[:start]}}
	// No request's array: the next request compares its messages with
	// these rather than assume it extends them.
	c.base, c.marked, c.runs = nil, nil, 0
	return nil
}

// cutSpans keeps the spans of the messages before from, the one that
// holds message from cut where that message starts.
func (c *EncodeCache) cutSpans(from int) {
	j := sort.Search(len(c.spans), func(j int) bool { return c.spans[j].end > from })
	start := 0
	if j > 0 {
		start = c.spans[j-1].end
	}
	if j < len(c.spans) && start < from {
		// The span and the message's bytes are slices of one buffer
		// that run to its end, so their capacities say where the
		// message starts in the span.
		sp := c.spans[j]
		c.spans[j] = span{end: from, b: sp.b[:cap(sp.b)-cap(c.enc[from])]}
		j++
	}
	c.spans = c.spans[:j]
}

// historySize is the size of the latest request's messages in bytes.
func (c *EncodeCache) historySize() int {
	n := 0
	for _, sp := range c.spans {
		n += len(sp.b)
	}
	return n
}

// done points the cache at the bytes of the messages this request encoded
// (or copied), which lie in final, the request's finished buffer, and
// extends the spans with the messages from w.from on.
func (c *EncodeCache) done(w *bodyWriter, final []byte) {
	for _, f := range w.fresh {
		c.enc[f.msg] = final[f.start:f.end]
	}
	for i := w.from; i < len(c.enc); i++ {
		b := c.enc[i]
		if n := len(c.spans); n > 0 && adjacent(c.spans[n-1].b, b) {
			last := &c.spans[n-1]
			last.b, last.end = last.b[:len(last.b)+len(b)], i+1
		} else {
			c.spans = append(c.spans, span{end: i + 1, b: b})
		}
	}
	if w.toolsAt[1] > 0 {
		c.tools = final[w.toolsAt[0]:w.toolsAt[1]:w.toolsAt[1]]
	}
	c.runs = w.reused
}

// hasBreakpoint reports whether a block of m carries cache_control.
func (m *Message) hasBreakpoint() bool {
	for i := range m.Content {
		if m.Content[i].CacheControl != nil {
			return true
		}
	}
	return false
}

// freshSpan is where message msg lies in the request's own buffer.
type freshSpan struct{ msg, start, end int }

// grow returns s with length n, keeping its elements.
func grow[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// bodyWriter builds a body: bytes written to buf, interleaved with reused
// bytes that stay where they are.
type bodyWriter struct {
	buf    bytes.Buffer
	segs   []segment
	open   int // where the run of buf not yet in segs starts
	reused int // runs of reused bytes
	fresh  []freshSpan
	from   int // the first message written one by one; those before went as spans
	// toolsAt is where the tools array lies in buf, when encoded here.
	toolsAt [2]int
}

// segment is reused bytes (ext), or buf[start:end] when ext is nil.
type segment struct {
	ext        []byte
	start, end int
}

// reuse adds bytes that lie elsewhere, joining them to the previous reused
// run when they follow it in memory.
func (w *bodyWriter) reuse(b []byte) {
	if len(b) == 0 {
		return
	}
	if w.open == w.buf.Len() && len(w.segs) > 0 {
		if last := &w.segs[len(w.segs)-1]; last.ext != nil && adjacent(last.ext, b) {
			last.ext = last.ext[:len(last.ext)+len(b)]
			return
		}
	}
	w.closeRun()
	w.segs = append(w.segs, segment{ext: b})
	w.reused++
}

func (w *bodyWriter) closeRun() {
	if n := w.buf.Len(); n > w.open {
		w.segs = append(w.segs, segment{start: w.open, end: n})
		w.open = n
	}
}

// adjacent reports whether b starts where a ends, in the same array.
func adjacent(a, b []byte) bool {
	return cap(a) > len(a) && &a[:len(a)+1][len(a)] == &b[0]
}

// finish returns the body and the buffer's final bytes.
func (w *bodyWriter) finish() (*EncodedBody, []byte) {
	w.closeRun()
	final := w.buf.Bytes()
	body := &EncodedBody{segs: make([][]byte, len(w.segs))}
	for i, s := range w.segs {
		if s.ext != nil {
			body.segs[i] = s.ext
		} else {
			body.segs[i] = final[s.start:s.end:s.end]
		}
		body.size += len(body.segs[i])
	}
	return body, final
}

// encode writes one element of the messages array. A user message of one
// plain text block goes as a string, the API's shorthand for it: the same
// prompt in fewer bytes (a block with a breakpoint keeps the array form,
// which alone can carry cache_control).
func (m *Message) encode(buf *bytes.Buffer) error {
	buf.WriteString(`{"role":`)
	writeString(buf, string(m.Role))
	if m.Role == RoleUser && len(m.Content) == 1 {
		if b := &m.Content[0]; b.Type == TypeText && b.CacheControl == nil && len(b.Raw) == 0 {
			buf.WriteString(`,"content":`)
			writeString(buf, b.Text)
			buf.WriteByte('}')
			return nil
		}
	}
	buf.WriteString(`,"content":[`)
	for j, b := range m.Content {
		if j > 0 {
			buf.WriteByte(',')
		}
		if err := b.encode(buf); err != nil {
			return fmt.Errorf("block %d: %w", j, err)
		}
	}
	buf.WriteString(`]}`)
	return nil
}
