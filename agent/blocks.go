package agent

import (
	"encoding/base64"
	"encoding/json"

	"github.com/tackcode/tack/internal/llm"
)

// Content block types (ContentBlock.Type). A block of another type (a web
// search result, a citation…) keeps its JSON in ContentBlock.Raw and is
// sent back as it came.
const (
	BlockText             = "text"
	BlockImage            = "image"
	BlockDocument         = "document" // carried in Raw
	BlockToolUse          = "tool_use"
	BlockToolResult       = "tool_result"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
	BlockServerToolUse    = "server_tool_use"
)

// Message roles (MessageParam.Role, APIMessage.Role).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ContentBlock is one block of a message's content, in the Messages API's
// form. Only the fields of its Type are meaningful, and its JSON holds
// exactly those.
type ContentBlock struct {
	Type string

	// Text is a text block's text.
	Text string

	// ID, Name and Input are a tool_use (or server_tool_use) block's call.
	ID    string
	Name  string
	Input json.RawMessage

	// ToolUseID, Content and IsError are a tool_result block's: the call it
	// answers, its text and image blocks, and whether the call failed.
	ToolUseID string
	Content   []ContentBlock
	IsError   bool

	// Thinking and Signature are a thinking block's; Data a
	// redacted_thinking block's.
	Thinking  string
	Signature string
	Data      string

	// Source is an image block's image.
	Source *ImageSource

	// Raw is the JSON of a block of a type tack does not model (documents,
	// web search results, citations…), sent back unchanged.
	Raw json.RawMessage

	// CacheControl marks a prompt-cache breakpoint after the block.
	CacheControl *CacheControl
}

// ImageSource is where an image block's image comes from: base64 Data of
// MediaType, or a URL.
type ImageSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// CacheControl is a prompt-cache breakpoint: Type "ephemeral", TTL "5m" or
// "1h".
type CacheControl struct {
	Type string `json:"type"`
	TTL  string `json:"ttl,omitempty"`
}

// TextBlock is a text block, e.g. for a prompt's Content.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: BlockText, Text: text} }

// ImageBlock is an image for a prompt's Content: data in mediaType
// (image/png, image/jpeg, image/gif or image/webp).
func ImageBlock(mediaType string, data []byte) ContentBlock {
	return ContentBlock{Type: BlockImage, Source: &ImageSource{Type: "base64", MediaType: mediaType,
		Data: base64.StdEncoding.EncodeToString(data)}}
}

// TextOf joins the text of the text blocks of content.
func TextOf(content []ContentBlock) string { return llm.TextOf(llmBlocks(content)) }

// MarshalJSON writes the block as the Messages API takes it.
func (b ContentBlock) MarshalJSON() ([]byte, error) { return b.llm().MarshalJSON() }

// UnmarshalJSON reads a block of any type (see Raw).
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var lb llm.Block
	if err := lb.UnmarshalJSON(data); err != nil {
		return err
	}
	*b = blockOf(lb)
	return nil
}

// MessageParam is a message as the Messages API takes it: a role and
// content blocks.
type MessageParam struct {
	Role    string         `json:"role"`
	Content []ContentBlock `json:"content"`
}

// UnmarshalJSON reads content given as a string (the API's shorthand for
// one text block) or as blocks.
func (m *MessageParam) UnmarshalJSON(data []byte) error {
	var lm llm.Message
	if err := lm.UnmarshalJSON(data); err != nil {
		return err
	}
	*m = messageOf(lm)
	return nil
}

// blockOf is the runtime's block b as the SDK's: a copy, so that what a
// caller does with it stays out of the session.
func blockOf(b llm.Block) ContentBlock {
	out := ContentBlock{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input,
		ToolUseID: b.ToolUseID, Content: blocksOf(b.Content), IsError: b.IsError,
		Thinking: b.Thinking, Signature: b.Signature, Data: b.Data, Raw: b.Raw}
	if b.Source != nil {
		s := ImageSource(*b.Source)
		out.Source = &s
	}
	if b.CacheControl != nil {
		c := CacheControl(*b.CacheControl)
		out.CacheControl = &c
	}
	return out
}

// llm is b as the runtime's block.
func (b ContentBlock) llm() llm.Block {
	out := llm.Block{Type: b.Type, Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input,
		ToolUseID: b.ToolUseID, Content: llmBlocks(b.Content), IsError: b.IsError,
		Thinking: b.Thinking, Signature: b.Signature, Data: b.Data, Raw: b.Raw}
	if b.Source != nil {
		s := llm.ImageSource(*b.Source)
		out.Source = &s
	}
	if b.CacheControl != nil {
		c := llm.CacheControl(*b.CacheControl)
		out.CacheControl = &c
	}
	return out
}

func blocksOf(bs []llm.Block) []ContentBlock { return convert(bs, blockOf) }

func llmBlocks(bs []ContentBlock) []llm.Block { return convert(bs, ContentBlock.llm) }

func messageOf(m llm.Message) MessageParam {
	return MessageParam{Role: string(m.Role), Content: blocksOf(m.Content)}
}

// convert maps f over in, keeping nil nil (JSON null stays null).
func convert[T, U any](in []T, f func(T) U) []U {
	if in == nil {
		return nil
	}
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
