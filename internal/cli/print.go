package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/tackcode/tack/agent"
	"github.com/tackcode/tack/internal/cli/cmdio"
	"github.com/tackcode/tack/internal/jsonx"
	"github.com/tackcode/tack/internal/sdkproto"
)

// runPrint runs one prompt and renders the session in the chosen format.
func runPrint(cmd *cobra.Command, stdio IO, f *printFlags, args []string) error {
	ctx := cmd.Context()
	switch f.outputFormat {
	case "text", "json", "stream-json":
	default:
		return cmdio.Usagef("invalid --output-format %q: want text, json or stream-json", f.outputFormat)
	}
	if f.replayUser && (f.inputFormat != "stream-json" || f.outputFormat != "stream-json") {
		return cmdio.Usagef("--replay-user-messages needs --input-format stream-json and --output-format stream-json")
	}
	if f.managedInInitialize && (f.inputFormat != "stream-json" || f.managedSettings != "") {
		return cmdio.Usagef("--managed-settings-in-initialize needs --input-format stream-json, and no --managed-settings: the managed settings come in the initialize request")
	}
	if f.sessionMirror && f.outputFormat != "stream-json" {
		return cmdio.Usagef("--session-mirror needs --output-format stream-json")
	}
	switch f.inputFormat {
	case "text":
	case "stream-json":
		return runStream(cmd, stdio, f, args)
	default:
		return cmdio.Usagef("invalid --input-format %q: want text or stream-json", f.inputFormat)
	}
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	prompt, err := readPrompt(stdio, args)
	if err != nil {
		return err
	}
	opts.Notify = func(msg string) { fmt.Fprintf(stdio.Err, "tack: %s\n", msg) }
	if f.verbose {
		opts.OnMCPProgress = func(p agent.MCPProgress) {
			total := ""
			if p.Total > 0 {
				total = fmt.Sprintf("/%g", p.Total)
			}
			opts.Notify(fmt.Sprintf("progress of %s: %g%s %s", p.Name, p.Progress, total, p.Message))
		}
	}
	r := newRenderer(f.outputFormat, f.verbose, stdio.Out)
	if f.sessionMirror {
		// From the goroutine writing the transcript, beside the messages.
		opts.OnTranscriptWrite = func(path string, lines []json.RawMessage) {
			if err := r.line(sdkproto.NewMirrorFrame(path, lines)); err != nil {
				fmt.Fprintf(stdio.Err, "tack: transcript mirror: %v\n", err)
			}
		}
	}
	var result *agent.ResultMessage
	for msg, err := range agent.Query(ctx, prompt, opts) {
		var rejected *agent.ResumeRejectedError
		if errors.As(err, &rejected) {
			// The refusal is the run's result, as Claude Code gives it.
			msg, err = sdkproto.RejectedResult(opts.Resume, rejected), nil
		}
		if err != nil {
			switch {
			case errors.Is(err, agent.ErrNoCredentials):
				fmt.Fprintf(stdio.Err, "tack: %v\n", err)
				return &cmdio.ExitError{Code: 1}
			case errors.Is(err, agent.ErrNoPrompt):
				return errNoPrompt
			}
			return err
		}
		if res, ok := msg.(*agent.ResultMessage); ok {
			result = res
		}
		// A retried request is said on stderr whatever the verbosity: a
		// run waiting out the retry policy is never silent (stream-json
		// carries the api_retry message itself).
		if f.outputFormat != "stream-json" {
			reportRetry(stdio.Err, msg)
		}
		if err := r.message(msg); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	if err := r.close(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if result == nil {
		return errors.New("the session ended without a result")
	}
	if f.outputFormat == "text" && f.verbose {
		fmt.Fprint(stdio.Err, result.CostReport())
	}
	if result.IsError {
		if f.outputFormat == "text" {
			fmt.Fprintf(stdio.Err, "tack: %s\n", strings.Join(result.Errors, "; "))
		}
		return &cmdio.ExitError{Code: 1}
	}
	return nil
}

// readPrompt joins piped standard input and the prompt argument; "" when
// neither gives one.
func readPrompt(stdio IO, args []string) (string, error) {
	var parts []string
	if !stdio.StdinIsTerminal && stdio.In != nil {
		data, err := io.ReadAll(stdio.In)
		if err != nil {
			return "", fmt.Errorf("read standard input: %w", err)
		}
		if s := strings.TrimRight(string(data), "\n"); strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	if len(args) > 0 && strings.TrimSpace(args[0]) != "" {
		parts = append(parts, args[0])
	}
	return strings.Join(parts, "\n\n"), nil
}

// errNoPrompt is a print-mode run given no prompt, for which no
// SessionStart hook gave a first user message either (agent.ErrNoPrompt).
var errNoPrompt = cmdio.Usagef("no prompt: give one as an argument (tack -p \"…\") or on standard input")

// renderer writes messages in one output format.
type renderer struct {
	format  string
	verbose bool
	mu      sync.Mutex // w, written by message and by mirror
	w       *bufio.Writer
	all     []agent.Message
	// last is the latest result, which json and text print at the end, or
	// as soon as it is the last prompt's (printed): the session's records
	// and SessionEnd hooks do not hold the answer back.
	last    *agent.ResultMessage
	printed bool
}

func newRenderer(format string, verbose bool, w io.Writer) *renderer {
	return &renderer{format: format, verbose: verbose, w: bufio.NewWriter(w)}
}

// line writes v as one flushed JSON line.
func (r *renderer) line(v any) error {
	line, err := jsonx.Marshal(v)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(line)
	r.w.WriteByte('\n')
	// Each line is flushed as it happens: consumers read the stream live.
	return r.w.Flush()
}

func (r *renderer) message(m agent.Message) error {
	switch r.format {
	case "stream-json":
		return r.line(m)
	case "json":
		if r.verbose {
			r.all = append(r.all, m)
			return nil
		}
		if res, ok := m.(*agent.ResultMessage); ok {
			r.last = res
			if res.Last() {
				return r.close()
			}
		}
	case "text":
		if res, ok := m.(*agent.ResultMessage); ok {
			r.last = res
			if res.Last() {
				return r.close()
			}
		}
	}
	return nil
}

// close writes what the formats write at the end: json the whole array
// (verbose) or the last result, text the last result's text (a
// SessionStart hook's first user message runs before the prompt, with a
// result of its own: the run's answer is the last one).
func (r *renderer) close() error {
	if r.printed {
		return nil
	}
	r.printed = true
	switch {
	case r.format == "json" && r.verbose:
		data, err := jsonx.Marshal(r.all)
		if err != nil {
			return err
		}
		r.w.Write(data)
		r.w.WriteByte('\n')
	case r.format == "json" && r.last != nil:
		line, err := jsonx.Marshal(r.last)
		if err != nil {
			return err
		}
		r.w.Write(line)
		r.w.WriteByte('\n')
	case r.format == "text" && r.last != nil && !r.last.IsError:
		r.w.WriteString(r.last.Text())
		r.w.WriteByte('\n')
	}
	return r.w.Flush()
}
