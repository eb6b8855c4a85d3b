// Package serve offers tack's tools to other programs as an MCP server
// (tack mcp serve): each tool of a registry becomes an MCP tool with its
// name, description and input schema unchanged, and a call runs it in the
// given environment as the engine would. Results are answered as Claude
// Code's mcp serve answers them (testdata/claude-code holds what it was
// seen to answer): a success is the tool's structured result as JSON.
//
// No permission prompt stands between the client and the tools by default:
// the MCP client is the one asking, and it is its job to ask its user (as
// Claude Code's own mcp serve does). Options.Gate adds a check.
package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/version"
)

// Gate decides whether a call may run, after its input was validated. A
// non-nil error refuses it; the client sees its text as an error result.
type Gate func(ctx context.Context, t tool.Tool, input json.RawMessage) error

// Options adjust the server. The zero value serves every tool ungated.
type Options struct {
	// Gate checks each call; nil allows all.
	Gate Gate
	// Name and Version are what the server calls itself in the MCP
	// handshake. Empty: "tack" and tack's version.
	Name, Version string
	// Logger receives the SDK's log of server activity; nil discards it.
	Logger *slog.Logger
}

// Serve serves the tools of reg over the MCP stdio transport (newline
// delimited JSON-RPC) read from in and written to out, until the client
// disconnects or ctx is done.
func Serve(ctx context.Context, reg *tool.Registry, env *tool.Env, in io.Reader, out io.Writer) error {
	return NewServer(reg, env, nil).Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// NewServer returns an MCP server offering the tools reg holds now (a group
// added later is not offered), run in env. opts may be nil.
func NewServer(reg *tool.Registry, env *tool.Env, opts *Options) *mcp.Server {
	if opts == nil {
		opts = &Options{}
	}
	impl := &mcp.Implementation{Name: opts.Name, Version: opts.Version}
	if impl.Name == "" {
		impl.Name = "tack"
	}
	if impl.Version == "" {
		impl.Version = version.Version
	}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{Logger: opts.Logger})
	for _, t := range reg.Tools() {
		schema := t.InputSchema()
		if !objectSchema(schema) {
			continue // MCP requires an object input; such a tool cannot be offered
		}
		srv.AddTool(&mcp.Tool{Name: t.Name(), Description: t.Description(), InputSchema: json.RawMessage(schema)}, handler(reg, env, opts.Gate, t))
	}
	return srv
}

// objectSchema reports whether schema describes an object, as MCP requires
// of an input schema (the SDK panics otherwise).
func objectSchema(schema json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(schema, &s) == nil && s.Type == "object"
}

// handler runs calls of t: validate, gate, run, translate the result.
func handler(reg *tool.Registry, env *tool.Env, gate Gate, t tool.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		input := req.Params.Arguments
		if len(input) == 0 || string(input) == "null" {
			input = json.RawMessage("{}")
		}
		if err := reg.Validate(t, input); err != nil {
			return inputError(t.Name(), err, true), nil
		}
		if gate != nil {
			if err := gate(ctx, t, input); err != nil {
				return errorResult(err.Error()), nil
			}
		}
		// Tools that keep per-call state (background output, hooks) key it
		// by the call's id; MCP calls have none tack can use, so make one.
		ctx = tool.WithToolUseID(ctx, "mcp_"+uuid.NewString())
		res, err := t.Run(ctx, env, input)
		if err != nil {
			if tool.IsInputError(err) {
				return inputError(t.Name(), err, false), nil
			}
			return errorResult(err.Error()), nil
		}
		return result(res), nil
	}
}

// inputError is a call refused for its input, worded as Claude Code's
// mcp serve words it: schema is whether the schema refused it (before the
// tool ran) rather than the tool itself.
func inputError(name string, err error, schema bool) *mcp.CallToolResult {
	if schema {
		return errorResult("Tool " + name + " arguments failed schema validation: " + err.Error())
	}
	return errorResult("Tool " + name + " input is invalid: " + err.Error())
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// result translates a tool result as Claude Code's mcp serve does: a
// success whose structured value is a JSON object (what stream-json calls
// tool_use_result) is one text block holding that object, which is also
// the structuredContent; a failure, or a result with no such object, is
// its model-facing content.
func result(res tool.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{}, IsError: res.IsError}
	if res.Structured != nil && !res.IsError {
		if data, err := json.Marshal(res.Structured); err == nil && len(data) > 0 && data[0] == '{' {
			out.Content = append(out.Content, &mcp.TextContent{Text: string(data)})
			out.StructuredContent = json.RawMessage(data)
			return out
		}
	}
	for _, b := range res.Content {
		if c := content(b); c != nil {
			out.Content = append(out.Content, c)
		}
	}
	return out
}

// content translates one block; nil drops it.
func content(b llm.Block) mcp.Content {
	switch b.Type {
	case llm.TypeText:
		return &mcp.TextContent{Text: b.Text}
	case llm.TypeImage:
		if b.Source == nil {
			return nil
		}
		switch b.Source.Type {
		case "base64":
			data, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				return &mcp.TextContent{Text: fmt.Sprintf("[image that could not be decoded: %v]", err)}
			}
			return &mcp.ImageContent{Data: data, MIMEType: b.Source.MediaType}
		case "url":
			return &mcp.ResourceLink{URI: b.Source.URL, Name: "image", MIMEType: b.Source.MediaType}
		}
		return nil
	}
	if len(b.Raw) > 0 {
		return &mcp.TextContent{Text: string(b.Raw)}
	}
	return nil
}
