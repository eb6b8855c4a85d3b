// Package runner is the activity that runs a task's agent session on a
// worker, durably: every tool call is recorded in the store before and
// after it runs, the workspace is snapshotted into the store after each
// call that may change it, and the transcript is mirrored there as it is
// written. An attempt that starts where an earlier one died (its worker
// killed) restores the workspace and the transcript from the store and
// resumes the session, telling the model which call was cut off instead of
// running it again.
package runner

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/cmd/tack-worker/task"
	"github.com/tackcode/tack/cmd/tack-worker/workspace"
)

// Runner runs tasks on this worker; its exported methods are the activities.
type Runner struct {
	Store *store.Store
	// WorkRoot holds this worker's workspaces and session folders.
	WorkRoot string
	// WorkerID names this worker to the tools (TACK_WORKER_ID).
	WorkerID string
	// Env is added to every session's environment.
	Env map[string]string
	// Terminal runs Bash's commands; nil for the worker's own children,
	// killed with it.
	Terminal agent.Terminal
	// HeartbeatEvery is how often a running attempt heartbeats (default 2 s).
	HeartbeatEvery time.Duration
	Logger         *slog.Logger
}

// RunInput is a task's run as its workflow asks for it.
type RunInput struct {
	// RunID is the workflow's id: the run's name in the store.
	RunID string
	Task  task.Task
	// BudgetUSD bounds what this run may spend (0: the task's own bound).
	BudgetUSD float64
	// Fleet is the fleet the task runs in (nil: none): the run keeps its
	// entry in the fleet's ledger, and sends no model request once the
	// fleet's tasks have spent its budget.
	Fleet *Fleet
}

// Progress is the heartbeat of a running attempt.
type Progress struct {
	Worker    string `json:"worker"`
	Attempt   int    `json:"attempt"`
	ToolCalls int    `json:"tool_calls"`
	Snapshot  string `json:"snapshot,omitempty"`
}

// readOnlyTools change nothing in the workspace: no snapshot after them,
// and they may simply run again after an interruption.
var readOnlyTools = map[string]bool{"Read": true, "Glob": true, "Grep": true, "LS": true, "WebFetch": true,
	"WebSearch": true, "TodoWrite": true, "ToolSearch": true, "StructuredOutput": true}

// maxResponse bounds a tool's output kept in its record.
const maxResponse = 16 << 10

//go:embed resume.md
var resumeText string

var resumeTemplate = template.Must(template.New("resume").Parse(resumeText))

// saved is a run's result as the store keeps it between the end of the
// session and the publication of its change.
type saved struct {
	Result    task.Result `json:"result"`
	Published bool        `json:"published"`
}

// RunAgent runs (or goes on with) the task's session and publishes its
// change. It is safe to run again after any failure: what is done is in
// the store.
func (r *Runner) RunAgent(ctx context.Context, in RunInput) (*task.Result, error) {
	run, err := r.Store.Run(in.RunID)
	if err != nil {
		return nil, err
	}
	var sv saved
	if ok, err := run.Result(&sv); err != nil {
		return nil, err
	} else if ok && sv.Published {
		return &sv.Result, nil
	}
	st, started, err := run.State()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(ensureDir(r.WorkRoot), store.RunDirName(in.RunID)+"-")
	if err != nil {
		return nil, fmt.Errorf("attempt folder: %w", err)
	}
	defer os.RemoveAll(dir)
	ws, err := workspace.Clone(ctx, in.Task.Repo, in.Task.Ref, st.BaseCommit, filepath.Join(dir, "ws"))
	if err != nil {
		return nil, err
	}
	if st.Snapshot != "" {
		if err := ws.Restore(ctx, r.Store.SnapshotRepo(), store.SnapshotRef(in.RunID), st.Snapshot); err != nil {
			return nil, err
		}
	}
	if !started {
		st = store.State{SessionID: uuid.NewString(), BaseCommit: ws.Base}
	}
	if sv.Result.SessionID == "" {
		a := &attempt{r: r, in: in, run: run, ws: ws, st: st, config: filepath.Join(dir, "config")}
		res, err := a.session(ctx)
		if err != nil {
			return nil, err
		}
		sv = saved{Result: *res}
		if err := run.SaveResult(sv); err != nil {
			return nil, err
		}
	}
	if err := r.publish(ctx, in, run, ws, &sv.Result); err != nil {
		return nil, err
	}
	sv.Published = true
	if err := run.SaveResult(sv); err != nil {
		return nil, err
	}
	return &sv.Result, nil
}

func ensureDir(dir string) string {
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// publish lands the change: a branch pushed to the task's remote, or a
// patch file in the store.
func (r *Runner) publish(ctx context.Context, in RunInput, run *store.Run, ws *workspace.Workspace, res *task.Result) error {
	if in.Task.PatchOnly {
		patch, err := ws.Patch(ctx)
		if err != nil || patch == "" {
			return err
		}
		res.Patch = filepath.Join(run.Dir, "change.patch")
		if err := os.WriteFile(res.Patch, []byte(patch), 0o644); err != nil {
			return fmt.Errorf("write patch: %w", err)
		}
		return nil
	}
	remote := in.Task.Push
	if remote == "" {
		remote = in.Task.Repo
	}
	commit, err := ws.Publish(ctx, remote, in.Task.Branch, fmt.Sprintf("tack: %s\n\n%s", in.Task.ID, in.Task.Prompt))
	if err != nil {
		return err
	}
	if commit != "" {
		res.Branch, res.Commit = in.Task.Branch, commit
	}
	return nil
}

// attempt is one worker's go at a run's session.
type attempt struct {
	r      *Runner
	in     RunInput
	run    *store.Run
	ws     *workspace.Workspace
	config string

	mu    sync.Mutex // st, calls; one snapshot at a time
	st    store.State
	calls int
	// fleet keeps the run's entry in its fleet's ledger (nil: no fleet).
	fleet *fleetGuard
}

func (a *attempt) logger() *slog.Logger {
	if a.r.Logger != nil {
		return a.r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// session runs the agent until its result.
func (a *attempt) session(ctx context.Context) (*task.Result, error) {
	t := a.in.Task
	// What an attempt cut off had spent is spent.
	a.st.CostUSD += a.st.AttemptCostUSD
	a.st.AttemptCostUSD = 0
	fleet, err := newFleetGuard(a.r.Store, a.in, a)
	if err != nil {
		return nil, err
	}
	a.fleet = fleet
	if err := fleet.save(a.st.CostUSD, false); err != nil {
		return nil, err
	}
	env := map[string]string{"CLAUDE_CONFIG_DIR": a.config, "TACK_WORKER_ID": a.r.WorkerID}
	for k, v := range a.r.Env {
		env[k] = v
	}
	opts := agent.Options{
		Cwd: a.ws.Dir, Model: t.Model, Tools: t.Tools, AllowedTools: t.AllowedTools, DisallowedTools: t.DisallowedTools,
		PermissionMode: agent.PermissionMode(t.PermissionMode), Settings: t.Settings, AgentsJSON: t.AgentsJSON,
		AppendSystemPrompt: t.AppendPrompt, MaxTurns: t.MaxTurns, MaxBudgetUSD: left(budget(t.MaxBudgetUSD, a.in.BudgetUSD), a.st.CostUSD),
		JSONSchema: t.JSONSchema, Env: env, Entrypoint: "tack-worker", Logger: a.r.Logger,
		Terminal: a.r.Terminal, Name: store.RunDirName(a.in.RunID),
		WrapTransport: func(base http.RoundTripper) http.RoundTripper {
			return newLimiter(a.r.Store, a.r.WorkerID, fleet.wrap(base))
		},
	}
	if opts.Terminal == nil {
		opts.Terminal = processTerminal{}
	}
	// The one who submitted the task named its repository: that is the
	// user's trust in the folder, recorded (in the attempt's own
	// configuration) as a terminal's trust dialog records it, so that the
	// repository's settings, hooks, skills and sandbox apply as they do
	// there — its permissions.allow rules too. An untrusted task runs with
	// the folder's code off instead.
	if t.Untrusted {
		opts.Untrusted = true
	} else if _, err := agent.TrustWorkspace(opts); err != nil {
		return nil, fmt.Errorf("trust the workspace: %w", err)
	}
	sessions, err := agent.SessionsDir(opts)
	if err != nil {
		return nil, err
	}
	prompt := t.Prompt
	main := filepath.Join(a.run.TranscriptDir(), a.st.SessionID+".jsonl")
	if _, err := os.Stat(main); err == nil {
		if err := os.MkdirAll(sessions, 0o700); err != nil {
			return nil, fmt.Errorf("sessions folder: %w", err)
		}
		if err := a.run.RestoreTranscripts(sessions); err != nil {
			return nil, err
		}
		if prompt, err = a.resumePrompt(main); err != nil {
			return nil, err
		}
		opts.Resume = a.st.SessionID
	} else {
		opts.SessionID = a.st.SessionID
	}
	a.st.Attempts++
	if err := a.run.SaveState(a.st); err != nil {
		return nil, err
	}
	opts.OnTranscriptWrite = func(path string, lines []json.RawMessage) {
		rel, err := filepath.Rel(sessions, path)
		if err == nil {
			err = a.run.AppendTranscript(rel, lines)
		}
		if err != nil {
			a.logger().Error("transcript mirror", "err", err)
		}
	}
	opts.Hooks = map[agent.HookEvent][]agent.HookMatcher{
		agent.HookPreToolUse:         {{Hooks: []agent.HookCallback{a.beforeTool}, OnFailure: "block"}},
		agent.HookPostToolUse:        {{Hooks: []agent.HookCallback{a.afterTool}}},
		agent.HookPostToolUseFailure: {{Hooks: []agent.HookCallback{a.afterTool}}},
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go a.heartbeat(ctx)
	var result *agent.ResultMessage
	for msg, err := range agent.Query(ctx, prompt, opts) {
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		switch m := msg.(type) {
		case *agent.ResultMessage:
			result = m
		case *agent.AssistantMessage:
			if m.ParentToolUseID == nil {
				a.spent(m.SessionCostUSD)
			}
		}
	}
	// An attempt cut off (its activity cancelled, its worker stopping)
	// leaves the run to the next one, whatever result the session gave.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("session cut off: %w", err)
	}
	if result == nil {
		return nil, errors.New("session ended without a result")
	}
	a.mu.Lock()
	a.st.CostUSD += result.TotalCostUSD
	a.st.AttemptCostUSD = 0
	st := a.st
	a.mu.Unlock()
	if err := a.run.SaveState(st); err != nil {
		return nil, err
	}
	if err := fleet.save(st.CostUSD, true); err != nil {
		return nil, err
	}
	res := &task.Result{TaskID: t.ID, Subtype: result.Subtype, IsError: result.IsError, CostUSD: st.CostUSD,
		NumTurns: result.NumTurns, InputTokens: result.Usage.InputTokens, OutputTokens: result.Usage.OutputTokens,
		SessionID: st.SessionID, Attempts: st.Attempts, Transcript: main, StructuredOutput: result.StructuredOutput}
	if result.Result != nil {
		res.Text = *result.Result
	} else {
		res.Text = strings.Join(result.Errors, "\n")
	}
	fromFleet := a.in.BudgetUSD > 0 && (t.MaxBudgetUSD == 0 || a.in.BudgetUSD < t.MaxBudgetUSD)
	if e := fleet.stopped(result, fromFleet); e != nil {
		res.Subtype, res.IsError, res.Text = ResultErrorFleetBudget, true, e.Error()
	}
	if rec, err := os.ReadFile(filepath.Join(sessions, st.SessionID, "workflow.json")); err == nil {
		res.WorkflowRecord = filepath.Join(a.run.Dir, "workflow.json")
		if err := os.WriteFile(res.WorkflowRecord, rec, 0o644); err != nil {
			return nil, fmt.Errorf("keep workflow record: %w", err)
		}
	}
	return res, nil
}

// spent records, durably, what the attempt has spent so far, for the
// attempt that takes the run over if this one is cut off.
func (a *attempt) spent(usd float64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if usd <= a.st.AttemptCostUSD {
		return
	}
	a.st.AttemptCostUSD = usd
	if err := a.run.SaveState(a.st); err != nil {
		a.logger().Error("save the attempt's cost", "err", err)
	}
	if err := a.fleet.save(a.st.CostUSD+usd, false); err != nil {
		a.logger().Error("save the run's spend in the fleet's ledger", "err", err)
	}
}

// left is what is left of bound once spent is gone (0: no bound). A bound
// spent whole leaves the least budget a session takes: it stops after its
// next response.
func left(bound, spent float64) float64 {
	if bound == 0 {
		return 0
	}
	return max(bound-spent, 1e-9)
}

// budget is the tighter of two bounds (0: none).
func budget(a, b float64) float64 {
	switch {
	case a == 0:
		return b
	case b == 0 || a < b:
		return a
	}
	return b
}

// heartbeat tells Temporal the attempt is alive until ctx ends: a worker
// that dies stops heartbeating, and the run goes to another worker.
func (a *attempt) heartbeat(ctx context.Context) {
	if !activity.IsActivity(ctx) {
		return
	}
	every := a.r.HeartbeatEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		a.mu.Lock()
		p := Progress{Worker: a.r.WorkerID, Attempt: a.st.Attempts, ToolCalls: a.calls, Snapshot: a.st.Snapshot}
		a.mu.Unlock()
		activity.RecordHeartbeat(ctx, p)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// beforeTool records the call as started, durably, before it may run. A
// call an earlier attempt started is refused: it was interrupted, and its
// result was reported to the model.
func (a *attempt) beforeTool(ctx context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
	p, ok := in.(*agent.PreToolUseHookInput)
	if !ok {
		return nil, nil
	}
	a.mu.Lock()
	attemptNo := a.st.Attempts
	a.mu.Unlock()
	if old, err := a.run.Tools(); err == nil {
		for _, c := range old {
			if c.ID == p.ToolUseID && c.Attempt < attemptNo {
				return denied("This call was interrupted when the worker running it stopped; it is not run again."), nil
			}
		}
	}
	err := a.run.SaveTool(store.ToolCall{ID: p.ToolUseID, Name: p.ToolName, Input: p.ToolInput, State: store.ToolStarted,
		Attempt: attemptNo, Started: time.Now().UTC()})
	return nil, err
}

func denied(reason string) *agent.HookOutput {
	return &agent.HookOutput{HookSpecificOutput: &agent.HookSpecificOutput{HookEventName: agent.HookPreToolUse,
		PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// afterTool records the call as finished and snapshots the workspace.
func (a *attempt) afterTool(ctx context.Context, in agent.HookInput, _ json.RawMessage) (*agent.HookOutput, error) {
	var id, name, response string
	var input json.RawMessage
	failed := false
	switch p := in.(type) {
	case *agent.PostToolUseHookInput:
		id, name, input, response = p.ToolUseID, p.ToolName, p.ToolInput, string(p.ToolResponse)
	case *agent.PostToolUseFailureHookInput:
		if p.IsInterrupt {
			// Cut off: as for a dead worker, the call stays started.
			return nil, nil
		}
		id, name, input, response, failed = p.ToolUseID, p.ToolName, p.ToolInput, p.Error, true
	default:
		return nil, nil
	}
	if len(response) > maxResponse {
		response = response[:maxResponse] + "\n… [cut]"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	if !readOnlyTools[name] {
		snap, err := a.ws.Snapshot(ctx, a.r.Store.SnapshotRepo(), store.SnapshotRef(a.in.RunID), a.st.Snapshot,
			fmt.Sprintf("tack snapshot after %s %s", name, id))
		if err != nil {
			return nil, err
		}
		if snap != a.st.Snapshot {
			a.st.Snapshot = snap
			if err := a.run.SaveState(a.st); err != nil {
				return nil, err
			}
		}
	}
	c := store.ToolCall{ID: id, Name: name, Input: input, State: store.ToolFinished, Attempt: a.st.Attempts,
		Response: response, Failed: failed, Finished: time.Now().UTC()}
	if old, err := a.run.Tools(); err == nil {
		for _, o := range old {
			if o.ID == id {
				c.Started = o.Started
			}
		}
	}
	return nil, a.run.SaveTool(c)
}

// resumePrompt is the prompt that resumes a session an earlier attempt
// left: the calls it cut off, and the results that did not reach the
// transcript. The calls it names are marked reported.
func (a *attempt) resumePrompt(transcript string) (string, error) {
	data, err := os.ReadFile(transcript)
	if err != nil {
		return "", fmt.Errorf("read transcript mirror: %w", err)
	}
	calls, err := a.run.Tools()
	if err != nil {
		return "", err
	}
	type call struct{ ID, Name, Summary, Response string }
	var v struct{ Interrupted, Lost []call }
	for _, c := range calls {
		if c.Reported {
			continue
		}
		inTranscript := strings.Contains(string(data), `"tool_use_id":"`+c.ID+`"`)
		switch {
		case c.State == store.ToolStarted:
			v.Interrupted = append(v.Interrupted, call{ID: c.ID, Name: c.Name, Summary: summary(c.Input)})
		case !inTranscript:
			v.Lost = append(v.Lost, call{ID: c.ID, Name: c.Name, Response: c.Response})
		default:
			continue
		}
		c.Reported = true
		if err := a.run.SaveTool(c); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	if err := resumeTemplate.Execute(&b, v); err != nil {
		return "", fmt.Errorf("resume prompt: %w", err)
	}
	return b.String(), nil
}

// summary is a call's input in one short line.
func summary(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "url"} {
		if s, ok := m[k].(string); ok {
			if len(s) > 200 {
				s = s[:200] + "…"
			}
			return s
		}
	}
	return ""
}
