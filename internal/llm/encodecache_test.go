package llm

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// conversation is a request of n user/assistant exchanges, with a tool call
// and its result in each, as long sessions have.
func conversation(n int) *Request {
	r := &Request{Model: "claude-haiku-4-5", MaxTokens: 1000, System: []Block{Text("identity")}}
	for i := range n {
		id := fmt.Sprintf("toolu_%d", i)
		r.Messages = append(r.Messages,
			Message{Role: RoleUser, Content: []Block{Text(fmt.Sprintf("question %d: what does f%d do?", i, i))}},
			Message{Role: RoleAssistant, Content: []Block{Text("Let me read it."),
				{Type: TypeToolUse, ID: id, Name: "Read", Input: []byte(fmt.Sprintf(`{"file_path":"/repo/f%d.go"}`, i))}}},
			Message{Role: RoleUser, Content: []Block{ToolResult(id, strings.Repeat("func f() {}\n", 20), false)}},
			Message{Role: RoleAssistant, Content: []Block{Text(fmt.Sprintf("f%d returns nothing.", i))}})
	}
	return r
}

func fresh(t testing.TB, r *Request) []byte {
	t.Helper()
	c := *r
	c.Cache = nil
	b, err := c.Body()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func body(t testing.TB, r *Request) []byte {
	t.Helper()
	b, err := r.Body()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each way a conversation changes between two requests — messages added, a
// breakpoint put on a copy, a block appended in place into spare capacity,
// a message's content replaced, the history cut by compaction — gives the
// bytes a fresh encoding gives.
func TestEncodeCacheGivesTheSameBytes(t *testing.T) {
	cache := &EncodeCache{}
	r := conversation(3)
	r.Cache = cache
	steps := []struct {
		name   string
		change func()
	}{
		{"first request", func() {}},
		{"messages added", func() {
			r.Messages = append(r.Messages, Message{Role: RoleUser, Content: []Block{Text("and g?")}})
		}},
		{"breakpoint on a copy of the last message", func() {
			last := &r.Messages[len(r.Messages)-1]
			content := append([]Block(nil), last.Content...)
			content[0].CacheControl = &CacheControl{Type: "ephemeral"}
			last.Content = content
		}},
		{"block appended in place into spare capacity", func() {
			last := &r.Messages[len(r.Messages)-1]
			grown := make([]Block, len(last.Content), len(last.Content)+4)
			copy(grown, last.Content)
			last.Content = grown
			body(t, r) // the cache now holds the message at this address and length
			last.Content = append(last.Content, Text("[Request interrupted by user]"))
		}},
		{"content replaced", func() {
			r.Messages[1].Content = []Block{Text("a different answer")}
		}},
		{"history cut by compaction", func() {
			r.Messages = append([]Message{{Role: RoleUser, Content: []Block{Text("summary of the conversation")}}}, r.Messages[8:]...)
		}},
		{"empty content", func() {
			r.Messages = append(r.Messages, Message{Role: RoleAssistant})
		}},
	}
	for _, step := range steps {
		step.change()
		if got, want := body(t, r), fresh(t, r); !bytes.Equal(got, want) {
			t.Fatalf("%s: the cached body differs from a fresh one:\n got %s\nwant %s", step.name, got, want)
		}
	}
}

// A message the previous request sent is not encoded again: its bytes come
// from the cache. (Changing a block in place breaks the history's contract;
// here it shows which bytes were reused.)
func TestEncodeCacheReusesUnchangedMessages(t *testing.T) {
	r := conversation(2)
	r.Cache = &EncodeCache{}
	body(t, r)
	r.Messages[0].Content[0].Text = "changed in place"
	r.Messages[1].Content = []Block{Text("replaced")}
	got := string(body(t, r))
	if strings.Contains(got, "changed in place") || !strings.Contains(got, "question 0") {
		t.Errorf("message 0 was encoded again instead of reused: %s", got)
	}
	if !strings.Contains(got, "replaced") {
		t.Errorf("message 1, given new content, was not encoded again: %s", got)
	}
}

// The cache holds the latest request's messages only, so it never grows
// beyond one request.
func TestEncodeCacheKeepsOnlyTheLatestRequest(t *testing.T) {
	r := conversation(5)
	r.Cache = &EncodeCache{}
	body(t, r)
	if len(r.Cache.keys) != len(r.Messages) || len(r.Cache.enc) != len(r.Messages) {
		t.Fatalf("cache holds %d messages after a request of %d", len(r.Cache.keys), len(r.Messages))
	}
	r.Messages = r.Messages[len(r.Messages)-2:]
	body(t, r)
	if len(r.Cache.keys) != 2 || len(r.Cache.enc) != 2 {
		t.Errorf("cache holds %d messages after a request of 2", len(r.Cache.keys))
	}
}

// encode is Encode that fails the test on an error.
func encode(t testing.TB, r *Request) *EncodedBody {
	t.Helper()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A request that adds one message to the previous one sends the history
// from where the previous body holds it: its first segments lie in the
// previous body's memory, and the body is a few segments, not one per
// message. However long the session, the runs stay bounded, and the bytes
// stay those of a fresh encoding.
func TestEncodeCacheSendsHistoryInPlace(t *testing.T) {
	r := conversation(20)
	r.Cache = &EncodeCache{}
	first := encode(t, r)
	if len(first.Segments()) != 1 {
		t.Fatalf("a first request is %d segments, want one buffer", len(first.Segments()))
	}
	r.Messages = append(r.Messages[:len(r.Messages):len(r.Messages)], Message{Role: RoleUser, Content: []Block{Text("and g?")}})
	second := encode(t, r)
	segs := second.Segments()
	if len(segs) != 3 {
		t.Fatalf("one more message gives %d segments, want head, reused history, the rest", len(segs))
	}
	prev := first.Segments()[0]
	if !inside(segs[1], prev) {
		t.Errorf("the history was copied, not sent from the previous body")
	}
	if !bytes.Equal(second.Bytes(), fresh(t, r)) {
		t.Fatalf("the segmented body differs from a fresh one")
	}
	for i := range 3 * maxRuns {
		r.Messages = append(r.Messages[:len(r.Messages):len(r.Messages)],
			Message{Role: RoleAssistant, Content: []Block{Text(fmt.Sprintf("answer %d", i))}},
			Message{Role: RoleUser, Content: []Block{Text(fmt.Sprintf("question %d", i))}})
		b := encode(t, r)
		if n := len(b.Segments()); n > 2*maxRuns+4 {
			t.Fatalf("request %d is %d segments: the runs are not bounded", i, n)
		}
		if !bytes.Equal(b.Bytes(), fresh(t, r)) {
			t.Fatalf("request %d: the segmented body differs from a fresh one", i)
		}
	}
}

// inside reports whether part lies within whole's memory.
func inside(part, whole []byte) bool {
	for i := range whole {
		if &whole[i] == &part[0] {
			return len(whole)-i >= len(part)
		}
	}
	return false
}

// Each Reader reads the whole body again, by Read and by WriteTo alike, so
// a failed attempt can be sent again.
func TestEncodedBodyReplays(t *testing.T) {
	r := conversation(3)
	r.Cache = &EncodeCache{}
	body(t, r)
	r.Messages = append(r.Messages[:len(r.Messages):len(r.Messages)], Message{Role: RoleUser, Content: []Block{Text("more")}})
	b := encode(t, r)
	want := fresh(t, r)
	if b.Len() != len(want) {
		t.Fatalf("Len %d, want %d", b.Len(), len(want))
	}
	for i := range 2 {
		var small bytes.Buffer
		rd := b.Reader()
		p := make([]byte, 7) // short reads cut segments
		for {
			n, err := rd.Read(p)
			small.Write(p[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(small.Bytes(), want) {
			t.Fatalf("pass %d by Read: got %s", i, small.Bytes())
		}
		var whole bytes.Buffer
		if _, err := io.Copy(&whole, b.Reader()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole.Bytes(), want) {
			t.Fatalf("pass %d by WriteTo: got %s", i, whole.Bytes())
		}
	}
}

// BenchmarkBody is the encoding of one more turn's request in a session of
// 200 and of 1 000 exchanges: with the cache its cost per request stays
// that of the new messages, without it the cost grows with the history.
func BenchmarkBody(b *testing.B) {
	for _, n := range []int{200, 1000} {
		for _, cached := range []bool{false, true} {
			b.Run(fmt.Sprintf("exchanges=%d/cache=%v", n, cached), func(b *testing.B) {
				r := conversation(n)
				if cached {
					r.Cache = &EncodeCache{}
				}
				base := r.Messages
				body(b, r)
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					// One new exchange per request, the last message marked on
					// a copy as the engine does.
					r.Messages = append(base[:len(base):len(base)],
						Message{Role: RoleUser, Content: []Block{Text(fmt.Sprintf("next %d", i)),
							{Type: TypeText, Text: "!", CacheControl: &CacheControl{Type: "ephemeral"}}}})
					encode(b, r)
				}
			})
		}
	}
}

// The tools array a session offers again goes from the previous body's
// bytes; a tools array that changed in any way is encoded afresh.
func TestEncodeCacheReusesTheToolsArray(t *testing.T) {
	r := conversation(2)
	schema := []byte(`{"type": "object", "properties": {"file_path": {"type": "string"}}}`)
	r.Tools = []ToolSpec{{Name: "Read", Description: strings.Repeat("Reads a file. ", 50), InputSchema: schema}, {Name: "Bash", Description: "Runs a command."}}
	r.Cache = &EncodeCache{}
	first := encode(t, r)
	prev := first.Segments()[0]
	toolsOf := func(b []byte) []byte {
		i := bytes.Index(b, []byte(`,"tools":`))
		j := bytes.Index(b, []byte(`,"stream":`))
		return b[i+len(`,"tools":`) : j]
	}
	next := func(tools []ToolSpec) *EncodedBody {
		r.Messages = append(r.Messages[:len(r.Messages):len(r.Messages)], Message{Role: RoleUser, Content: []Block{Text("more")}})
		r.Tools = tools
		b := encode(t, r)
		if !bytes.Equal(b.Bytes(), fresh(t, r)) {
			t.Fatalf("the body differs from a fresh one")
		}
		return b
	}
	// The registry builds a new slice per request, of the same strings.
	second := next(append([]ToolSpec(nil), r.Tools...))
	var reused bool
	for _, seg := range second.Segments() {
		if inside(seg, prev) && bytes.Contains(seg, toolsOf(prev)) {
			reused = true
		}
	}
	if !reused {
		t.Errorf("the same tools were encoded again")
	}
	changed := append([]ToolSpec(nil), r.Tools...)
	changed[1].DeferLoading = true
	third := next(changed)
	if !bytes.Contains(toolsOf(third.Bytes()), []byte(`"defer_loading":true`)) {
		t.Errorf("a deferred tool kept the old bytes")
	}
	changed = append([]ToolSpec(nil), changed[:1]...)
	if got := toolsOf(next(changed).Bytes()); bytes.Contains(got, []byte(`"Bash"`)) {
		t.Errorf("a tool removed is still sent: %s", got)
	}
}

// TestEncodePrefixIsTheBodys checks that the system and tools arrays
// EncodePrefix gives are the bytes the body carries, and "[]" for none.
func TestEncodePrefixIsTheBodys(t *testing.T) {
	r := conversation(2)
	r.System = append(r.System, Block{Type: TypeText, Text: "with \"quotes\" <and> a breakpoint", CacheControl: &CacheControl{Type: "ephemeral", TTL: "1h"}})
	r.Tools = []ToolSpec{
		{Name: "Read", Description: "Read a file", InputSchema: []byte("{\n  \"type\": \"object\"\n}")},
		{Name: "mcp__x__y", InputSchema: []byte(`{"type":"object"}`), DeferLoading: true},
		{Raw: []byte(`{"type":"web_search_20250305","name":"web_search"}`)},
	}
	system, tools, err := r.EncodePrefix()
	if err != nil {
		t.Fatal(err)
	}
	body := fresh(t, r)
	if want := `"system":` + string(system) + `,"messages":`; !strings.Contains(string(body), want) {
		t.Errorf("body %s\nlacks %s", body, want)
	}
	if want := `,"tools":` + string(tools) + `,"stream":true}`; !strings.HasSuffix(string(body), want) {
		t.Errorf("body %s\ndoes not end with %s", body, want)
	}
	system, tools, err = (&Request{Model: "m"}).EncodePrefix()
	if err != nil || string(system) != "[]" || string(tools) != "[]" {
		t.Errorf("empty prefix: %s %s %v", system, tools, err)
	}
}

// extender builds requests as a session does, each extending one array
// (Request.Extends): the history's messages, a breakpoint on a copy of the
// previous request's last message and of this one's, put back before the
// next request.
type extender struct {
	req     *Request
	history []Message
	sent    []Message
	marks   []int
}

func (e *extender) next() {
	for _, p := range e.marks {
		e.sent[p] = e.history[p]
	}
	prevLast := len(e.sent) - 1
	e.marks = e.marks[:0]
	if len(e.sent) > 0 {
		e.sent[len(e.sent)-1] = e.history[len(e.sent)-1]
	}
	e.sent = append(e.sent, e.history[len(e.sent):]...)
	for _, p := range []int{prevLast, len(e.sent) - 1} {
		if p < 0 {
			continue
		}
		m := &e.sent[p]
		content := append([]Block(nil), m.Content...)
		content[len(content)-1].CacheControl = &CacheControl{Type: "ephemeral"}
		m.Content = content
		e.marks = append(e.marks, p)
	}
	e.req.Messages = e.sent[:len(e.sent):len(e.sent)]
}

// Requests that extend one array give a fresh encoding's bytes at every
// step — messages added, the breakpoints moved, the last message edited,
// a copy of the whole history every maxRuns runs — and read only the
// messages that can have changed: a message replaced in the array further
// back (which Extends rules out) is not seen.
func TestEncodeCacheExtendsWithoutReadingTheHistory(t *testing.T) {
	e := &extender{req: &Request{Model: "m", MaxTokens: 1, Cache: &EncodeCache{}, Extends: true}}
	e.history = conversation(5).Messages
	e.sent = make([]Message, 0, 4*maxRuns*4)
	for i := range 3 * maxRuns {
		e.history = append(e.history,
			Message{Role: RoleUser, Content: []Block{Text(fmt.Sprintf("question %d", i))}})
		if i%3 == 1 {
			// A request that failed: no answer, and the next prompt joins
			// the last message.
			e.next()
			encode(t, e.req)
			last := &e.history[len(e.history)-1]
			last.Content = append(append([]Block(nil), last.Content...), Text(fmt.Sprintf("and %d", i)))
		}
		e.next()
		if got, want := encode(t, e.req).Bytes(), fresh(t, e.req); !bytes.Equal(got, want) {
			t.Fatalf("request %d differs from a fresh encoding:\n got %s\nwant %s", i, got, want)
		}
		e.history = append(e.history, Message{Role: RoleAssistant, Content: []Block{Text(fmt.Sprintf("answer %d", i))}})
	}

	e.history = append(e.history, Message{Role: RoleUser, Content: []Block{Text("last")}})
	e.next()
	e.sent[1].Content = []Block{Text("changed in place")}
	if got := encode(t, e.req).Bytes(); bytes.Contains(got, []byte("changed in place")) || !bytes.Contains(got, []byte(`"last"`)) {
		t.Errorf("an extending request read the history it did not need to: %s", got)
	}
	// Cut, in the same array, then grown again in its spare capacity.
	e.sent[1] = e.history[1]
	n := len(e.req.Messages)
	e.req.Messages = e.sent[: n-3 : n-3]
	if got, want := encode(t, e.req).Bytes(), fresh(t, e.req); !bytes.Equal(got, want) {
		t.Fatalf("a cut request differs from a fresh encoding:\n got %s\nwant %s", got, want)
	}
	e.sent = append(e.sent[:n-3], Message{Role: RoleAssistant, Content: []Block{Text("another answer")}},
		Message{Role: RoleUser, Content: []Block{Text("another question")}})
	e.req.Messages = e.sent[: n-1 : n-1]
	if got, want := encode(t, e.req).Bytes(), fresh(t, e.req); !bytes.Equal(got, want) {
		t.Fatalf("a request grown after a cut differs from a fresh encoding:\n got %s\nwant %s", got, want)
	}
	// The same messages in another array are checked one by one.
	e.req.Messages = append([]Message(nil), e.req.Messages...)
	e.req.Messages[1].Content = []Block{Text("replaced")}
	if got := encode(t, e.req).Bytes(); !bytes.Contains(got, []byte("replaced")) {
		t.Errorf("a request in another array reused a replaced message: %s", got)
	}
}

// A prepared history goes into the next request as the bytes Prepare
// made, without being encoded again, and the request is still what a fresh
// encoding gives: the messages after the history, and a history message
// that changed (a breakpoint put on a copy of it), are encoded afresh.
// Prepare changes nothing once a request has gone through the cache.
func TestPreparedHistoryIsSentAsPrepared(t *testing.T) {
	history := conversation(20).Messages
	c := &EncodeCache{}
	if err := c.Prepare(history[:len(history)-1]); err != nil {
		t.Fatal(err)
	}
	// The engine's first request: the messages in another array, the
	// last one edited, a breakpoint on one, a new prompt.
	msgs := append([]Message(nil), history...)
	last := &msgs[len(msgs)-1]
	last.Content = append(append([]Block(nil), last.Content...), Text("joined"))
	marked := append([]Block(nil), msgs[5].Content...)
	marked[len(marked)-1].CacheControl = &CacheControl{Type: "ephemeral"}
	msgs[5].Content = marked
	msgs = append(msgs, Message{Role: RoleUser, Content: []Block{Text("a new prompt")}})
	req := &Request{Model: "m", MaxTokens: 1, Cache: c, Extends: true, Messages: msgs}
	body := encode(t, req)
	if got, want := body.Bytes(), fresh(t, req); !bytes.Equal(got, want) {
		t.Fatalf("the request after Prepare differs from a fresh encoding:\n got %s\nwant %s", got, want)
	}
	if n := len(body.Segments()); n > 8 {
		t.Errorf("the prepared history went as %d segments, not a few runs", n)
	}

	// Behind an unchanged key, the bytes sent are the prepared ones.
	c = &EncodeCache{}
	history = conversation(3).Messages
	if err := c.Prepare(history[:len(history)-1]); err != nil {
		t.Fatal(err)
	}
	history[0].Content[0].Text = "changed behind the cache's back"
	req = &Request{Model: "m", MaxTokens: 1, Cache: c, Extends: true, Messages: history}
	if got := encode(t, req).Bytes(); bytes.Contains(got, []byte("changed behind")) || !bytes.Contains(got, []byte("question 0")) {
		t.Errorf("the prepared bytes were not the ones sent: %s", got)
	}

	// Once a request went through, Prepare leaves the cache as it was.
	if err := c.Prepare(conversation(2).Messages); err != nil {
		t.Fatal(err)
	}
	history = append(history, Message{Role: RoleUser, Content: []Block{Text("next")}})
	req.Messages = history
	if got := encode(t, req).Bytes(); !bytes.Contains(got, []byte(`"next"`)) || bytes.Contains(got, []byte("changed behind")) {
		t.Errorf("a Prepare after a request changed what the cache sends: %s", got)
	}
}
