// Package sdkproto speaks the stream-json protocol of the Claude Agent SDKs
// on a process's standard input and output: JSON lines in both directions,
// user messages and control requests from the SDK, session messages and
// control requests (permission prompts, hook callbacks) from tack. The
// protocol is described in shared/compat/sdk-protocol.md.
//
// Serve runs one session over the protocol with an agent.Client: user
// messages are queued and run in order in one conversation, control
// requests are answered at once, and stdin's end finishes the queued work.
package sdkproto

import (
	"encoding/json"
	"strings"

	"github.com/tackcode/tack/agent"
)

// Frame types.
const (
	typeControlRequest  = "control_request"
	typeControlResponse = "control_response"
	typeControlCancel   = "control_cancel_request"
	typeUser            = "user"
	typeKeepAlive       = "keep_alive"
	typeMirror          = "transcript_mirror"
)

// MirrorFrame is a transcript_mirror frame (--session-mirror): records
// just appended to the transcript at FilePath, for the SDK to append to its
// sessionStore. The SDK names the store's key after FilePath's place under
// $CLAUDE_CONFIG_DIR/projects: <project>/<session>.jsonl, or
// <project>/<session>/subagents/agent-<id>.jsonl for a subagent's.
type MirrorFrame struct {
	Type     string            `json:"type"`
	FilePath string            `json:"filePath"`
	Entries  []json.RawMessage `json:"entries"`
}

// NewMirrorFrame is the frame of lines appended to the transcript at path.
func NewMirrorFrame(path string, lines []json.RawMessage) MirrorFrame {
	return MirrorFrame{Type: typeMirror, FilePath: path, Entries: lines}
}

// ErrorCodeUnsupported marks the answer to a control request subtype tack
// does not handle.
const ErrorCodeUnsupported = "unsupported_request"

// inFrame is one line read from the SDK. Only the fields of its type are set.
type inFrame struct {
	Type string `json:"type"`
	// control_request, control_cancel_request
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	// control_response
	Response *controlResponse `json:"response"`
	// user
	Message json.RawMessage `json:"message"`
	UUID    string          `json:"uuid"`
	// Priority "now" joins the running turn; "next" and "later" (and
	// none) queue the message after it.
	Priority string `json:"priority"`

	line int // where it was read, for messages
}

// controlResponse is the body of a control_response frame, both ways.
type controlResponse struct {
	Subtype   string `json:"subtype"` // success or error
	RequestID string `json:"request_id"`
	Response  any    `json:"response,omitempty"`
	Error     string `json:"error,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
}

// inResponse is a controlResponse as read, its payload left raw.
type inResponse struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Response  json.RawMessage `json:"response"`
	Error     string          `json:"error"`
}

// UnmarshalJSON keeps the response payload raw.
func (r *controlResponse) UnmarshalJSON(data []byte) error {
	var in inResponse
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*r = controlResponse{Subtype: in.Subtype, RequestID: in.RequestID, Error: in.Error}
	if len(in.Response) > 0 {
		r.Response = in.Response
	}
	return nil
}

// raw is the response payload as read.
func (r *controlResponse) raw() json.RawMessage {
	if b, ok := r.Response.(json.RawMessage); ok {
		return b
	}
	return nil
}

// outControlResponse is a control_response line written to the SDK.
type outControlResponse struct {
	Type     string          `json:"type"`
	Response controlResponse `json:"response"`
}

// outControlRequest is a control_request line written to the SDK.
type outControlRequest struct {
	Type      string         `json:"type"`
	RequestID string         `json:"request_id"`
	Request   map[string]any `json:"request"`
}

// outCancel withdraws a control request tack no longer waits for.
type outCancel struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
}

// userMessage is the "message" of a user frame: content is a string or an
// array of content blocks.
type userMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// promptContent reads a user message: its text (the string content, or the
// text blocks joined) and, when it has blocks other than text (images,
// documents), all of its blocks. dropped counts blocks a prompt cannot
// carry (tool results and the like).
func promptContent(raw json.RawMessage) (text string, blocks []agent.ContentBlock, dropped int, err error) {
	text, dropped, err = promptText(raw)
	if err != nil || dropped == 0 {
		return text, nil, dropped, err
	}
	var m userMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", nil, 0, err
	}
	var all []agent.ContentBlock
	if err := json.Unmarshal(m.Content, &all); err != nil {
		return "", nil, 0, err
	}
	dropped = 0
	for _, b := range all {
		switch b.Type {
		case agent.BlockText, agent.BlockImage, agent.BlockDocument:
			blocks = append(blocks, b)
		default:
			dropped++
		}
	}
	return text, blocks, dropped, nil
}

// promptText returns the text of a user message: the string content, or
// its text blocks joined. dropped counts blocks that are not text.
func promptText(raw json.RawMessage) (text string, dropped int, err error) {
	var m userMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", 0, err
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, 0, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &blocks); err != nil {
		return "", 0, err
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			dropped++
		}
	}
	return strings.Join(parts, "\n\n"), dropped, nil
}
