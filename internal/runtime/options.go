package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/session"
)

// resolveOptions is the first step: the working directory, the session id,
// and — for a continued, resumed or forked session — the stored session,
// whose recorded launch options fill in what this launch leaves unset.
func (s *Session) resolveOptions(context.Context) error {
	pl, err := placeOf(s.cfg)
	if err != nil {
		return err
	}
	cwd := pl.cwd
	if s.cfg.SessionID != "" {
		if _, err := uuid.Parse(s.cfg.SessionID); err != nil {
			return fmt.Errorf("session id %q is not a UUID", s.cfg.SessionID)
		}
	}
	s.cwd, s.root = pl.cwd, pl.root
	s.askedModel = s.cfg.Model
	processEnv := optionsEnv(s.cfg.Env)
	projectDir := session.ProjectDir(session.ConfigDir(processEnv), cwd, processEnv)
	if s.resumed, s.cfg, err = findResumed(s.cfg, projectDir); err != nil {
		return err
	}
	if s.resumed != nil && s.resumed.launch != nil {
		s.costBase = s.resumed.launch.CostUSD
	}
	if !s.cfg.NoSessionPersistence {
		s.projectDir = projectDir
	}
	s.sessionID = s.cfg.SessionID
	if s.sessionID == "" {
		s.sessionID = uuid.NewString()
	}
	return nil
}

// resumed is what a continued, resumed or forked session brings back.
type resumed struct {
	// id is the session the new turns are written to: the original, or
	// the fork's new id.
	id         string
	transcript *session.Transcript
	// workflow, launch and prefix are the session's records
	// (workflow.json, launch.json, prefix.json: the system prompt and
	// tools its first request sent); nil when missing or not valid (a
	// notice said so).
	workflow *session.Workflow
	launch   *session.Launch
	prefix   *session.Prefix
	// agentRestored is set when the main agent comes from the launch
	// record, not from this launch's options.
	agentRestored bool
}

// findResumed locates the session cfg asks to continue, resume or fork,
// loads it, and returns cfg with the launch options the session recorded
// filled in wherever this launch gives none (a flag given now wins).
func findResumed(cfg Config, projectDir string) (*resumed, Config, error) {
	if !cfg.Continue && cfg.Resume == "" {
		if cfg.ForkSession || cfg.ResumeSessionAt != "" || cfg.ResumeDropsTurn != "" {
			return nil, cfg, errors.New("--fork-session, --resume-session-at and --resume-drops-turn need --resume or --continue")
		}
		return nil, cfg, nil
	}
	if cfg.ResumeDropsTurn != "" && cfg.ResumeSessionAt == "" {
		return nil, cfg, errors.New("--resume-drops-turn needs --resume-session-at")
	}
	id, err := findStored(cfg, projectDir)
	if err != nil {
		return nil, cfg, err
	}
	r := &resumed{id: id}
	// The records (small files, each checked against its schema) are
	// read while the transcript is: its reading leaves a core free.
	records := make(chan struct{})
	go func() {
		defer close(records)
		r.loadRecords(cfg, projectDir, id)
	}()
	err = r.loadTranscript(cfg, projectDir)
	<-records
	if err != nil {
		return nil, cfg, err
	}
	cfg.SessionID = r.id
	cfg.Launch = r.restore(cfg, cfg.Launch)
	return r, cfg, nil
}

// loadTranscript loads the conversation the new turns follow: the stored
// session's (up to ResumeSessionAt), or a fork of it under a new id.
func (r *resumed) loadTranscript(cfg Config, projectDir string) error {
	var err error
	if cfg.ResumeDropsTurn != "" {
		if err := checkDrops(projectDir, r.id, cfg.ResumeSessionAt, cfg.ResumeDropsTurn); err != nil {
			return err
		}
	}
	if cfg.ForkSession {
		newID := cfg.SessionID
		if newID == "" {
			newID = uuid.NewString()
		}
		r.transcript, err = session.Fork(projectDir, r.id, newID, cfg.ResumeSessionAt)
		r.id = newID
		return err
	}
	if cfg.SessionID != "" && cfg.SessionID != r.id {
		return fmt.Errorf("--session-id %s differs from the resumed session %s (add --fork-session to continue under a new id)", cfg.SessionID, r.id)
	}
	if r.transcript, err = session.LoadSession(projectDir, r.id); err == nil && cfg.ResumeSessionAt != "" {
		r.transcript, err = r.transcript.At(cfg.ResumeSessionAt)
	}
	return err
}

// checkDrops refuses a truncating resume of session id that would discard
// more than the turn the host named (--resume-drops-turn).
func checkDrops(projectDir, id, at, turn string) error {
	t, err := session.LoadSession(projectDir, id)
	if err != nil {
		return err
	}
	return t.CheckDrops(at, turn)
}

// findStored is the id of the stored session cfg names (Resume) or of the
// latest one (Continue).
func findStored(cfg Config, projectDir string) (string, error) {
	var id string
	var err error
	if cfg.Resume != "" {
		id, err = session.ResolveID(projectDir, cfg.Resume)
	} else {
		var info session.Info
		info, err = session.Latest(projectDir)
		id = info.ID
	}
	switch {
	case errors.Is(err, session.ErrNotFound) && cfg.Resume != "":
		return "", fmt.Errorf("no session %q in this project (tack sessions lists them)", cfg.Resume)
	case errors.Is(err, session.ErrNotFound):
		return "", errors.New("no session to continue in this project")
	}
	return id, err
}

// fill sets *dst to v when it holds the zero value.
func fill[T comparable](dst *T, v T) {
	var zero T
	if *dst == zero {
		*dst = v
	}
}

// fillNil sets a nil *dst to v (an empty list given now stays empty).
func fillNil[T any](dst *[]T, v []T) {
	if *dst == nil {
		*dst = v
	}
}

// workingDir is dir made absolute ("" for the process's), checked to be a
// directory.
func workingDir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("working directory %s is not a directory", abs)
	}
	return abs, nil
}

// optionsEnv reads the process environment with env over it: what locates
// tack's own files. The settings' env never does.
func optionsEnv(env map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
}

// ProjectDir is the folder holding the stored sessions of cwd ("" for the
// process's working directory), with env over the process environment.
func ProjectDir(cwd string, env map[string]string) (string, error) {
	cwd, err := workingDir(cwd)
	if err != nil {
		return "", err
	}
	getenv := optionsEnv(env)
	return session.ProjectDir(session.ConfigDir(getenv), cwd, getenv), nil
}

func notify(cfg Config, msg string) {
	if strings.TrimSpace(msg) == "" {
		return
	}
	if cfg.Logger != nil {
		cfg.Logger.Warn(msg)
	}
	if cfg.Notify != nil {
		cfg.Notify(msg)
	}
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
