package llmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
)

// forwardWhole serves a platform's non-streaming call (Bedrock's invoke,
// Vertex's rawPredict): the Server streams the turn as it always does, and
// the events are gathered into the one Message object the platform
// answers with. Claude Code makes such calls on the platforms (its model
// availability probes), so the fakes serve them for side-by-side runs.
func (f *Front) forwardWhole(w http.ResponseWriter, r *http.Request, body []byte) {
	rec := httptest.NewRecorder()
	f.forward(rec, r, body)
	if rec.Code >= 400 {
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		return
	}
	msg, err := gatherMessage(rec.Body.Bytes())
	if err != nil {
		f.reject(w, r, http.StatusInternalServerError, "gather the streamed turn: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(msg)
}

// gatherMessage folds a Messages API event stream into the Message it
// describes: message_start's message, each block with its deltas applied,
// and message_delta's stop reason and usage.
func gatherMessage(sse []byte) ([]byte, error) {
	var msg map[string]any
	var blocks []map[string]any
	partial := map[int]*strings.Builder{}
	sc := bufio.NewScanner(bytes.NewReader(sse))
	sc.Buffer(make([]byte, 0, 64*1024), len(sse)+1)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			Message      map[string]any  `json:"message"`
			ContentBlock map[string]any  `json:"content_block"`
			Delta        json.RawMessage `json:"delta"`
			Usage        map[string]any  `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, fmt.Errorf("event %q: %w", data, err)
		}
		switch ev.Type {
		case "message_start":
			msg = ev.Message
		case "content_block_start":
			for len(blocks) <= ev.Index {
				blocks = append(blocks, nil)
			}
			blocks[ev.Index] = ev.ContentBlock
		case "content_block_delta":
			if ev.Index >= len(blocks) || blocks[ev.Index] == nil {
				return nil, fmt.Errorf("delta for block %d before its start", ev.Index)
			}
			var d map[string]any
			if err := json.Unmarshal(ev.Delta, &d); err != nil {
				return nil, fmt.Errorf("delta %s: %w", ev.Delta, err)
			}
			b := blocks[ev.Index]
			switch d["type"] {
			case "text_delta":
				b["text"] = fmt.Sprint(b["text"]) + fmt.Sprint(d["text"])
			case "thinking_delta":
				b["thinking"] = fmt.Sprint(b["thinking"]) + fmt.Sprint(d["thinking"])
			case "signature_delta":
				b["signature"] = d["signature"]
			case "input_json_delta":
				if partial[ev.Index] == nil {
					partial[ev.Index] = &strings.Builder{}
				}
				partial[ev.Index].WriteString(fmt.Sprint(d["partial_json"]))
			}
		case "content_block_stop":
			if sb := partial[ev.Index]; sb != nil && ev.Index < len(blocks) {
				var input any
				if err := json.Unmarshal([]byte(sb.String()), &input); err != nil {
					return nil, fmt.Errorf("tool input of block %d: %w", ev.Index, err)
				}
				blocks[ev.Index]["input"] = input
			}
		case "message_delta":
			if msg == nil {
				return nil, fmt.Errorf("message_delta before message_start")
			}
			var d map[string]any
			if err := json.Unmarshal(ev.Delta, &d); err != nil {
				return nil, fmt.Errorf("message delta %s: %w", ev.Delta, err)
			}
			for k, v := range d {
				msg[k] = v
			}
			if u, ok := msg["usage"].(map[string]any); ok {
				for k, v := range ev.Usage {
					u[k] = v
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if msg == nil {
		return nil, fmt.Errorf("no message_start in %d bytes", len(sse))
	}
	content := make([]any, 0, len(blocks))
	for _, b := range blocks {
		content = append(content, b)
	}
	msg["content"] = content
	return json.Marshal(msg)
}
