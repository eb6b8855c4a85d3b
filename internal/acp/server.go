package acp

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

// authDescription tells the user how tack finds its credentials.
//
//go:embed auth.md
var authDescription string

// authMethodID names tack's one authentication method: credentials from
// the environment or tack's own login, never handled over ACP.
const authMethodID = "tack-credentials"

// server is the agent side of one connection.
type server struct {
	ctx   context.Context // the connection's: sessions live as long as it
	opts  Options
	conn  *sdk.AgentSideConnection
	ready chan struct{} // closed once conn is set

	mu       sync.Mutex
	caps     sdk.ClientCapabilities
	sessions map[string]*session
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

func newServer(ctx context.Context, opts Options) *server {
	return &server{ctx: ctx, opts: opts, ready: make(chan struct{}), sessions: map[string]*session{}}
}

// peer is the connection, once Serve has made it.
func (s *server) peer() *sdk.AgentSideConnection {
	<-s.ready
	return s.conn
}

func (s *server) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.caps = p.ClientCapabilities
	s.mu.Unlock()
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentInfo:       &sdk.Implementation{Name: "tack", Title: sdk.Ptr("tack"), Version: s.opts.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{List: &sdk.SessionListCapabilities{}, Close: &sdk.SessionCloseCapabilities{},
				AdditionalDirectories: &sdk.SessionAdditionalDirectoriesCapabilities{}},
		},
		AuthMethods: []sdk.AuthMethod{{Agent: &sdk.AuthMethodAgent{Id: authMethodID, Name: "Anthropic API key or tack login",
			Description: sdk.Ptr(authDescription)}}},
	}, nil
}

// Authenticate checks that tack has credentials: it takes none over ACP.
func (s *server) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	if p.MethodId != authMethodID {
		return sdk.AuthenticateResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown authentication method %q (tack offers %q)", p.MethodId, authMethodID))
	}
	st, err := agent.GetAuthStatus(ctx, s.opts.Base)
	if err != nil {
		return sdk.AuthenticateResponse{}, fmt.Errorf("authenticate: %w", err)
	}
	if !st.LoggedIn {
		return sdk.AuthenticateResponse{}, sdk.NewAuthRequired(authDescription)
	}
	return sdk.AuthenticateResponse{}, nil
}

func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	sess, err := s.open(ctx, p.Cwd, p.McpServers, p.AdditionalDirectories, "")
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(sess.id), Modes: sess.modeState(), Models: sess.modelState()}, nil
}

// LoadSession resumes one of tack's sessions: its history is sent as
// session/update notifications, then it takes prompts again.
func (s *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	opts, err := s.options(p.Cwd, p.McpServers, p.AdditionalDirectories)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	history, err := agent.SessionMessages(opts, string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("session %s: %v", p.SessionId, err))
	}
	sess, err := s.open(ctx, p.Cwd, p.McpServers, p.AdditionalDirectories, string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	if err := sess.replay(ctx, history); err != nil {
		return sdk.LoadSessionResponse{}, fmt.Errorf("load session %s: %w", p.SessionId, err)
	}
	return sdk.LoadSessionResponse{Modes: sess.modeState(), Models: sess.modelState()}, nil
}

// options are the session options for a working directory and the
// client's MCP servers.
func (s *server) options(cwd string, servers []sdk.McpServer, dirs []string) (agent.Options, error) {
	if !filepath.IsAbs(cwd) {
		return agent.Options{}, sdk.NewInvalidParams(fmt.Sprintf("cwd %q is not an absolute path", cwd))
	}
	if info, err := os.Stat(cwd); err != nil || !info.IsDir() {
		return agent.Options{}, sdk.NewInvalidParams(fmt.Sprintf("cwd %q is not a directory", cwd))
	}
	opts := s.opts.Base
	opts.Cwd = cwd
	opts.AddDirs = append(append([]string{}, opts.AddDirs...), dirs...)
	mcp, err := mcpServers(servers)
	if err != nil {
		return agent.Options{}, sdk.NewInvalidParams(err.Error())
	}
	if len(mcp) > 0 {
		all := map[string]agent.MCPServerConfig{}
		for k, v := range opts.MCPServers {
			all[k] = v
		}
		for k, v := range mcp {
			all[k] = v
		}
		opts.MCPServers = all
	}
	opts.IncludePartialMessages = true
	if opts.Entrypoint == "" {
		opts.Entrypoint = "acp"
	}
	return opts, nil
}

// open starts a session (resuming resume when it is set) and keeps it.
func (s *server) open(ctx context.Context, cwd string, servers []sdk.McpServer, dirs []string, resume string) (*session, error) {
	opts, err := s.options(cwd, servers, dirs)
	if err != nil {
		return nil, err
	}
	opts.Resume = resume
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	sess, err := startSession(s.ctx, s.peer(), opts, caps)
	if errors.Is(err, agent.ErrNoCredentials) {
		// The client shows the auth methods of initialize.
		return nil, sdk.NewAuthRequired(map[string]any{"error": err.Error(), "authMethods": []string{authMethodID}})
	}
	if err != nil {
		return nil, fmt.Errorf("start session in %s: %w", cwd, err)
	}
	s.mu.Lock()
	if old := s.sessions[sess.id]; old != nil {
		defer old.close()
	}
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	return sess, nil
}

func (s *server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[string(id)]; sess != nil {
		return sess, nil
	}
	return nil, sdk.NewInvalidParams(fmt.Sprintf("no session %q on this connection (session/new or session/load first)", id))
}

func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	return sess.prompt(ctx, p)
}

func (s *server) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return err
	}
	sess.cancel()
	return nil
}

func (s *server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := sess.setMode(ctx, string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(err.Error())
	}
	return sdk.SetSessionModeResponse{}, nil
}

// UnstableSetSessionModel is session/set_model, still unstable in ACP.
func (s *server) UnstableSetSessionModel(ctx context.Context, p sdk.UnstableSetSessionModelRequest) (sdk.UnstableSetSessionModelResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if _, err := sess.client.SetModel(string(p.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, sdk.NewInvalidParams(err.Error())
	}
	return sdk.UnstableSetSessionModelResponse{}, nil
}

func (s *server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	sess := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if sess == nil {
		return sdk.CloseSessionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("no session %q", p.SessionId))
	}
	sess.close()
	return sdk.CloseSessionResponse{}, nil
}

// The methods tack does not offer (initialize does not advertise them).

func (s *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

func (s *server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// closeAll ends every session, as the connection has.
func (s *server) closeAll() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, sess := range all {
		wg.Go(sess.close)
	}
	wg.Wait()
}

// mcpServers turns the client's MCP servers into the session's.
func mcpServers(list []sdk.McpServer) (map[string]agent.MCPServerConfig, error) {
	out := map[string]agent.MCPServerConfig{}
	for i, m := range list {
		var name string
		var cfg agent.MCPServerConfig
		switch {
		case m.Stdio != nil:
			env := map[string]string{}
			for _, e := range m.Stdio.Env {
				env[e.Name] = e.Value
			}
			name, cfg = m.Stdio.Name, agent.MCPStdioServer{Command: m.Stdio.Command, Args: m.Stdio.Args, Env: env}
		case m.Http != nil:
			name, cfg = m.Http.Name, agent.MCPHTTPServer{URL: m.Http.Url, Headers: headers(m.Http.Headers)}
		case m.Sse != nil:
			name, cfg = m.Sse.Name, agent.MCPSSEServer{URL: m.Sse.Url, Headers: headers(m.Sse.Headers)}
		default:
			return nil, fmt.Errorf("mcpServers[%d]: a transport tack does not offer (stdio, http and sse only)", i)
		}
		if name == "" {
			return nil, fmt.Errorf("mcpServers[%d]: no name", i)
		}
		out[name] = cfg
	}
	return out, nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}
