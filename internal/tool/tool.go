// Package tool defines the Tool interface, the per-session environment tools
// run in, and the registry that offers them to the model. Each built-in tool
// lives in its own file, with its description in an embedded Markdown file
// beside it.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// Tool is something the model can call.
type Tool interface {
	// Name is the name the model calls it by; hooks and permission rules match it.
	Name() string
	// Description is the text the model reads. It must not change within a
	// session, since it sits in the cached prompt prefix.
	Description() string
	// InputSchema is the JSON Schema of the input object.
	InputSchema() json.RawMessage
	// ReadOnly reports whether this call changes nothing (no file, process or
	// remote state), so that it may run in parallel with other read-only calls.
	ReadOnly(input json.RawMessage) bool
	// Run executes one call. An error becomes an is_error tool result carrying
	// its text; an *InputError is shown to the model as a tool_use_error.
	// Run must return promptly once ctx is done.
	Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

// Result is what a call produced.
type Result struct {
	// Content is what the model sees: text and image blocks.
	Content []llm.Block
	// IsError marks a result that is a failure but still has content and
	// structure, such as a command that exited non-zero.
	IsError bool
	// Structured is the machine-readable result: stream-json's tool_use_result
	// and the PostToolUse hook's tool_response.
	Structured any
	// EndsTurn says the call completes the model's turn (StructuredOutput's
	// accepted answer): once the batch's results are in, the model is not
	// asked again. An error result never ends the turn.
	EndsTurn bool
}

// TextResult is a result with one text block.
func TextResult(text string, structured any) Result {
	return Result{Content: []llm.Block{llm.Text(text)}, Structured: structured}
}

// InputError is a call whose input is malformed or impossible to act on
// before anything ran. The model sees it wrapped in <tool_use_error>.
type InputError struct {
	Tool string
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// BadInput returns an *InputError for tool with a formatted message.
func BadInput(tool, format string, args ...any) error {
	return &InputError{Tool: tool, Err: fmt.Errorf(format, args...)}
}

// IsInputError reports whether err is an *InputError.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

// Milliseconds converts an optional number of milliseconds from the input of tool
// into a duration: def when absent, an input error when negative or not a
// number. Huge values are kept finite; callers cap them.
func Milliseconds(toolName, field string, ms *float64, def time.Duration) (time.Duration, error) {
	if ms == nil {
		return def, nil
	}
	if math.IsNaN(*ms) || *ms < 0 {
		return 0, BadInput(toolName, "%s must be a non-negative number of milliseconds", field)
	}
	const ceiling = float64(365 * 24 * time.Hour / time.Millisecond)
	return time.Duration(min(*ms, ceiling) * float64(time.Millisecond)), nil
}
