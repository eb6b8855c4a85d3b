// Package llmtest is a scripted fake of the Anthropic Messages API for tests
// and benchmarks. A script is a list of turns; each POST /v1/messages is
// answered with the next one, streamed exactly as the API streams it, after
// any faults (error statuses, broken streams, error events) scripted for it.
//
// The server is strict: every request is checked against what the real API
// requires and what tack promises (see the invariants below). A violation
// fails the test and is answered with a 400 invalid_request_error naming it,
// so the client under test sees an error where the real API would give one.
//
// Invariants checked on every request to /v1/messages:
//   - POST, anthropic-version 2023-06-01, x-api-key or authorization: Bearer,
//     content-type application/json;
//   - a JSON body with only known keys, a model, max_tokens > 0, stream: true,
//     non-empty messages;
//   - the first message is a user message, no assistant message follows an
//     assistant message, text blocks are not empty or blank, only a final
//     assistant message may have empty content;
//   - each assistant tool_use has a unique id and is answered by exactly one
//     tool_result in the next user message, results first and in call order;
//     no tool_result lacks its tool_use; the conversation does not end on an
//     unanswered tool_use;
//   - the tool_use blocks of the last completely served turn come back
//     unchanged (id, name, input) in an assistant message, and none from a
//     broken stream does;
//   - at most 4 cache_control breakpoints, of type ephemeral, 1h before 5m;
//   - tool names unique and well formed, each custom tool's input_schema a
//     valid JSON Schema of type object (server tools are exempt).
package llmtest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// maxBody is the API's request size limit.
const maxBody = 32 << 20

// Options configures a server made with NewServer.
type Options struct {
	// Turns is the script.
	Turns []Turn
	// Loop restarts the script when it is exhausted instead of failing.
	Loop bool
	// OnViolation receives each invariant violation (a *Violation) and each
	// invalid turn given to Append. Nil logs them with the standard logger.
	OnViolation func(error)
	// Addr is the address to listen on; default "127.0.0.1:0".
	Addr string
	// DiscardRequests stops the server keeping requests for Requests(), so
	// a long-running server does not grow. Checks are unaffected.
	DiscardRequests bool
	// OnAnswered, when set, is told of each request once its answer is
	// written whole (Done set), on the goroutine that served it: how a
	// server that discards requests still gives their timings.
	OnAnswered func(Request)
	// ByConversation serves each request the turn whose index is the number
	// of assistant messages it carries, instead of the next turn in order.
	// Independent conversations (benchmark runs, side requests, parallel
	// subagents) then each walk the script from its start. Faults cannot be
	// scripted in this mode, and the echo check is skipped: requests of
	// different conversations interleave.
	ByConversation bool
	// Lenient still reports violations but serves the request anyway, for
	// benchmarking clients other than tack whose requests differ in ways
	// that do not matter to a measurement.
	Lenient bool
	// Authorize, when set, judges each request's credentials: a request it
	// refuses is answered 401 authentication_error, as the API answers a
	// bad key, and the script does not move (Request.Unauthorized).
	Authorize func(http.Header) bool
	// TLS, when set, serves HTTPS with it; URL is then https://.
	TLS *tls.Config
	// ChatKey, when set, is the key every Chat Completions request must
	// send as Authorization: Bearer.
	ChatKey string
}

// Violation is one invariant a request broke.
type Violation struct {
	Method, Path string
	Request      int // sequence number: index in Requests(); -1 for count_tokens
	TurnIndex    int
	Attempt      int
	Problem      string
}

func (v *Violation) Error() string {
	if v.Request < 0 {
		return fmt.Sprintf("llmtest: %s %s: %s", v.Method, v.Path, v.Problem)
	}
	return fmt.Sprintf("llmtest: %s %s request #%d (turn %d, attempt %d): %s",
		v.Method, v.Path, v.Request, v.TurnIndex, v.Attempt, v.Problem)
}

// Server is a running fake Messages API.
type Server struct {
	url         string
	loop        bool
	discard     bool
	byConv      bool
	match       bool // some turn has When: serve by matching, see serveMatching
	lenient     bool
	authorize   func(http.Header) bool
	chatKey     string
	onViolation func(error)
	onAnswered  func(Request)
	srv         *http.Server
	tools       toolCache
	seed        string        // makes ids unique across servers (resumed sessions mix them)
	seq         atomic.Uint64 // id counter
	done        chan struct{} // closed by Close: ends delays
	serveErr    chan error
	inflight    sync.WaitGroup

	mu           sync.Mutex
	closed       bool
	turns        []Turn
	cursor       int          // next turn to serve
	served       map[int]bool // turns served in matching mode
	faultsServed int          // faults of turns[cursor] already served
	nreq         int          // requests to /v1/messages and unknown paths so far
	requests     []*Request
	lastUses     []llm.Block // tool_use blocks of the last turn served (not faulted): the next request must echo them
	lastTurn     int
	lastReq      *Request
	stale        map[string]staleUse // tool_use ids from broken streams
}

type staleUse struct{ turn, attempt int }

// New starts a server for a test on 127.0.0.1 with the given script. Every
// violation is a t.Errorf; the server closes when the test ends. An invalid
// script is a t.Fatalf.
func New(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	return Start(t, Options{Turns: turns})
}

// Start is New with options (Loop, Addr…). A nil OnViolation becomes t.Errorf.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.OnViolation == nil {
		opts.OnViolation = func(err error) { t.Errorf("%v", err) }
	}
	s, err := NewServer(opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// NewServer validates the script and starts a server; the caller must Close it.
func NewServer(opts Options) (*Server, error) {
	if err := validateTurns(opts.Turns, 0); err != nil {
		return nil, fmt.Errorf("llmtest: invalid script: %w", err)
	}
	if opts.ByConversation || matching(opts.Turns) {
		for i, t := range opts.Turns {
			if len(t.Faults) > 0 {
				return nil, fmt.Errorf("llmtest: invalid script: turn %d: faults cannot be scripted with ByConversation or When", i)
			}
		}
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: listen: %w", err)
	}
	scheme := "http://"
	if opts.TLS != nil {
		ln, scheme = tls.NewListener(ln, opts.TLS), "https://"
	}
	s := &Server{
		url:         scheme + ln.Addr().String(),
		authorize:   opts.Authorize,
		loop:        opts.Loop,
		discard:     opts.DiscardRequests,
		byConv:      opts.ByConversation,
		match:       matching(opts.Turns),
		lenient:     opts.Lenient,
		chatKey:     opts.ChatKey,
		onViolation: opts.OnViolation,
		onAnswered:  opts.OnAnswered,
		seed:        rand.Text()[:10],
		done:        make(chan struct{}),
		serveErr:    make(chan error, 1),
		turns:       append([]Turn(nil), opts.Turns...),
		stale:       map[string]staleUse{},
	}
	if s.onViolation == nil {
		s.onViolation = func(err error) { log.Print(err) }
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { s.serveErr <- s.srv.Serve(ln) }()
	return s, nil
}

// URL returns the base URL for ANTHROPIC_BASE_URL, without /v1.
func (s *Server) URL() string { return s.url }

// Close stops the server: pending delays end, connections close, and it
// returns once no handler is running, so no violation is reported after it.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.done)
	s.srv.Close()
	<-s.serveErr
	s.inflight.Wait()
}

// Requests returns every request received so far except count_tokens calls,
// in order, faulted attempts and rejected requests included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// Append adds turns to the end of the script; a script that was exhausted
// continues with them. Invalid turns are reported like violations and not added.
func (s *Server) Append(turns ...Turn) {
	s.mu.Lock()
	first := len(s.turns)
	s.mu.Unlock()
	if err := validateTurns(turns, first); err != nil {
		s.onViolation(fmt.Errorf("llmtest: Append: %w", err))
		return
	}
	s.mu.Lock()
	s.turns = append(s.turns, turns...)
	s.match = s.match || matching(turns)
	s.mu.Unlock()
}

// Remaining returns how many turns of the script have not been served yet
// (with Loop, in the current pass).
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.match {
		return len(s.turns) - len(s.served)
	}
	return len(s.turns) - s.cursor
}

// ServeHTTP routes a request; Server is its own handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "llmtest: server closed", http.StatusServiceUnavailable)
		return
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()

	switch r.URL.Path {
	case "/v1/messages":
		s.serveMessages(w, r)
	case "/v1/messages/count_tokens":
		s.serveCountTokens(w, r)
	case "/v1/models":
		s.serveModels(w, r)
	case chatPath:
		s.serveChat(w, r)
	default:
		s.serveUnknown(w, r)
	}
}

// serveMessages checks a request and answers it from the script.
func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request) {
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now()}
	body, tooLarge, err := readBody(r)
	if err != nil {
		return // the client went away while sending
	}
	req.Body = body
	var p problems
	status := http.StatusBadRequest
	if r.Method != http.MethodPost {
		p.add("method %s, want POST", r.Method)
		status = http.StatusMethodNotAllowed
	}
	inspectHeaders(r.Header, &p)
	if s.authorize != nil && !s.authorize(r.Header) {
		req.Unauthorized = true
		s.mu.Lock()
		s.record(req)
		req.TurnIndex = s.cursor
		s.mu.Unlock()
		s.writeError(w, http.StatusUnauthorized, "invalid x-api-key", "", false)
		s.finish(req)
		return
	}
	var in inspection
	if tooLarge {
		p.add("body is larger than the API's limit of %d bytes", maxBody)
		status = http.StatusRequestEntityTooLarge
	} else {
		in = s.inspectBody(body, req, true, &p)
	}

	s.serve(w, r, req, in, p, status)
}

// serve answers a checked request from the script, in the wire format of
// its path (Messages or Chat Completions).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, req *Request, in inspection, p problems, status int) {
	s.mu.Lock()
	if s.byConv {
		s.serveConversation(w, r, req, p, status)
		return
	}
	if s.match {
		s.serveMatching(w, r, req, p, status)
		return
	}
	s.inspectEcho(in, &p)
	idx := s.record(req)
	req.TurnIndex, req.Attempt = s.cursor, s.faultsServed+1
	if len(p) > 0 {
		req.Violations = p
		if s.lenient {
			s.mu.Unlock()
			s.report(req, idx)
			s.mu.Lock()
		} else {
			s.mu.Unlock()
			s.report(req, idx)
			s.fail(w, req, status, "llmtest: "+strings.Join(p, "; "), "", true)
			s.finish(req)
			return
		}
	}
	if s.cursor >= len(s.turns) {
		req.Violations = []string{fmt.Sprintf("script exhausted after %d turns", len(s.turns))}
		s.mu.Unlock()
		s.report(req, idx)
		// 500 like a server failure, but with x-should-retry: false so a
		// client does not back off and retry into the same wall.
		s.fail(w, req, http.StatusInternalServerError, "llmtest: "+req.Violations[0], "", true)
		s.finish(req)
		return
	}
	turn := s.turns[s.cursor]
	var fault *Fault
	if s.faultsServed < len(turn.Faults) {
		f := turn.Faults[s.faultsServed]
		fault = &f
		s.faultsServed++
	} else {
		s.faultsServed = 0
		s.cursor++
		if s.loop && s.cursor == len(s.turns) {
			s.cursor = 0
		}
	}
	req.Fault = fault
	if fault == nil || fault.Status == 0 {
		req.Response = s.fill(s.build(&turn, req))
	}
	if fault == nil {
		// Set now, not after the write: the client may send its next request
		// the moment it reads message_stop, before this handler resumes.
		s.lastUses, s.lastTurn, s.lastReq = toolUses(req.Response), req.TurnIndex, req
		for _, b := range s.lastUses {
			delete(s.stale, b.ID) // a pinned id served again is current, not stale
		}
	} else {
		for _, b := range toolUses(req.Response) {
			s.stale[b.ID] = staleUse{turn: req.TurnIndex, attempt: req.Attempt}
		}
	}
	s.mu.Unlock()

	if turn.Delay > 0 && !s.wait(r.Context(), turn.Delay) {
		s.abandon(req)
		return
	}
	if fault != nil && fault.Status != 0 {
		msg := fault.Message
		if msg == "" {
			msg = defaultMessage(errorType(fault.Status), fault.Status)
		}
		s.fail(w, req, fault.Status, msg, fault.RetryAfter, false)
		s.finish(req)
		return
	}
	s.stream(w, req, turn, fault)
}

// serveConversation answers req in ByConversation mode: the turn is chosen
// by how far its conversation has got. Called with s.mu held; unlocks it.
func (s *Server) serveConversation(w http.ResponseWriter, r *http.Request, req *Request, p problems, status int) {
	idx := s.record(req)
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	if s.loop && len(s.turns) > 0 {
		n %= len(s.turns)
	}
	req.TurnIndex, req.Attempt = n, 1
	req.Violations = p
	refuse := len(p) > 0 && !s.lenient
	if !refuse && n >= len(s.turns) {
		req.Violations = append(req.Violations, fmt.Sprintf("no turn %d: the script has %d turns", n, len(s.turns)))
		status = http.StatusInternalServerError
		refuse = true
	}
	s.mu.Unlock()
	s.report(req, idx)
	if refuse {
		s.fail(w, req, status, "llmtest: "+strings.Join(req.Violations, "; "), "", true)
		s.finish(req)
		return
	}
	s.mu.Lock()
	turn := s.turns[n]
	req.Response = s.fill(s.build(&turn, req))
	s.mu.Unlock()
	if turn.Delay > 0 && !s.wait(r.Context(), turn.Delay) {
		s.abandon(req)
		return
	}
	s.stream(w, req, turn, nil)
}

// build makes a Build turn's content for req; it returns the content.
func (s *Server) build(t *Turn, req *Request) []llm.Block {
	if t.Build != nil {
		t.Content = t.Build(req)
		if err := t.validate(); err != nil {
			s.onViolation(fmt.Errorf("llmtest: turn built for request: %w", err))
		}
	}
	return t.Content
}

// matching reports whether any turn has a When.
func matching(turns []Turn) bool {
	for _, t := range turns {
		if t.When != nil {
			return true
		}
	}
	return false
}

// serveMatching answers req with the first unserved turn that accepts it.
// Called with s.mu held; unlocks it.
func (s *Server) serveMatching(w http.ResponseWriter, r *http.Request, req *Request, p problems, status int) {
	idx := s.record(req)
	n := -1
	for i, t := range s.turns {
		if !s.served[i] && (t.When == nil || t.When(req)) {
			n = i
			break
		}
	}
	req.TurnIndex, req.Attempt = n, 1
	req.Violations = p
	refuse := len(p) > 0 && !s.lenient
	if !refuse && n < 0 {
		req.TurnIndex = len(s.turns)
		req.Violations = append(req.Violations, fmt.Sprintf("no unserved turn of %d accepts this request", len(s.turns)))
		status = http.StatusInternalServerError
		refuse = true
	}
	var turn Turn
	if !refuse {
		if s.served == nil {
			s.served = map[int]bool{}
		}
		s.served[n] = true
		turn = s.turns[n]
		req.Response = s.fill(s.build(&turn, req))
	}
	s.mu.Unlock()
	s.report(req, idx)
	if refuse {
		s.fail(w, req, status, "llmtest: "+strings.Join(req.Violations, "; "), "", true)
		s.finish(req)
		return
	}
	if turn.Delay > 0 && !s.wait(r.Context(), turn.Delay) {
		s.abandon(req)
		return
	}
	s.stream(w, req, turn, nil)
}

// stream writes a turn as SSE, or the part of it a fault lets through.
func (s *Server) stream(w http.ResponseWriter, req *Request, turn Turn, fault *Fault) {
	if req.chat {
		s.streamChat(w, req, turn, fault)
		return
	}
	model := turn.Model
	if model == "" {
		model = req.Model
	}
	st := renderStream(streamParams{
		msgID:      s.newID("msg"),
		model:      model,
		content:    req.Response,
		stopReason: stopReason(turn),
		usage:      defaultUsage(turn, req),
	})
	n := st.count()
	if fault != nil {
		n = fault.CutAfter
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Request-Id", s.newID("req"))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i := range n {
		if _, err := w.Write(st.frame(i)); err != nil {
			s.abandon(req)
			return
		}
		if err := rc.Flush(); err != nil {
			s.abandon(req)
			return
		}
	}
	switch {
	case fault == nil:
		s.finish(req)
	case fault.ErrorEvent != "":
		msg := fault.Message
		if msg == "" {
			msg = defaultMessage(fault.ErrorEvent, 0)
		}
		frame := append([]byte(`event: error`+"\n"+`data: {"type":"error","error":{"type":`), jsonx.AppendString(nil, fault.ErrorEvent)...)
		frame = append(frame, `,"message":`...)
		frame = jsonx.AppendString(frame, msg)
		frame = append(frame, "}}\n\n"...)
		if _, err := w.Write(frame); err == nil {
			_ = rc.Flush()
		}
		s.finish(req)
	default:
		// Drop the connection without ending the chunked body, as a network
		// failure would: the client sees an unexpected EOF mid-stream.
		s.finish(req)
		conn, _, err := rc.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		conn.Close()
	}
}

// serveCountTokens answers POST /v1/messages/count_tokens with a rough count.
func (s *Server) serveCountTokens(w http.ResponseWriter, r *http.Request) {
	body, tooLarge, err := readBody(r)
	if err != nil {
		return
	}
	var p problems
	if r.Method != http.MethodPost {
		p.add("method %s, want POST", r.Method)
	}
	inspectHeaders(r.Header, &p)
	if tooLarge {
		p.add("body is larger than the API's limit of %d bytes", maxBody)
	} else {
		s.inspectBody(body, &Request{}, false, &p)
	}
	if len(p) > 0 {
		for _, msg := range p {
			s.onViolation(&Violation{Method: r.Method, Path: r.URL.Path, Request: -1, Problem: msg})
		}
		s.writeError(w, http.StatusBadRequest, "llmtest: "+strings.Join(p, "; "), "", true)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", s.newID("req"))
	fmt.Fprintf(w, `{"input_tokens":%d}`, max(1, len(body)/4))
}

// serveUnknown answers any other path with a 404, as a violation: a client
// that gets here has built its URLs wrong.
func (s *Server) serveUnknown(w http.ResponseWriter, r *http.Request) {
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now(), TurnIndex: -1}
	req.Body, _, _ = readBody(r)
	req.Violations = []string{fmt.Sprintf("no such endpoint %s %s (the fake serves POST /v1/messages, /v1/messages/count_tokens, /v1/chat/completions and GET /v1/models)", r.Method, r.URL.Path)}
	s.mu.Lock()
	idx := s.record(req)
	s.mu.Unlock()
	s.report(req, idx)
	s.writeError(w, http.StatusNotFound, "llmtest: "+req.Violations[0], "", true)
	s.finish(req)
}

// inspectEcho checks that the client sent back the tool_use blocks it was
// given, and none from a broken stream. Called with s.mu held.
func (s *Server) inspectEcho(in inspection, p *problems) {
	// A request without assistant messages starts a new conversation (a
	// subagent, a side query), which cannot echo anything.
	if in.hasAssistant {
		for _, want := range s.lastUses {
			got, ok := in.toolUses[want.ID]
			switch {
			case !ok:
				p.add("tool_use %s (%s) served in turn %d is not in the assistant messages sent back; the client must return the content it received", want.ID, want.Name, s.lastTurn)
			case got.Name != want.Name:
				p.add("tool_use %s was sent back with name %q; turn %d served %q", want.ID, got.Name, s.lastTurn, want.Name)
			case !isJSONObject(want.Input) && len(want.Input) > 0:
				if !sameJSON(got.Input, []byte("{}")) {
					p.add("tool_use %s (%s) had malformed input %q; it must be sent back with input {}, got %s", want.ID, want.Name, want.Input, got.Input)
				}
			case !sameJSON(got.Input, want.Input):
				p.add("tool_use %s (%s) was sent back with input %s; turn %d served %s", want.ID, want.Name, got.Input, s.lastTurn, want.Input)
			}
		}
	}
	if len(s.stale) == 0 {
		return
	}
	for _, id := range in.order {
		if st, ok := s.stale[id]; ok {
			p.add("tool_use %s comes from the broken stream of turn %d attempt %d; a retried response replaces a broken one and must not be merged with it", id, st.turn, st.attempt)
		}
	}
}

// record stores req (unless requests are discarded) and returns its
// sequence number, its index in Requests(). Called with s.mu held.
func (s *Server) record(req *Request) int {
	idx := s.nreq
	s.nreq++
	if !s.discard {
		s.requests = append(s.requests, req)
	}
	return idx
}

// report hands each violation of req to the violation handler.
func (s *Server) report(req *Request, idx int) {
	for _, msg := range req.Violations {
		s.onViolation(&Violation{
			Method: req.Method, Path: req.Path, Request: idx,
			TurnIndex: req.TurnIndex, Attempt: req.Attempt, Problem: msg,
		})
	}
}

// finish notes that the answer to req was written completely.
func (s *Server) finish(req *Request) {
	now := time.Now()
	s.mu.Lock()
	req.Done = now
	var answered Request
	if s.onAnswered != nil {
		answered = *req
	}
	s.mu.Unlock()
	if s.onAnswered != nil {
		s.onAnswered(answered)
	}
}

// abandon notes that the client went away before the answer was complete.
// Its tool_use blocks are then not expected back. The turn stays consumed:
// an interrupted request is not answered again.
func (s *Server) abandon(req *Request) {
	s.mu.Lock()
	if s.lastReq == req {
		s.lastUses, s.lastReq = nil, nil
	}
	s.mu.Unlock()
}

// wait sleeps for d unless the client or the server goes away first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// fill copies content with what the server decides at serve time: fresh
// tool ids, signatures, compact inputs. Called with s.mu held.
func (s *Server) fill(content []llm.Block) []llm.Block {
	out := make([]llm.Block, len(content))
	for i, b := range content {
		switch b.Type {
		case llm.TypeToolUse, llm.TypeServerToolUse:
			if len(b.Raw) > 0 {
				break
			}
			if b.ID == "" {
				prefix := "toolu"
				if b.Type == llm.TypeServerToolUse {
					prefix = "srvtoolu"
				}
				b.ID = s.newID(prefix)
			}
			b.Input = []byte(compactInput(b.Input))
		case llm.TypeThinking:
			if b.Signature == "" && len(b.Raw) == 0 {
				b.Signature = fakeSignature(b.Thinking)
			}
		}
		out[i] = b
	}
	return out
}

// newID returns a unique id such as "toolu_01…" in the API's style.
func (s *Server) newID(kind string) string {
	return kind + "_01" + s.seed + fmt.Sprintf("%012d", s.seq.Add(1))
}

// writeError writes an Anthropic error response. noRetry adds
// x-should-retry: false, which the official SDKs obey.
func (s *Server) writeError(w http.ResponseWriter, status int, msg, retryAfter string, noRetry bool) {
	reqID := s.newID("req")
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Request-Id", reqID)
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	if noRetry {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	body := append([]byte(`{"type":"error","error":{"type":`), jsonx.AppendString(nil, errorType(status))...)
	body = append(body, `,"message":`...)
	body = jsonx.AppendString(body, msg)
	body = append(body, `},"request_id":`...)
	body = jsonx.AppendString(body, reqID)
	body = append(body, '}')
	_, _ = w.Write(body)
}

// errorType is the API's error type for an HTTP status.
func errorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 402:
		return "billing_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

func defaultMessage(errType string, status int) string {
	switch errType {
	case "overloaded_error":
		return "Overloaded"
	case "rate_limit_error":
		return "Number of requests has exceeded your rate limit"
	case "api_error":
		return "Internal server error"
	case "timeout_error":
		return "Request timed out"
	}
	if status != 0 {
		return "llmtest fault: HTTP " + strconv.Itoa(status)
	}
	return "llmtest fault: " + errType
}

// stopReason is the turn's stop reason, defaulted from its content.
func stopReason(t Turn) string {
	if t.StopReason != "" {
		return t.StopReason
	}
	for _, b := range t.Content {
		if b.Type == llm.TypeToolUse {
			return "tool_use"
		}
	}
	return "end_turn"
}

// defaultUsage is the turn's usage, or small numbers in proportion to the
// request and the content.
func defaultUsage(t Turn, req *Request) llm.Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := 0
	for _, b := range req.Response {
		out += len(b.Text) + len(b.Input) + len(b.Thinking) + len(b.Data) + len(b.Raw)
	}
	return llm.Usage{InputTokens: int64(max(1, len(req.Body)/4)), OutputTokens: int64(max(1, out/4))}
}

func toolUses(content []llm.Block) []llm.Block {
	var out []llm.Block
	for _, b := range content {
		if b.Type == llm.TypeToolUse && len(b.Raw) == 0 {
			out = append(out, b)
		}
	}
	return out
}

// readBody reads the body up to the API's size limit.
func readBody(r *http.Request) (body []byte, tooLarge bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxBody {
		return body, true, nil
	}
	return body, false, nil
}
