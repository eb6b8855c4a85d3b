package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// fakeModel is the one model GET /v1/models lists.
const fakeModel = "claude-sonnet-4-5"

// serveModels answers GET /v1/models (what a health check asks) with one
// model, after the header checks of every request; it consumes no turn.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("anthropic-version") == "" && r.Header.Get("x-api-key") == "" {
		s.serveChatModels(w, r)
		return
	}
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now(), TurnIndex: -1}
	var p problems
	if r.Method != http.MethodGet {
		p.add("method %s, want GET", r.Method)
	}
	if v := r.Header.Get("anthropic-version"); v != apiVersion {
		p.add("header anthropic-version is %q, want %q", v, apiVersion)
	}
	bearer, isBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if r.Header.Get("x-api-key") == "" && (!isBearer || strings.TrimSpace(bearer) == "") {
		p.add("no credentials: want header x-api-key or authorization: Bearer <token>")
	}
	req.Violations = p
	s.mu.Lock()
	idx := s.record(req)
	s.mu.Unlock()
	s.report(req, idx)
	defer s.finish(req)
	if len(p) > 0 {
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf("llmtest: %s", strings.Join(p, "; ")), "", true)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"data":     []map[string]any{{"type": "model", "id": fakeModel, "display_name": "Fake", "created_at": "2025-01-01T00:00:00Z"}},
		"has_more": false, "first_id": fakeModel, "last_id": fakeModel,
	})
}

// serveChatModels answers GET /v1/models as an OpenAI-compatible server
// does: a request without the Messages API's headers is one for the Chat
// Completions side. With ChatKey set, another key is refused with a 401.
func (s *Server) serveChatModels(w http.ResponseWriter, r *http.Request) {
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Received: time.Now(), TurnIndex: -1, chat: true}
	var p problems
	if r.Method != http.MethodGet {
		p.add("method %s, want GET", r.Method)
	}
	req.Violations = p
	s.mu.Lock()
	idx := s.record(req)
	s.mu.Unlock()
	s.report(req, idx)
	defer s.finish(req)
	w.Header().Set("Content-Type", "application/json")
	if bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); s.chatKey != "" && bearer != s.chatKey {
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})
		return
	}
	if len(p) > 0 {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "llmtest: " + strings.Join(p, "; "), "type": "invalid_request_error"}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{{"id": fakeModel, "object": "model", "owned_by": "llmtest"}}})
}
