package sdkproto

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/jsonx"
)

// errInputClosed fails the requests still waiting when stdin ends: nobody
// is left to answer them.
var errInputClosed = errors.New("the SDK closed standard input before answering")

// subtypeInputClosed marks the answer closeInput gives the waiting requests.
const subtypeInputClosed = "input_closed"

// conn is the line-level connection: it writes frames (safe for concurrent
// use), reads frames into a queue, and matches control responses to the
// requests tack sent.
type conn struct {
	warn func(format string, args ...any)

	wmu sync.Mutex
	w   *bufio.Writer
	// werr is the first write error: the SDK went away.
	werr error

	mu      sync.Mutex
	pending map[string]chan controlResponse
	closed  bool // stdin ended

	in *queue
}

func newConn(w io.Writer, warn func(string, ...any)) *conn {
	return &conn{w: bufio.NewWriter(w), warn: warn, pending: map[string]chan controlResponse{}, in: newQueue()}
}

// write sends one frame as a JSON line and flushes it.
func (c *conn) write(v any) error {
	line, err := jsonx.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	c.w.Write(line)
	c.w.WriteByte('\n')
	if err := c.w.Flush(); err != nil {
		c.werr = fmt.Errorf("write standard output: %w", err)
		return c.werr
	}
	return nil
}

// respond answers an SDK control request.
func (c *conn) respond(id string, payload any) error {
	if payload == nil {
		payload = map[string]any{}
	}
	return c.write(outControlResponse{Type: typeControlResponse, Response: controlResponse{Subtype: "success", RequestID: id, Response: payload}})
}

// fail answers an SDK control request with an error.
func (c *conn) fail(id, code string, err error) error {
	return c.write(outControlResponse{Type: typeControlResponse, Response: controlResponse{Subtype: "error", RequestID: id, Error: err.Error(), ErrorCode: code}})
}

// request sends a control request to the SDK and waits for its answer.
// When ctx ends first the request is withdrawn with a cancel frame.
func (c *conn) request(ctx context.Context, subtype string, fields map[string]any) (json.RawMessage, error) {
	id := uuid.NewString()
	ch := make(chan controlResponse, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", subtype, errInputClosed)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	body := map[string]any{"subtype": subtype}
	for k, v := range fields {
		body[k] = v
	}
	if err := c.write(outControlRequest{Type: typeControlRequest, RequestID: id, Request: body}); err != nil {
		c.forget(id)
		return nil, fmt.Errorf("%s: %w", subtype, err)
	}
	select {
	case r := <-ch:
		if r.Subtype == subtypeInputClosed {
			return nil, fmt.Errorf("%s: %w", subtype, errInputClosed)
		}
		if r.Subtype == "error" {
			msg := r.Error
			if msg == "" {
				msg = "the SDK answered with an error"
			}
			return nil, fmt.Errorf("%s: %s", subtype, msg)
		}
		return r.raw(), nil
	case <-ctx.Done():
		c.forget(id)
		_ = c.write(outCancel{Type: typeControlCancel, RequestID: id})
		return nil, fmt.Errorf("%s: %w", subtype, ctx.Err())
	}
}

func (c *conn) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, id)
}

// resolve delivers a control response to the request waiting for it.
func (c *conn) resolve(r controlResponse) {
	c.mu.Lock()
	ch, ok := c.pending[r.RequestID]
	delete(c.pending, r.RequestID)
	c.mu.Unlock()
	if !ok {
		c.warn("ignoring a control response for unknown request %q", r.RequestID)
		return
	}
	ch <- r
}

// closeInput fails every waiting request: no answer can come any more.
func (c *conn) closeInput() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for id, ch := range c.pending {
		ch <- controlResponse{Subtype: subtypeInputClosed, RequestID: id}
		delete(c.pending, id)
	}
}

// read reads frames until r ends: control responses are delivered at once
// (a run may be waiting for one), everything else is queued for the
// server in order. A line that is not a JSON object is reported and skipped.
func (c *conn) read(r io.Reader) {
	defer c.in.close()
	defer c.closeInput()
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			c.handleLine(n, t)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.warn("read standard input: %v", err)
			}
			return
		}
	}
}

func (c *conn) handleLine(n int, line []byte) {
	var f inFrame
	if err := json.Unmarshal(line, &f); err != nil {
		c.warn("ignoring stdin line %d: not a JSON message (%v): %s", n, err, clip(line, 120))
		return
	}
	f.line = n
	switch f.Type {
	case typeControlResponse:
		if f.Response == nil {
			c.warn("ignoring stdin line %d: a control_response without a response", n)
			return
		}
		c.resolve(*f.Response)
	case typeKeepAlive:
	default:
		c.in.push(f)
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// queue is an unbounded FIFO of frames: the reader never waits for the
// server, so control responses always get through.
type queue struct {
	mu     sync.Mutex
	items  []inFrame
	closed bool
	ready  chan struct{}
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

func (q *queue) push(f inFrame) {
	q.mu.Lock()
	q.items = append(q.items, f)
	q.mu.Unlock()
	q.notify()
}

func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.notify()
}

func (q *queue) notify() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop returns the next frame; ok is false once the input ended and every
// frame was taken, or when ctx ends.
func (q *queue) pop(ctx context.Context) (f inFrame, ok bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			f = q.items[0]
			q.items = q.items[1:]
			q.mu.Unlock()
			return f, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return inFrame{}, false
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return inFrame{}, false
		}
	}
}
