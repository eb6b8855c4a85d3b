package llmtest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/llm"
)

// streamParams is what one streamed response is made of.
type streamParams struct {
	msgID      string
	model      string
	content    []llm.Block // ids and signatures already filled in
	stopReason string
	usage      llm.Usage
}

// stream is a rendered SSE response: all frames in one buffer, so serving it
// costs one allocation and a write per event.
type stream struct {
	buf  []byte
	ends []int // ends[i] is the end offset of frame i in buf
}

func (s *stream) count() int { return len(s.ends) }

// frame returns the bytes of event i, "event: …\ndata: …\n\n".
func (s *stream) frame(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.buf[start:s.ends[i]]
}

// begin opens a frame for event name; the caller appends the JSON data to
// s.buf and calls end.
func (s *stream) begin(name string) {
	s.buf = append(s.buf, "event: "...)
	s.buf = append(s.buf, name...)
	s.buf = append(s.buf, "\ndata: "...)
}

func (s *stream) end() {
	s.buf = append(s.buf, "\n\n"...)
	s.ends = append(s.ends, len(s.buf))
}

// renderStream lays out a response the way the Messages API streams it:
// message_start, ping, start/delta…/stop per block, message_delta, message_stop.
func renderStream(p streamParams) *stream {
	size := 512
	for _, b := range p.content {
		size += 256 + 2*(len(b.Text)+len(b.Input)+len(b.Thinking)+len(b.Data)+len(b.Raw))
	}
	s := &stream{buf: make([]byte, 0, size)}

	s.begin("message_start")
	s.buf = append(s.buf, `{"type":"message_start","message":{"id":`...)
	s.buf = jsonx.AppendString(s.buf, p.msgID)
	s.buf = append(s.buf, `,"type":"message","role":"assistant","model":`...)
	s.buf = jsonx.AppendString(s.buf, p.model)
	s.buf = append(s.buf, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	startUsage := p.usage
	startUsage.OutputTokens = 1 // the API reports one output token before any content
	s.buf = appendJSON(s.buf, startUsage)
	s.buf = append(s.buf, "}}"...)
	s.end()

	s.begin("ping")
	s.buf = append(s.buf, `{"type":"ping"}`...)
	s.end()

	for i, b := range p.content {
		s.block(i, b)
	}

	s.begin("message_delta")
	s.buf = append(s.buf, `{"type":"message_delta","delta":{"stop_reason":`...)
	s.buf = jsonx.AppendString(s.buf, p.stopReason)
	s.buf = append(s.buf, `,"stop_sequence":null},"usage":`...)
	s.buf = appendJSON(s.buf, p.usage)
	s.buf = append(s.buf, '}')
	s.end()

	s.begin("message_stop")
	s.buf = append(s.buf, `{"type":"message_stop"}`...)
	s.end()
	return s
}

// block renders content block i: its start, deltas and stop events.
func (s *stream) block(i int, b llm.Block) {
	s.begin("content_block_start")
	s.buf = append(s.buf, `{"type":"content_block_start","index":`...)
	s.buf = strconv.AppendInt(s.buf, int64(i), 10)
	s.buf = append(s.buf, `,"content_block":`...)
	switch {
	case len(b.Raw) > 0:
		// Blocks tack does not model arrive whole in their start event.
		s.buf = append(s.buf, b.Raw...)
		s.buf = append(s.buf, '}')
		s.end()
	case b.Type == llm.TypeText:
		s.buf = append(s.buf, `{"type":"text","text":""}}`...)
		s.end()
		for _, part := range split(b.Text, textChunks(len(b.Text))) {
			s.delta(i, "text_delta", "text", part)
		}
	case b.Type == llm.TypeToolUse || b.Type == llm.TypeServerToolUse:
		s.buf = append(s.buf, `{"type":`...)
		s.buf = jsonx.AppendString(s.buf, b.Type)
		s.buf = append(s.buf, `,"id":`...)
		s.buf = jsonx.AppendString(s.buf, b.ID)
		s.buf = append(s.buf, `,"name":`...)
		s.buf = jsonx.AppendString(s.buf, b.Name)
		s.buf = append(s.buf, `,"input":{}}}`...)
		s.end()
		// Like the API: an empty first fragment, then the input in pieces
		// (none for an empty input), so a cut can land in the middle of it.
		s.delta(i, "input_json_delta", "partial_json", "")
		if in := compactInput(b.Input); in != "{}" {
			for _, part := range split(in, jsonChunks(len(in))) {
				s.delta(i, "input_json_delta", "partial_json", part)
			}
		}
	case b.Type == llm.TypeThinking:
		s.buf = append(s.buf, `{"type":"thinking","thinking":"","signature":""}}`...)
		s.end()
		for _, part := range split(b.Thinking, textChunks(len(b.Thinking))) {
			s.delta(i, "thinking_delta", "thinking", part)
		}
		s.delta(i, "signature_delta", "signature", b.Signature)
	default:
		// redacted_thinking and anything else validateBlock let through: whole.
		enc, err := b.MarshalJSON()
		if err != nil {
			enc = []byte(`{}`) // unreachable for validated turns
		}
		s.buf = append(s.buf, enc...)
		s.buf = append(s.buf, '}')
		s.end()
	}
	s.begin("content_block_stop")
	s.buf = append(s.buf, `{"type":"content_block_stop","index":`...)
	s.buf = strconv.AppendInt(s.buf, int64(i), 10)
	s.buf = append(s.buf, '}')
	s.end()
}

func (s *stream) delta(i int, typ, field, value string) {
	s.begin("content_block_delta")
	s.buf = append(s.buf, `{"type":"content_block_delta","index":`...)
	s.buf = strconv.AppendInt(s.buf, int64(i), 10)
	s.buf = append(s.buf, `,"delta":{"type":"`...)
	s.buf = append(s.buf, typ...)
	s.buf = append(s.buf, `","`...)
	s.buf = append(s.buf, field...)
	s.buf = append(s.buf, `":`...)
	s.buf = jsonx.AppendString(s.buf, value)
	s.buf = append(s.buf, "}}"...)
	s.end()
}

// textChunks is how many text_delta or thinking_delta events carry n bytes:
// a few, as a model streams a short answer.
func textChunks(n int) int { return min(4, max(1, n/16)) }

// jsonChunks is how many input_json_delta fragments carry n bytes of input:
// at least two, so a cut can always split the input.
func jsonChunks(n int) int { return min(6, max(2, n/8)) }

// split cuts s into at most n pieces of about as many runes each. Cuts fall
// on rune boundaries because each piece is JSON-encoded on its own, where
// half a rune would be corrupted. The empty string gives no pieces.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	n = min(n, runes)
	parts := make([]string, 0, n)
	// Piece k ends after k*runes/n runes; these bounds strictly increase
	// because n <= runes, so no piece is empty.
	k, r, start := 1, 0, 0
	for i := range s {
		if k < n && r == k*runes/n {
			parts = append(parts, s[start:i])
			start = i
			k++
		}
		r++
	}
	return append(parts, s[start:])
}

// compactInput returns the tool input as compact JSON, "{}" when empty.
func compactInput(in json.RawMessage) string {
	if len(in) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, in); err != nil {
		return string(in) // validated earlier; keep what was given
	}
	return buf.String()
}

func appendJSON(dst []byte, v any) []byte {
	enc, err := jsonx.Marshal(v)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, enc...)
}
