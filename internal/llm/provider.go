package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Provider streams one model response. Implementations retry transient
// failures themselves — including a stream that breaks before message_stop,
// which is retried as a whole request — and return only a complete response,
// so a caller never acts on half a turn.
type Provider interface {
	Stream(ctx context.Context, req *Request, obs Observer) (*Response, error)
}

// Observer receives what happens while a response streams. Both hooks are
// optional and are called on the goroutine that called Stream.
type Observer struct {
	// Event receives every SSE event as it arrives (after a retry the events
	// of the new attempt follow, starting again from message_start).
	Event func(StreamEvent)
	// Retry is told before each retry.
	Retry func(Retry)
}

// StreamEvent is one SSE event of a response.
type StreamEvent struct {
	Type  string          // message_start, content_block_delta, …
	Index int             // block index for content_block_* events
	Delta Delta           // for content_block_delta
	Raw   json.RawMessage // the event's JSON data, verbatim
}

// Delta is the incremental part of a content_block_delta.
type Delta struct {
	Type string // text_delta, input_json_delta, thinking_delta, signature_delta
	Text string // the text, partial JSON, thinking or signature fragment
}

// Retry describes a retry about to happen.
type Retry struct {
	Attempt    int // 1 for the first retry
	MaxRetries int
	Delay      time.Duration
	Status     int // HTTP status, 0 for a broken stream or connection error
	Err        error
	// Cause is the failure in a few words, for people ("API unreachable
	// at http://…: connection refused").
	Cause string
}

// Response is a complete assistant message.
type Response struct {
	ID           string
	Model        string
	Content      []Block
	StopReason   string
	StopSequence string
	Usage        Usage
	RequestID    string
}

// Message returns the response as an assistant message.
func (r *Response) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Content}
}

// APIError is an error response from the API (or an error event in a stream).
type APIError struct {
	Status    int    // HTTP status; 0 when it came as a stream error event
	Type      string // e.g. overloaded_error, invalid_request_error
	Message   string
	RequestID string
}

func (e *APIError) Error() string {
	switch {
	case e.Status != 0 && e.Type != "":
		return fmt.Sprintf("API error %d %s: %s", e.Status, e.Type, e.Message)
	case e.Status != 0:
		return fmt.Sprintf("API error %d: %s", e.Status, e.Message)
	default:
		return fmt.Sprintf("API error %s: %s", e.Type, e.Message)
	}
}
