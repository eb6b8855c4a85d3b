package acp

import (
	"context"
	"fmt"
	"os"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// clientFiles are the session's text files as the client holds them
// (fs/read_text_file, fs/write_text_file): its editor's buffers, unsaved
// changes included.
type clientFiles struct {
	conn    *sdk.AgentSideConnection
	session sdk.SessionId
}

var _ agent.TextFiles = (*clientFiles)(nil)

// delegate routes the file tools through the client when it offers to
// read and write files. A client that offers only one of the two keeps
// the disk for both, so that what is written is what is read.
func (s *session) delegate(opts *agent.Options, caps sdk.ClientCapabilities) {
	if !caps.Fs.ReadTextFile || !caps.Fs.WriteTextFile {
		return
	}
	s.files = &clientFiles{conn: s.conn}
	opts.TextFiles = s.files
}

// delegateTerminal runs Bash's commands in the client's terminals when it
// offers them.
func (s *session) delegateTerminal(opts *agent.Options, caps sdk.ClientCapabilities) {
	if caps.Terminal {
		opts.Terminal = clientTerminal{s}
	}
}

// setSession names the session in the client requests, once it has an id.
func (f *clientFiles) setSession(id string) {
	if f != nil {
		f.session = sdk.SessionId(id)
	}
}

func (f *clientFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	resp, err := f.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: f.session, Path: path})
	if err != nil {
		return "", fmt.Errorf("the editor's fs/read_text_file: %w", err)
	}
	return resp.Content, nil
}

func (f *clientFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if _, err := f.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: f.session, Path: path, Content: content}); err != nil {
		return fmt.Errorf("the editor's fs/write_text_file: %w", err)
	}
	return nil
}

// currentText is path's text as the session's tools would read it, and
// whether the file exists.
func (s *session) currentText(path string) (string, bool) {
	if _, err := os.Stat(path); err != nil {
		return "", false
	}
	if s.files != nil {
		text, err := s.files.ReadTextFile(s.ctx, path)
		return text, err == nil
	}
	b, err := os.ReadFile(path)
	return string(b), err == nil
}
