package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/session"
	"github.com/tackcode/tack/internal/version"
)

// openTranscript opens the thread's transcript, unless the session is not
// persisted: the session's own file (continuing a resumed one's chain), or
// a subagent's sidechain file beside it, with a record of who started it.
func (t *thread) openTranscript(context.Context) error {
	s := t.s
	if s.projectDir == "" {
		return nil
	}
	if t.parent != nil {
		dir := filepath.Join(s.projectDir, s.sessionID, "subagents")
		t.transcript = filepath.Join(dir, "agent-"+t.spec.agentID+".jsonl")
		w := session.NewWriter(t.transcript, session.Meta{SessionID: s.sessionID, Cwd: t.cwd, Version: version.Version, Entrypoint: "subagent", Sidechain: true}, "")
		if s.cfg.OnTranscriptWrite != nil {
			w.SetMirror(s.cfg.OnTranscriptWrite)
		}
		t.recorder, t.closeRecorder = w, w.Close
		if err := writeAgentMeta(filepath.Join(dir, "agent-"+t.spec.agentID+".meta.json"), t.spec.toolUseID, t.spec.agentType); err != nil {
			s.notify("subagent record: " + err.Error())
		}
		return nil
	}
	entry := firstNonEmpty(s.cfg.Entrypoint, "sdk-go")
	parent := ""
	if s.resumed != nil {
		parent = s.resumed.transcript.Leaf
	}
	t.transcript = s.transcriptPath()
	s.recorder = session.NewWriter(t.transcript, session.Meta{SessionID: s.sessionID, Cwd: s.cwd, Version: version.Version, Entrypoint: entry}, parent)
	s.mainSync = &syncBeside{Writer: s.recorder}
	t.recorder, t.closeRecorder = s.mainSync, s.recorder.Close
	if err := s.mirrorTranscript(); err != nil {
		return err
	}
	if name := s.cfg.Name; name != "" && (s.resumed == nil || s.resumed.transcript.Meta.Name != name) {
		s.named = true
		return s.recorder.SetTitle(name)
	}
	return nil
}

// mirrorTranscript hands the main transcript's writes to the host that asked
// for them, starting with the lines a fork was created with: they are the
// new session's, written before its writer existed.
func (s *Session) mirrorTranscript() error {
	fn := s.cfg.OnTranscriptWrite
	if fn == nil {
		return nil
	}
	s.recorder.SetMirror(fn)
	if s.resumed == nil || !s.cfg.ForkSession {
		return nil
	}
	b, err := os.ReadFile(s.recorder.Path())
	if err != nil {
		return fmt.Errorf("mirror the fork's transcript: %w", err)
	}
	if lines := session.SplitLines(b); len(lines) > 0 {
		fn(s.recorder.Path(), lines)
	}
	return nil
}

// syncBeside is the main thread's recorder. The engine syncs it once a
// prompt's result is out; its Sync starts that sync and returns, so that
// the records written after the prompt (saveRecord) go to disk beside it
// rather than after it. RunPrompt waits for it before it returns: a prompt
// is over once its transcript is durable, as before.
type syncBeside struct {
	*session.Writer
	pending chan error // nil when no sync is under way
}

// Sync starts the sync, once the one it started before is over (its error
// is returned). Called by the engine on the goroutine that runs the
// prompt, which waits for it (wait).
func (r *syncBeside) Sync() error {
	err := r.wait()
	done := make(chan error, 1)
	r.pending = done
	go func() { done <- r.Writer.Sync() }()
	return err
}

// wait waits for the sync Sync started, and returns its error.
func (r *syncBeside) wait() error {
	if r == nil || r.pending == nil {
		return nil
	}
	err := <-r.pending
	r.pending = nil
	return err
}

// transcriptPath is the session's transcript; "" when it is not persisted.
func (s *Session) transcriptPath() string {
	if s.projectDir == "" {
		return ""
	}
	return filepath.Join(s.projectDir, s.sessionID+".jsonl")
}

func writeAgentMeta(path, toolUseID, agentType string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{"toolUseId": toolUseID, "agentType": agentType, "parentAgentId": nil})
	return os.WriteFile(path, b, 0o600)
}

// records are the session's workflow record (seed 001) and its launch
// record, as they stand.
func (s *Session) records() (session.Workflow, session.Launch) {
	s.metaMu.Lock()
	o := s.cfg.Launch
	s.metaMu.Unlock()
	eng := s.main.engine
	w := session.Workflow{Name: o.Name, Cwd: s.cwd, PermissionMode: string(s.main.checker.Mode()),
		Settings: session.SettingsRecord(o.Settings), MCPConfig: session.MCPConfigRecord(o.MCPConfig)}
	l := session.Launch{
		Model: eng.Model().ID, FallbackModel: o.FallbackModel,
		Settings: o.Settings, SettingSources: o.SettingSources, MCPConfig: nonNil(o.MCPConfig), StrictMCPConfig: o.StrictMCPConfig,
		AddDirs: nonNil(o.AddDirs), Agent: o.Agent, Agents: o.AgentsJSON, PluginDirs: nonNil(o.PluginDirs), Tools: o.Tools,
		AllowedTools: nonNil(o.AllowedTools), DisallowedTools: nonNil(o.DisallowedTools), PermissionPromptTool: o.PermissionPromptTool,
		MaxThinkingTokens: o.MaxThinkingTokens, Thinking: o.Thinking, ThinkingDisplay: o.ThinkingDisplay, Effort: o.Effort, TaskBudget: o.TaskBudget,
		SystemPrompt: o.SystemPrompt, AppendSystemPrompt: o.AppendSystemPrompt,
		CostUSD: s.costBase + eng.Cost(), HooksOnce: s.hookOpts.Once.Keys(s.sessionID),
		DeferredToolUse: eng.Deferred(),
	}
	return w, l
}

// saveRecord writes the workflow and launch records after a run (lastTool
// is the run's last tool decision, nil to keep the recorded one) and, the
// first time, the request prefix — the system prompt and the tools array
// of the latest request, as sent — so that a resume restores all three.
func (s *Session) saveRecord(lastTool *session.LastTool) error {
	if s.projectDir == "" {
		return nil
	}
	// The prefix written during the first request is on disk first, so
	// that the one written here, when the tools changed since, has the
	// last word.
	if done := s.prefixWrite.Load(); done != nil {
		<-*done
	}
	// A record read before a rename must not be written after the
	// rename's.
	s.recordMu.Lock()
	defer s.recordMu.Unlock()
	s.recorded.load(s.projectDir, s.sessionID)
	w, l := s.records()
	// A decision waiting for the writer of tool records goes in this
	// record, which is the later one.
	pending := s.tools.take()
	w.LastTool = cmp.Or(lastTool, pending, s.recorded.lastTool())
	// Three files, each written whole on its own: side by side, the exit
	// waits for the slowest of them rather than for the three in turn.
	var (
		wg                 sync.WaitGroup
		errWorkflow, errPr error
	)
	wg.Go(func() { errWorkflow = s.saveWorkflow(w) })
	wg.Go(func() { errPr = s.savePrefix(s.main.engine.SentTools()) })
	errLaunch := s.saveLaunch(l)
	wg.Wait()
	return errors.Join(errWorkflow, errLaunch, errPr)
}

// saveWorkflow writes the workflow record w unless the one on disk says
// the same already: most prompts change nothing in it, and most tool
// calls repeat the last one's decision. The caller holds recordMu and has
// loaded s.recorded.
func (s *Session) saveWorkflow(w session.Workflow) error {
	w = w.Complete(s.sessionID)
	if d := s.recorded.workflow; d != nil && d.Equal(w) {
		return nil
	}
	if err := session.SaveWorkflow(s.projectDir, s.sessionID, w); err != nil {
		return err
	}
	s.recorded.workflow = &w
	return nil
}

// saveLaunch writes the launch record l, created when the session's first
// record was. The caller holds recordMu and has loaded s.recorded.
func (s *Session) saveLaunch(l session.Launch) error {
	if s.recorded.createdAt.IsZero() {
		s.recorded.createdAt = time.Now().UTC()
	}
	l.CreatedAt = s.recorded.createdAt
	if err := session.SaveLaunch(s.projectDir, s.sessionID, l); err != nil {
		return err
	}
	s.recorded.launch = true
	return nil
}

// recordEarly writes, while the prompt's first request is on its way, the
// launch record of a session that has none yet and the workflow record as
// the prompt starts, and returns a function that waits for the writes.
// That first launch record is the one synced (see session.SaveLaunch):
// the time the sync takes is better spent waiting for the model than
// between the answer and the exit. After the run, saveRecord replaces
// the launch record unsynced, and the workflow record only if the run
// changed it.
func (s *Session) recordEarly() (wait func()) {
	if s.projectDir == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.recordMu.Lock()
		defer s.recordMu.Unlock()
		s.recorded.load(s.projectDir, s.sessionID)
		w, l := s.records()
		// The launch record first: its sync is the longer wait, and the
		// workflow record's encoding, after it, is then less likely to
		// take the core the request is encoded on.
		if !s.recorded.launch {
			if err := s.saveLaunch(l); err != nil {
				s.notify("launch record: " + err.Error())
			}
		}
		w.LastTool = s.recorded.lastTool()
		if err := s.saveWorkflow(w); err != nil {
			s.notify("workflow record: " + err.Error())
		}
	}()
	return func() { <-done }
}

// onDisk is what the session's records on disk hold that the session does
// not keep otherwise: read on the first save, then kept as each write
// leaves it, so that a save reads nothing back.
type onDisk struct {
	loaded bool
	// workflow is the workflow record; nil while there is none.
	workflow  *session.Workflow
	createdAt time.Time
	// launch is set once the launch record exists.
	launch bool
}

// load reads, the first time, the workflow record and the creation time
// of the launch record the session id has. A record that does not load
// (edited by hand) was reported on resume: the next save replaces it.
func (d *onDisk) load(projectDir, id string) {
	if d.loaded {
		return
	}
	d.loaded = true
	if prev, err := session.LoadWorkflow(projectDir, id); err == nil {
		d.workflow = prev
	}
	if prev, err := session.LoadLaunch(projectDir, id); err == nil {
		d.createdAt, d.launch = prev.CreatedAt, true
	}
}

// lastTool is the last tool call the workflow record holds; nil for none.
func (d *onDisk) lastTool() *session.LastTool {
	if d.workflow == nil {
		return nil
	}
	return d.workflow.LastTool
}

// onRequest has the main thread's first request write the request
// prefix while it is on its way, rather than between the answer and the
// exit: the prefix is a 25 KB file made from the system prompt and the
// tools array as sent. Nil for a subagent, or a session not persisted.
func (t *thread) onRequest() func(*llm.Request) {
	s := t.s
	if t.parent != nil || s.projectDir == "" {
		return nil
	}
	return func(req *llm.Request) {
		if s.prefixWrite.Load() != nil {
			return
		}
		done := make(chan struct{})
		if !s.prefixWrite.CompareAndSwap(nil, &done) {
			return
		}
		tools := req.Tools
		go func() {
			defer close(done)
			if err := s.savePrefix(tools); err != nil {
				s.notify("request prefix: " + err.Error())
			}
		}()
	}
}

// savePrefix records the prefix of the session's requests — tools, the
// tools array a request sent, and the main thread's system prompt — once a
// request has been sent, and again when a later request offers other
// tools (an MCP server joined). A resumed session that re-sent its
// recorded prefix has it on file already; one that made its prompt anew
// (another model, other prompt options) replaces it, so that the next
// resume re-sends what this one sent.
func (s *Session) savePrefix(tools []llm.ToolSpec) error {
	s.prefixMu.Lock()
	defer s.prefixMu.Unlock()
	if tools == nil || s.prefix.saved && (s.prefix.tools == nil || llm.SameToolSpecs(s.prefix.tools, tools)) {
		return nil
	}
	if r := s.resumed; r != nil && r.prefix != nil && !s.cfg.ForkSession {
		s.prefix.saved = true
		return nil
	}
	p, err := session.PrefixOf(s.sessionID, &llm.Request{Model: s.main.engine.Model().ID, MaxTokens: 1,
		System: s.main.system, Tools: tools,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(".")}}}})
	if err != nil {
		return err
	}
	if err := session.SavePrefix(s.projectDir, s.sessionID, p); err != nil {
		return err
	}
	s.prefix.saved, s.prefix.tools = true, tools
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// onToolDecision keeps the main thread's last tool decision in the
// workflow record (seed 001: a tool call updates last_tool and nothing
// else); a subagent's calls are not the session's. The engine tells it
// between a batch's results and the next request, which the record's
// writing (a file made and renamed over the last) would hold back: the
// decision goes to the session's writer of tool records instead.
func (t *thread) onToolDecision() func(name, decision string) {
	s := t.s
	if t.parent != nil || s.projectDir == "" {
		return nil
	}
	return func(name, decision string) {
		s.recordMu.Lock()
		defer s.recordMu.Unlock()
		lt := &session.LastTool{Name: name, Decision: decision}
		if !s.tools.hand(lt, s.writeToolRecords) {
			s.writeLastTool(lt) // the session is closing: at once
		}
	}
}

// toolRecords hands the main thread's tool decisions to one goroutine,
// which writes the latest into the workflow record. A decision that waits
// (pending) while another comes is replaced by it, and one a whole record
// written since took along (saveRecord) is dropped. Its fields are under
// the session's recordMu.
type toolRecords struct {
	pending *session.LastTool
	wake    chan struct{} // a decision is pending; closed to stop
	done    chan struct{} // closed when the writer has stopped
	stopped bool
}

// hand makes lt the pending decision and wakes the writer, started by run
// the first time. false once stopped.
func (r *toolRecords) hand(lt *session.LastTool, run func()) bool {
	if r.stopped {
		return false
	}
	r.pending = lt
	if r.wake == nil {
		r.wake, r.done = make(chan struct{}, 1), make(chan struct{})
		go run()
	}
	select {
	case r.wake <- struct{}{}:
	default: // the writer is already woken: it will find lt
	}
	return true
}

// take returns the pending decision, which is no longer pending.
func (r *toolRecords) take() *session.LastTool {
	lt := r.pending
	r.pending = nil
	return lt
}

// writeToolRecords is the writer: it writes each pending decision until
// stopToolRecords.
func (s *Session) writeToolRecords() {
	defer close(s.tools.done)
	for range s.tools.wake {
		s.recordMu.Lock()
		if lt := s.tools.take(); lt != nil {
			s.writeLastTool(lt)
		}
		s.recordMu.Unlock()
	}
}

// stopToolRecords writes the decision still pending and stops the writer;
// a decision after it is written at once.
func (s *Session) stopToolRecords() {
	s.recordMu.Lock()
	r := &s.tools
	r.stopped = true
	if r.wake != nil {
		close(r.wake)
	}
	s.recordMu.Unlock()
	if r.done != nil {
		<-r.done
	}
}

// writeLastTool writes the workflow record with lt as its last tool call:
// every other field follows the session's state, as the record is written
// whole. The caller holds recordMu.
func (s *Session) writeLastTool(lt *session.LastTool) {
	s.recorded.load(s.projectDir, s.sessionID)
	w, _ := s.records()
	w.LastTool = lt
	if err := s.saveWorkflow(w); err != nil {
		s.notify("workflow record: " + err.Error())
	}
}

// lastTool is the session's last tool call, for the workflow record.
func (s *Session) lastTool() *session.LastTool {
	name, decision := s.main.engine.LastTool()
	if name == "" {
		return nil
	}
	return &session.LastTool{Name: name, Decision: decision}
}
