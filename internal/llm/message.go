// Package llm holds the provider-neutral shapes of a conversation with a model:
// messages, content blocks, tool specifications, usage, the model catalogue and
// the Provider interface that the Anthropic client and the test fake implement.
//
// The JSON forms of these types are exactly the Messages API's, so a Message can
// be sent, recorded in a transcript and printed in stream-json without copying.
package llm

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tackcode/tack/internal/jsonx"
)

// Role is the author of a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Block types tack builds or inspects. Others (server tool results, documents…)
// are carried verbatim in Block.Raw.
const (
	TypeText             = "text"
	TypeImage            = "image"
	TypeToolUse          = "tool_use"
	TypeToolResult       = "tool_result"
	TypeThinking         = "thinking"
	TypeRedactedThinking = "redacted_thinking"
	TypeServerToolUse    = "server_tool_use"
)

// Message is one entry of the messages array.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// UnmarshalJSON accepts content as a string (the API's shorthand) or a block list.
func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    Role            `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	blocks, err := decodeContent(raw.Content)
	if err != nil {
		return fmt.Errorf("message content: %w", err)
	}
	m.Content = blocks
	return nil
}

// CacheControl marks a prompt-cache breakpoint.
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// ImageSource is the source of an image block.
type ImageSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Block is one content block. Only the fields of its Type are meaningful; the
// JSON encoding writes exactly those, so an empty input or text is still sent.
type Block struct {
	Type string

	Text string // text

	ID    string          // tool_use, server_tool_use
	Name  string          // tool_use, server_tool_use
	Input json.RawMessage // tool_use, server_tool_use

	ToolUseID string  // tool_result
	Content   []Block // tool_result: text and image blocks
	IsError   bool    // tool_result

	Thinking  string // thinking
	Signature string // thinking
	Data      string // redacted_thinking

	Source *ImageSource // image

	// Raw is the verbatim JSON of a block type tack does not model (web search
	// results, documents, citations…). It is sent back unchanged.
	Raw json.RawMessage

	CacheControl *CacheControl
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: TypeText, Text: s} }

// ToolResult returns a tool_result block with text content.
func ToolResult(toolUseID, text string, isError bool) Block {
	return Block{Type: TypeToolResult, ToolUseID: toolUseID, Content: []Block{Text(text)}, IsError: isError}
}

// MarshalJSON writes the block in the Messages API form.
func (b Block) MarshalJSON() ([]byte, error) {
	if len(b.Raw) > 0 && b.CacheControl == nil {
		return b.Raw, nil
	}
	var buf bytes.Buffer
	buf.Grow(64 + len(b.Text) + len(b.Input) + len(b.Thinking))
	if err := b.encode(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (b Block) encode(buf *bytes.Buffer) error {
	if len(b.Raw) > 0 {
		// A raw block with a breakpoint: splice cache_control into its object.
		trimmed := bytes.TrimSpace(b.Raw)
		if len(trimmed) < 2 || trimmed[len(trimmed)-1] != '}' {
			return fmt.Errorf("raw %s block is not a JSON object", b.Type)
		}
		buf.Write(trimmed[:len(trimmed)-1])
		buf.WriteString(`,"cache_control":`)
		writeJSON(buf, b.CacheControl)
		buf.WriteByte('}')
		return nil
	}
	buf.WriteString(`{"type":`)
	writeString(buf, b.Type)
	switch b.Type {
	case TypeText:
		buf.WriteString(`,"text":`)
		writeString(buf, b.Text)
	case TypeToolUse, TypeServerToolUse:
		buf.WriteString(`,"id":`)
		writeString(buf, b.ID)
		buf.WriteString(`,"name":`)
		writeString(buf, b.Name)
		buf.WriteString(`,"input":`)
		if len(b.Input) == 0 {
			buf.WriteString("{}")
		} else {
			buf.Write(b.Input)
		}
	case TypeToolResult:
		buf.WriteString(`,"tool_use_id":`)
		writeString(buf, b.ToolUseID)
		buf.WriteString(`,"content":`)
		if err := writeResultContent(buf, b.Content); err != nil {
			return err
		}
		if b.IsError {
			buf.WriteString(`,"is_error":true`)
		}
	case TypeThinking:
		buf.WriteString(`,"thinking":`)
		writeString(buf, b.Thinking)
		buf.WriteString(`,"signature":`)
		writeString(buf, b.Signature)
	case TypeRedactedThinking:
		buf.WriteString(`,"data":`)
		writeString(buf, b.Data)
	case TypeImage:
		buf.WriteString(`,"source":`)
		writeJSON(buf, b.Source)
	default:
		return fmt.Errorf("cannot encode content block of type %q without raw JSON", b.Type)
	}
	if b.CacheControl != nil {
		buf.WriteString(`,"cache_control":`)
		writeJSON(buf, b.CacheControl)
	}
	buf.WriteByte('}')
	return nil
}

// writeResultContent writes tool_result content: a plain string when it is a
// single text block (the form Claude Code sends), otherwise a block array.
func writeResultContent(buf *bytes.Buffer, blocks []Block) error {
	if len(blocks) == 1 && blocks[0].Type == TypeText && blocks[0].CacheControl == nil {
		writeString(buf, blocks[0].Text)
		return nil
	}
	if len(blocks) == 0 {
		buf.WriteString(`""`)
		return nil
	}
	buf.WriteByte('[')
	for i, c := range blocks {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := c.encode(buf); err != nil {
			return err
		}
	}
	buf.WriteByte(']')
	return nil
}

// UnmarshalJSON reads any block; types tack does not model keep their JSON in Raw.
func (b *Block) UnmarshalJSON(data []byte) error {
	var w struct {
		Type         string          `json:"type"`
		Text         *string         `json:"text"`
		ID           string          `json:"id"`
		Name         string          `json:"name"`
		Input        json.RawMessage `json:"input"`
		ToolUseID    string          `json:"tool_use_id"`
		Content      json.RawMessage `json:"content"`
		IsError      bool            `json:"is_error"`
		Thinking     string          `json:"thinking"`
		Signature    string          `json:"signature"`
		Data         string          `json:"data"`
		Source       *ImageSource    `json:"source"`
		Citations    json.RawMessage `json:"citations"`
		CacheControl *CacheControl   `json:"cache_control"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*b = Block{Type: w.Type, CacheControl: w.CacheControl}
	switch w.Type {
	case TypeText:
		if len(w.Citations) > 0 && string(w.Citations) != "null" {
			b.Raw = append(json.RawMessage(nil), data...)
		}
		if w.Text != nil {
			b.Text = *w.Text
		}
	case TypeToolUse, TypeServerToolUse:
		b.ID, b.Name, b.Input = w.ID, w.Name, w.Input
	case TypeToolResult:
		b.ToolUseID, b.IsError = w.ToolUseID, w.IsError
		content, err := decodeContent(w.Content)
		if err != nil {
			return fmt.Errorf("tool_result content: %w", err)
		}
		b.Content = content
	case TypeThinking:
		b.Thinking, b.Signature = w.Thinking, w.Signature
	case TypeRedactedThinking:
		b.Data = w.Data
	case TypeImage:
		b.Source = w.Source
		if w.Source == nil {
			b.Raw = append(json.RawMessage(nil), data...)
		}
	default:
		b.Raw = append(json.RawMessage(nil), data...)
		b.CacheControl = nil
	}
	return nil
}

// decodeContent reads message or tool_result content: a string or a block array.
func decodeContent(raw json.RawMessage) ([]Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []Block{Text(s)}, nil
	}
	var blocks []Block
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	return blocks, nil
}

// TextOf joins the text blocks of content.
func TextOf(content []Block) string {
	var n int
	for _, b := range content {
		if b.Type == TypeText {
			n += len(b.Text)
		}
	}
	out := make([]byte, 0, n)
	for _, b := range content {
		if b.Type == TypeText {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}

func writeString(buf *bytes.Buffer, s string) {
	buf.Write(jsonx.AppendString(buf.AvailableBuffer(), s))
}

func writeJSON(buf *bytes.Buffer, v any) {
	enc, err := jsonx.Marshal(v)
	if err != nil {
		buf.WriteString("null")
		return
	}
	buf.Write(enc)
}
