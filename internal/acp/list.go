package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// ListSessions is session/list: tack's stored sessions of a working
// directory (the one tack acp started in when the client names none),
// the most recent first, in one page.
func (s *server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	opts := s.opts.Base
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(fmt.Sprintf("cwd %q is not an absolute path", *p.Cwd))
		}
		opts.Cwd = *p.Cwd
	}
	infos, err := agent.ListSessions(opts)
	if err != nil {
		return sdk.ListSessionsResponse{}, fmt.Errorf("list sessions: %w", err)
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for _, info := range infos {
		si := sdk.SessionInfo{SessionId: sdk.SessionId(info.ID), Cwd: info.Cwd}
		if si.Cwd == "" {
			si.Cwd = opts.Cwd
		}
		if info.Summary != "" {
			si.Title = sdk.Ptr(info.Summary)
		}
		if !info.Modified.IsZero() {
			si.UpdatedAt = sdk.Ptr(info.Modified.UTC().Format(time.RFC3339))
		}
		out.Sessions = append(out.Sessions, si)
	}
	return out, nil
}
