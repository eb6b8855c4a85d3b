package llm

import (
	"bytes"
	"fmt"
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

// The cache holds the latest request only, so it never grows beyond one
// request's bytes.
func TestEncodeCacheKeepsOnlyTheLatestRequest(t *testing.T) {
	r := conversation(5)
	r.Cache = &EncodeCache{}
	first := body(t, r)
	if len(r.Cache.keys) != len(r.Messages) || len(r.Cache.body) != len(first) {
		t.Fatalf("cache holds %d messages and %d bytes after a request of %d and %d", len(r.Cache.keys), len(r.Cache.body), len(r.Messages), len(first))
	}
	r.Messages = r.Messages[len(r.Messages)-2:]
	second := body(t, r)
	if len(r.Cache.keys) != 2 || len(r.Cache.body) != len(second) {
		t.Errorf("cache holds %d messages and %d bytes after a request of 2 and %d", len(r.Cache.keys), len(r.Cache.body), len(second))
	}
}

// BenchmarkBody is the encoding of one more turn's request in a session of
// 200 and of 1 000 exchanges: with the cache its cost per request stays
// that of the new messages (plus copying the reused bytes), without it the
// cost grows with the history.
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
					body(b, r)
				}
			})
		}
	}
}
