package hook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tackcode/tack/internal/llm"
)

const (
	// DefaultTimeout bounds a handler without a timeout of its own, as in
	// Claude Code.
	DefaultTimeout = 60 * time.Second
	// DefaultPromptTimeout bounds a prompt hook without a timeout.
	DefaultPromptTimeout = 30 * time.Second
	// DefaultMaxOutput bounds what is kept of each output stream of a hook
	// (and of an http body); the rest is dropped and the loss noted.
	DefaultMaxOutput = 1 << 20
)

// Options configure a Runner. Only Hooks is needed for command hooks; the
// rest enables the other handler types or tunes them.
type Options struct {
	// Hooks is the merged "hooks" configuration, plus any callbacks.
	Hooks    Config
	Settings Settings
	// ProjectDir is CLAUDE_PROJECT_DIR for command hooks; empty means the
	// payload's cwd.
	ProjectDir string
	// Dir is the working directory of command hooks; empty means the
	// payload's cwd. A session with a named project root runs them there,
	// where the paths its settings name are, as Claude Code does.
	Dir string
	// Env is the base environment of command hooks; nil means the process's.
	Env []string
	// Shell runs command hooks as Shell -c COMMAND. Empty: bash when it is
	// on PATH, /bin/sh otherwise.
	Shell string
	// IfMatcher evaluates handlers' "if" rules. Without one (or when it
	// fails) a handler with an "if" runs anyway and the problem is reported:
	// a guard that runs too often is safer than one that never runs.
	IfMatcher IfMatcher
	// Provider and SmallModel answer prompt hooks (a handler's Model
	// overrides SmallModel).
	Provider   llm.Provider
	SmallModel string
	// Agent and MCP run agent and mcp_tool hooks (a session's subagents and
	// MCP servers); without them those hooks fail with a non-blocking error
	// saying what is missing.
	Agent AgentRunner
	MCP   MCPToolCaller
	// Once remembers which once-only handlers have run; the runners of one
	// session share it. Nil: the runner keeps its own.
	Once *OnceLog
	// Observer, when set, is told when each handler starts and ends.
	Observer Observer
	// HTTPClient sends http hooks; nil means a plain client. Redirects are
	// followed only to URLs allowedHttpHookUrls allows.
	HTTPClient *http.Client
	// MaxOutput bounds each captured stream; zero means DefaultMaxOutput.
	MaxOutput int
	// DefaultTimeout replaces DefaultTimeout for handlers without a timeout
	// (prompt hooks keep DefaultPromptTimeout).
	DefaultTimeout time.Duration
	// Admit, when set, decides which handlers of a configuration given to
	// New or Add are kept: a session's hook guards (disableAllHooks,
	// allowManagedHooksOnly), applied alike to every hook whatever brought
	// it. Skipped is then told the Source of the handlers it left out.
	Admit   func(Handler) bool
	Skipped func(sources []string)
}

// AgentRunner runs "agent" hooks: a subagent with tools that checks the
// payload and answers like a prompt hook.
type AgentRunner interface {
	// RunHookAgent runs a subagent for h on prompt ($ARGUMENTS already
	// replaced by the payload, in is the event) and returns its final
	// text, which the runner reads as a verdict {"ok": bool, "reason": …}.
	// ctx ends at the handler's timeout.
	RunHookAgent(ctx context.Context, h Handler, in Input, prompt string) (string, error)
}

// MCPToolCaller runs "mcp_tool" hooks on a session's MCP servers.
type MCPToolCaller interface {
	// CallHookTool calls tool on server with input (its ${...}
	// placeholders already replaced from the payload) and returns the
	// text of the result, which the runner reads like a command hook's
	// stdout; isError is the result's isError. A server that is not
	// connected is an error naming it. ctx ends at the handler's timeout.
	CallHookTool(ctx context.Context, server, tool string, input json.RawMessage) (text string, isError bool, err error)
}

// Verdict is the answer of a prompt or agent hook: {"ok": bool, "reason": string}.
type Verdict struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// Runner runs the hooks of one session. It is safe for concurrent use.
type Runner struct {
	opts Options
	// entries grow when Add brings hooks in mid-session (a skill's).
	entriesMu sync.RWMutex
	entries   map[Event][]entry
	added     int // Add calls so far, to keep their positions apart
	// shell runs command hooks: Options.Shell, else bash found on PATH
	// (else /bin/sh) when the first command hook runs — most sessions
	// run none, and the search costs a stat per PATH entry.
	shell    func() string
	env      []string // base + settings env (CLAUDE_PROJECT_DIR is added per run)
	client   *http.Client
	urlAllow []*regexp.Regexp // nil: every URL
	maxOut   int
	timeout  time.Duration

	obsMu sync.Mutex // serialises Observer calls

	once     *OnceLog
	mu       sync.Mutex
	asyncOut []Result // finished async results not yet taken

	closeCtx context.Context // done when Close is called
	close    context.CancelFunc
	asyncWG  sync.WaitGroup
}

// New checks the configuration and returns a Runner. Every invalid handler
// or matcher is reported in the error (tack fails loudly where Claude Code
// silently drops a hook); no Runner is returned then.
func New(opts Options) (*Runner, error) {
	entries, err := compile(opts.admit(opts.Hooks))
	if err != nil {
		return nil, fmt.Errorf("hook configuration: %w", err)
	}
	r := &Runner{
		opts:    opts,
		entries: entries,
		client:  opts.HTTPClient,
		maxOut:  opts.MaxOutput,
		timeout: opts.DefaultTimeout,
		once:    opts.Once,
	}
	if r.once == nil {
		r.once = NewOnceLog()
	}
	r.shell = func() string { return opts.Shell }
	if opts.Shell == "" {
		r.shell = sync.OnceValue(func() string {
			if p, err := exec.LookPath("bash"); err == nil {
				return p
			}
			return "/bin/sh"
		})
	}
	if r.maxOut <= 0 {
		r.maxOut = DefaultMaxOutput
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	r.env = opts.Env
	if r.env == nil {
		r.env = os.Environ()
	}
	r.env = slices.Clip(r.env)
	for _, k := range slices.Sorted(maps.Keys(opts.Settings.Env)) {
		r.env = append(r.env, k+"="+opts.Settings.Env[k])
	}
	if opts.Settings.AllowedHTTPHookURLs != nil {
		r.urlAllow = []*regexp.Regexp{}
		for _, p := range opts.Settings.AllowedHTTPHookURLs {
			r.urlAllow = append(r.urlAllow, wildcard(p))
		}
	}
	if r.client == nil {
		r.client = &http.Client{}
	}
	// A redirect must not lead an http hook where allowedHttpHookUrls would
	// not let it go; the copy keeps the caller's client untouched.
	c := *r.client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if !r.urlAllowed(req.URL.String()) {
			return fmt.Errorf("redirect to %s is not allowed by allowedHttpHookUrls", req.URL)
		}
		if len(via) >= 10 {
			return fmt.Errorf("stopped after %d redirects", len(via))
		}
		return nil
	}
	r.client = &c
	r.closeCtx, r.close = context.WithCancel(context.Background())
	return r, nil
}

// Has reports whether any handler is configured for ev (and hooks are not
// disabled), so a caller can skip building a payload nobody reads.
func (r *Runner) Has(ev Event) bool {
	if r.opts.Settings.DisableAllHooks {
		return false
	}
	r.entriesMu.RLock()
	defer r.entriesMu.RUnlock()
	return len(r.entries[ev]) > 0
}

// Add brings more hooks in for the rest of the session: those of a skill
// once it has been invoked. They run after the ones already configured. An
// invalid handler is reported and nothing is added.
func (r *Runner) Add(cfg Config) error {
	entries, err := compile(r.opts.admit(cfg))
	if err != nil {
		return fmt.Errorf("hook configuration: %w", err)
	}
	r.entriesMu.Lock()
	defer r.entriesMu.Unlock()
	r.added++
	for ev, es := range entries {
		for _, e := range es {
			// Once-only bookkeeping is keyed by position: added entries
			// have their own.
			e.pos = fmt.Sprintf("added%d:%s", r.added, e.pos)
			r.entries[ev] = append(r.entries[ev], e)
		}
	}
	return nil
}

// FileChangedNames returns the file names FileChanged matchers list, each
// once, in configuration order: in Claude Code the matcher also says which
// files to watch (in the session's directory), besides the watchPaths
// hooks answer with.
func (r *Runner) FileChangedNames() []string {
	var names []string
	for _, e := range r.entriesOf(FileChanged) {
		for _, n := range e.pattern.names {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	return names
}

// entriesOf returns the handlers configured for ev.
func (r *Runner) entriesOf(ev Event) []entry {
	r.entriesMu.RLock()
	defer r.entriesMu.RUnlock()
	return r.entries[ev]
}

// job is one handler to run for an event, after matching, "if", once and
// dedupe.
type job struct {
	entry
	id   string
	name string // hook_name, "PreToolUse:Bash"
}

// Run fires in: every handler whose matcher and "if" fit runs, in parallel,
// identical ones once; Run waits for all but the async ones (each bounded by
// its own timeout, and all by ctx) and merges their answers in configuration
// order. Hook failures are never returned as errors: they are in the
// Outcome, as Claude Code reports them and goes on.
func (r *Runner) Run(ctx context.Context, in Input) Outcome {
	ev := in.EventName()
	out := Outcome{Event: ev, HookName: hookName(in)}
	if !r.Has(ev) {
		return out
	}
	payload, err := in.MarshalJSON()
	if err != nil {
		out.Errors = append(out.Errors, errorLine(out.HookName, fmt.Sprintf("cannot encode the payload: %v", err)))
		return out
	}
	jobs, notes := r.selectJobs(in, out.HookName)
	out.Errors = append(out.Errors, notes...)

	results := make([]Result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		r.observe(Record{Phase: PhaseStarted, HookID: j.id, HookName: j.name, HookEvent: ev, StatusMessage: j.handler.StatusMessage})
		if runsAsync(j.handler) {
			r.startAsync(ctx, j, in, payload)
			results[i] = Result{HookID: j.id, HookName: j.name, Event: ev, Handler: j.handler, Status: StatusSuccess, Async: true}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.execute(ctx, j, in, payload)
		}()
	}
	wg.Wait()
	r.merge(&out, results)
	return out
}

// selectJobs returns the handlers to run for in, in configuration order,
// and messages about "if" conditions that could not be evaluated.
func (r *Runner) selectJobs(in Input, name string) ([]job, []string) {
	ev := in.EventName()
	value, usesMatcher := in.MatchValue()
	toolName, toolInput, isTool := toolCall(in)
	toolInput = orEmptyObject(toolInput)
	session := in.Common().SessionID
	var jobs []job
	var notes []string
	seen := map[string]bool{}
	for _, e := range r.entriesOf(ev) {
		if usesMatcher && !e.pattern.Match(value) {
			continue
		}
		var ifErr string
		if rule := e.handler.If; rule != "" && e.handler.Type != TypeCallback {
			if !isTool {
				continue
			}
			switch {
			case r.opts.IfMatcher == nil:
				ifErr = fmt.Sprintf("cannot evaluate if %q: no permission rule matcher; the hook ran anyway", rule)
			default:
				ok, err := r.opts.IfMatcher(rule, toolName, toolInput)
				if err != nil {
					ifErr = fmt.Sprintf("cannot evaluate if %q: %v; the hook ran anyway", rule, err)
				} else if !ok {
					continue
				}
			}
		}
		if e.key != "" {
			if seen[e.key] {
				continue
			}
			seen[e.key] = true
		}
		if e.handler.Once && !r.once.claim(session, e.pos+"\x00"+e.key) {
			continue
		}
		if ifErr != "" {
			notes = append(notes, errorLine(name, ifErr))
		}
		jobs = append(jobs, job{entry: e, id: uuid.NewString(), name: name})
	}
	return jobs, notes
}

// hookName is Claude Code's hook_name: the event, and the value matchers
// were tested against when there is one ("PreToolUse:Bash", "Stop").
func hookName(in Input) string {
	ev := string(in.EventName())
	if v, ok := in.MatchValue(); ok && v != "" {
		return ev + ":" + v
	}
	return ev
}

// runsAsync reports whether h runs in the background. As in Claude Code,
// only command hooks do: "async" on another type is ignored, so that an
// http or prompt hook meant to decide still decides.
func runsAsync(h Handler) bool { return h.Async && h.Type == TypeCommand }

// startAsync runs j in the background. It outlives ctx (a turn's context
// ends long before a background hook does) but not the Runner: Close
// cancels it.
func (r *Runner) startAsync(ctx context.Context, j job, in Input, payload []byte) {
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(r.closeCtx, cancel)
	r.asyncWG.Add(1)
	go func() {
		defer r.asyncWG.Done()
		defer cancel()
		defer stop()
		res := r.runJob(actx, j, in, payload)
		r.mu.Lock()
		r.asyncOut = append(r.asyncOut, res)
		r.mu.Unlock()
		// Told once TakeAsync can have it.
		r.observeResult(j, res)
	}()
}

// TakeAsync returns what async handlers that finished since the last call
// reported, and forgets it: their system messages and additional context
// are for the model's next turn (as in Claude Code); they never block or
// decide.
func (r *Runner) TakeAsync() AsyncReport {
	r.mu.Lock()
	results := r.asyncOut
	r.asyncOut = nil
	r.mu.Unlock()
	var rep AsyncReport
	for _, res := range results {
		o := Outcome{Event: res.Event, HookName: res.HookName}
		r.merge(&o, []Result{res})
		rep.SystemMessages = append(rep.SystemMessages, o.SystemMessages...)
		rep.AdditionalContext = append(rep.AdditionalContext, o.AdditionalContext...)
		rep.Errors = append(rep.Errors, o.Errors...)
	}
	rep.Results = results
	return rep
}

// AsyncReport is what finished async handlers left for the session.
type AsyncReport struct {
	Results           []Result
	SystemMessages    []string
	AdditionalContext []string
	Errors            []string
}

// Close cancels the async handlers still running (killing their processes)
// and waits for them. The Runner still runs synchronous hooks afterwards;
// async ones started later are cancelled at once.
func (r *Runner) Close() {
	r.close()
	r.asyncWG.Wait()
}

// timeoutOf is j's time limit.
func (r *Runner) timeoutOf(h Handler) time.Duration {
	if h.Timeout > 0 {
		return time.Duration(h.Timeout * float64(time.Second))
	}
	if h.Type == TypePrompt {
		return DefaultPromptTimeout
	}
	return r.timeout
}

// errHookTimeout is the cause of a handler's context when its own time
// limit passed.
var errHookTimeout = errors.New("hook timed out")

// execute runs one handler to its end and reports it to the Observer.
func (r *Runner) execute(ctx context.Context, j job, in Input, payload []byte) Result {
	res := r.runJob(ctx, j, in, payload)
	r.observeResult(j, res)
	return res
}

// runJob runs one handler to its end.
func (r *Runner) runJob(ctx context.Context, j job, in Input, payload []byte) Result {
	start := time.Now()
	limit := r.timeoutOf(j.handler)
	hctx, cancel := context.WithTimeoutCause(ctx, limit, errHookTimeout)
	defer cancel()

	var a answer
	switch j.handler.Type {
	case TypeCommand:
		a = r.runCommand(hctx, j.handler, in, payload)
	case TypeHTTP:
		a = r.runHTTP(hctx, j.handler, payload)
	case TypePrompt:
		a = r.runPrompt(hctx, j.handler, payload)
	case TypeAgent:
		a = r.runAgent(hctx, j.handler, in, payload)
	case TypeMCPTool:
		a = r.runMCPTool(hctx, j.handler, payload)
	case TypeCallback:
		a = runCallback(hctx, j.handler, in, payload)
	}
	if a.status == StatusCancelled {
		// The hook's own limit, or the caller giving up (an interrupt, the
		// turn's deadline): only the first is the hook's fault.
		a.timedOut = errors.Is(context.Cause(hctx), errHookTimeout)
		if a.timedOut {
			a.message = fmt.Sprintf("timed out after %s", limit)
		} else {
			a.message = "cancelled"
		}
	}
	res := a.result()
	res.HookID, res.HookName, res.Event, res.Handler = j.id, j.name, in.EventName(), j.handler
	res.Async, res.Duration = runsAsync(j.handler), time.Since(start)
	return res
}

// observeResult tells the Observer how j ended.
func (r *Runner) observeResult(j job, res Result) {
	r.observe(Record{
		Phase: PhaseResponse, HookID: res.HookID, HookName: res.HookName, HookEvent: res.Event,
		Output: res.Output, Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode,
		Outcome: res.Status.wire(), StatusMessage: j.handler.StatusMessage, Result: &res,
	})
}

func (r *Runner) observe(rec Record) {
	if r.opts.Observer == nil {
		return
	}
	r.obsMu.Lock()
	defer r.obsMu.Unlock()
	r.opts.Observer(rec)
}

// OnceLog remembers which once-only handlers have run, per session. The
// runners of one session share one (a subagent with hooks of its own runs
// the session's too), and a resumed session starts from the keys it saved:
// a once-only hook runs once in a session however often it is resumed,
// while a fork, a session of its own, runs it again. A handler counts as
// run when it starts, whatever its outcome.
type OnceLog struct {
	mu  sync.Mutex
	ran map[string]bool
}

// NewOnceLog returns a log that knows the keys a session saved (Keys).
func NewOnceLog(keys ...string) *OnceLog {
	l := &OnceLog{ran: make(map[string]bool, len(keys))}
	for _, k := range keys {
		l.ran[k] = true
	}
	return l
}

// Keys are the once-only handlers that have run in session, sorted: what
// the session saves for its resumption.
func (l *OnceLog) Keys(session string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for k := range l.ran {
		if strings.HasPrefix(k, session+":") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// claim records that handler (its position and identity) runs now in
// session, and reports whether it had not run there before.
func (l *OnceLog) claim(session, handler string) bool {
	sum := sha256.Sum256([]byte(handler))
	k := session + ":" + hex.EncodeToString(sum[:8])
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ran[k] {
		return false
	}
	l.ran[k] = true
	return true
}
