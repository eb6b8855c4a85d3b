package llm

import (
	"bytes"
	"fmt"
	"sync"
)

// EncodeCache keeps the JSON of the messages one request sent, so that the
// next request of the same conversation encodes only what is new: a session
// of a thousand turns then pays for one turn's bytes per request, not for
// the whole history.
//
// A message is recognised by its position, its role and its content slice
// (the address of its first block and its length). That is sound because a
// conversation's history is never modified in place: a message that changes
// (a breakpoint put on it, a block appended) gets a new or longer content
// slice, so it misses the cache and is encoded afresh; a history cut by
// compaction moves every message, so none matches. The cache holds those
// addresses, so the memory they point to cannot be reused for another
// message while the cache can still match it.
//
// The cache keeps the latest body itself (Body's result, which must not be
// changed) and where each message lies in it, so it costs no copy and holds
// one request's bytes. It is safe for concurrent use.
type EncodeCache struct {
	mu    sync.Mutex
	body  []byte       // the latest body
	keys  []messageKey // its messages, in order
	spans [][2]int     // where each lies in body
}

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
// every message is encoded. The caller holds c.mu and calls done with the
// finished body.
func (c *EncodeCache) encodeMessages(buf *bytes.Buffer, msgs []Message) error {
	var keys []messageKey
	var spans [][2]int
	if c != nil {
		keys = make([]messageKey, len(msgs))
		spans = make([][2]int, len(msgs))
	}
	for i := range msgs {
		if i > 0 {
			buf.WriteByte(',')
		}
		start := buf.Len()
		if c == nil {
			if err := msgs[i].encode(buf); err != nil {
				return fmt.Errorf("message %d %w", i, err)
			}
			continue
		}
		key, ok := keyOf(&msgs[i])
		if ok && i < len(c.keys) && c.keys[i] == key {
			span := c.spans[i]
			buf.Write(c.body[span[0]:span[1]])
		} else if err := msgs[i].encode(buf); err != nil {
			return fmt.Errorf("message %d %w", i, err)
		}
		if ok {
			keys[i] = key
		}
		spans[i] = [2]int{start, buf.Len()}
	}
	if c != nil {
		c.keys, c.spans = keys, spans
	}
	return nil
}

// done keeps the finished body whose messages encodeMessages laid out.
func (c *EncodeCache) done(body []byte) { c.body = body }

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
