package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tackcode/tack/internal/llm"
)

// modelRef names a model in capability errors.
type modelRef struct{ provider, model, key string }

// CapabilityError is a request a model cannot take: images to a model
// without images, tools to one without tools.
type CapabilityError struct {
	Provider, Model string
	// Capability is the settings key that would allow it: "tools", "images".
	Capability string
	What       string // what the request holds: "3 tools", "an image"
	Key        string // where the provider is configured
}

func (e *CapabilityError) Error() string {
	return fmt.Sprintf("provider %q model %q does not take %s, and the request holds %s (set %q: true under models.%s of %s if the model does)",
		e.Provider, e.Model, e.Capability, e.What, e.Capability, e.Model, e.Key)
}

func (r modelRef) lacks(capability, what string) error {
	return &CapabilityError{Provider: r.provider, Model: r.model, Capability: capability, What: what, Key: r.key}
}

// The Chat Completions request, as far as tack writes it.
type chatRequest struct {
	Model         string          `json:"model"`
	Messages      []chatMessage   `json:"messages"`
	Tools         []chatTool      `json:"tools,omitempty"`
	ToolChoice    any             `json:"tool_choice,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	User          string          `json:"user,omitempty"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options,omitempty"`
	Reasoning     json.RawMessage `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role string `json:"role"`
	// Content is a string, a list of parts, or null (an assistant message
	// that only calls tools).
	Content    any        `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"` // text, image_url
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function functionSpec `json:"function"`
}

type functionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// encode translates req into a Chat Completions body for model.
func encode(req *llm.Request, model string, caps Capabilities, ref modelRef) ([]byte, error) {
	out := chatRequest{
		Model:         model,
		MaxTokens:     req.MaxTokens,
		Temperature:   req.Temperature,
		User:          req.UserID,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	if caps.Reasoning && req.Effort != "" {
		// Chat Completions knows low, medium and high; tack's higher
		// efforts ask for the most it has.
		effort := req.Effort
		if effort == "xhigh" || effort == "max" {
			effort = "high"
		}
		out.Reasoning, _ = json.Marshal(effort)
	}
	if sys := systemText(req.System); sys != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: sys})
	}
	for i, m := range req.Messages {
		msgs, err := encodeMessage(m, caps, ref)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		out.Messages = append(out.Messages, msgs...)
	}
	if len(req.Tools) > 0 {
		if !caps.Tools {
			return nil, ref.lacks("tools", fmt.Sprintf("%d tools", len(req.Tools)))
		}
		for _, t := range req.Tools {
			if len(t.Raw) > 0 {
				return nil, fmt.Errorf("provider %q model %q: the request holds a server tool (%s), which only the Anthropic API runs",
					ref.provider, ref.model, serverToolName(t.Raw))
			}
			out.Tools = append(out.Tools, chatTool{Type: "function", Function: functionSpec{
				Name: t.Name, Description: t.Description, Parameters: schema(t.InputSchema),
			}})
		}
		choice, err := toolChoice(req.ToolChoice)
		if err != nil {
			return nil, err
		}
		out.ToolChoice = choice
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode chat request: %w", err)
	}
	return body, nil
}

// systemText joins the system blocks; cache breakpoints have no equivalent.
func systemText(blocks []llm.Block) string {
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == llm.TypeText && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// schema is a tool's JSON Schema, compact; an absent one is an empty object.
func schema(s json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(s)) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, s) != nil {
		return s
	}
	return buf.Bytes()
}

func serverToolName(raw json.RawMessage) string {
	var t struct{ Name, Type string }
	_ = json.Unmarshal(raw, &t)
	if t.Name != "" {
		return t.Name
	}
	return t.Type
}

// toolChoice maps the Messages API's tool_choice: auto, any (some tool:
// "required"), tool (that one), none.
func toolChoice(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("tool_choice: %w", err)
	}
	switch c.Type {
	case "auto", "none":
		return c.Type, nil
	case "any":
		return "required", nil
	case "tool":
		return map[string]any{"type": "function", "function": map[string]string{"name": c.Name}}, nil
	}
	return nil, fmt.Errorf("tool_choice of type %q has no Chat Completions form", c.Type)
}

// encodeMessage translates one message. A user message becomes one "tool"
// message per tool_result (they must directly follow the assistant's
// tool_calls), then, when a result held images, a user message carrying
// them (tool messages take only text), then a user message with the rest.
func encodeMessage(m llm.Message, caps Capabilities, ref modelRef) ([]chatMessage, error) {
	if m.Role == llm.RoleAssistant {
		return []chatMessage{encodeAssistant(m)}, nil
	}
	var out []chatMessage
	var resultImages []contentPart
	var parts []contentPart
	for _, b := range m.Content {
		switch b.Type {
		case llm.TypeToolResult:
			text, images := toolResult(b, caps, ref)
			out = append(out, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: text})
			if len(images) > 0 {
				resultImages = append(resultImages, contentPart{Type: "text", Text: "The images the tool call " + b.ToolUseID + " returned:"})
				resultImages = append(resultImages, images...)
			}
		case llm.TypeText:
			if len(b.Raw) > 0 && b.Text == "" {
				continue
			}
			parts = append(parts, contentPart{Type: "text", Text: b.Text})
		case llm.TypeImage:
			if !caps.Images {
				return nil, ref.lacks("images", "an image")
			}
			part, err := image(b)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		default:
			return nil, fmt.Errorf("provider %q model %q: a %s block has no Chat Completions form", ref.provider, ref.model, b.Type)
		}
	}
	if len(resultImages) > 0 {
		out = append(out, chatMessage{Role: "user", Content: resultImages})
	}
	if len(parts) > 0 {
		out = append(out, chatMessage{Role: "user", Content: userContent(parts)})
	}
	return out, nil
}

// userContent is the parts as a plain string when they are all text (the
// form every server takes), else the list.
func userContent(parts []contentPart) any {
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Type != "text" {
			return parts
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n\n")
}

// toolResult is a tool_result's text, and its images as parts when the
// model takes images; without, each image is a line saying it was left out.
func toolResult(b llm.Block, caps Capabilities, ref modelRef) (string, []contentPart) {
	var texts []string
	var images []contentPart
	for _, c := range b.Content {
		switch c.Type {
		case llm.TypeText:
			texts = append(texts, c.Text)
		case llm.TypeImage:
			part, err := image(c)
			if caps.Images && err == nil {
				images = append(images, part)
				continue
			}
			texts = append(texts, fmt.Sprintf("[an image was left out: provider %q model %q does not take images]", ref.provider, ref.model))
		}
	}
	text := strings.Join(texts, "\n")
	if b.IsError {
		text = "Error: " + text
	}
	return text, images
}

// image is an image block as an image_url part (a data URL for base64).
func image(b llm.Block) (contentPart, error) {
	s := b.Source
	switch {
	case s == nil:
		return contentPart{}, fmt.Errorf("image block without a source")
	case s.Type == "url":
		return contentPart{Type: "image_url", ImageURL: &imageURL{URL: s.URL}}, nil
	case s.Type == "base64":
		return contentPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + s.MediaType + ";base64," + s.Data}}, nil
	}
	return contentPart{}, fmt.Errorf("image source of type %q has no Chat Completions form", s.Type)
}

// encodeAssistant translates an assistant message: its text, and its
// tool_use blocks as tool_calls. Thinking is not sent back: Chat
// Completions servers that stream reasoning do not take it as input.
func encodeAssistant(m llm.Message) chatMessage {
	out := chatMessage{Role: "assistant"}
	var text []string
	for _, b := range m.Content {
		switch b.Type {
		case llm.TypeText:
			text = append(text, b.Text)
		case llm.TypeToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, toolCall{ID: b.ID, Type: "function", Function: functionCall{Name: b.Name, Arguments: args}})
		}
	}
	if len(text) > 0 {
		out.Content = strings.Join(text, "")
	} else if len(out.ToolCalls) == 0 {
		out.Content = ""
	}
	return out
}
