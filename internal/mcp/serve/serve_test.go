package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/shell"
	"github.com/tackcode/tack/internal/tool"
	"github.com/tackcode/tack/internal/tool/builtin"
)

func newEnv(t *testing.T) (*tool.Registry, *tool.Env) {
	t.Helper()
	dir := t.TempDir()
	reg := tool.NewRegistry(builtin.All()...)
	env := &tool.Env{ProjectDir: dir, Shell: shell.New(dir, nil), Files: tool.NewFileState(), ScratchDir: t.TempDir()}
	return reg, env
}

// connect runs Serve on pipes, as tack mcp serve runs it on stdin/stdout,
// and connects the SDK's client to it.
func connect(t *testing.T, reg *tool.Registry, env *tool.Env) *mcp.ClientSession {
	t.Helper()
	// Not t.Context(): that is done before cleanups run, and the cleanup
	// checks that Serve returns because the client left.
	ctx, cancel := context.WithCancel(context.Background())
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, reg, env, serverIn, serverOut) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		clientOut.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve after the client left: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return after the client disconnected")
		}
		cancel()
	})
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestServe(t *testing.T) {
	reg, env := newEnv(t)
	cs := connect(t, reg, env)

	if got := cs.InitializeResult().ServerInfo.Name; got != "tack" {
		t.Errorf("server name %q", got)
	}

	t.Run("list", func(t *testing.T) {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
			orig, ok := reg.Get(tl.Name)
			if !ok {
				t.Errorf("listed %s, not in the registry", tl.Name)
				continue
			}
			if tl.Description != orig.Description() {
				t.Errorf("%s: description differs", tl.Name)
			}
			got, _ := json.Marshal(tl.InputSchema)
			var a, b any
			json.Unmarshal(got, &a)
			json.Unmarshal(orig.InputSchema(), &b)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Errorf("%s: schema\n%s\nwant\n%s", tl.Name, ja, jb)
			}
		}
		slices.Sort(names)
		want := slices.Clone(reg.Names())
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
	})

	t.Run("read", func(t *testing.T) {
		p := filepath.Join(env.ProjectDir, "hello.txt")
		os.WriteFile(p, []byte("hello from a file\n"), 0o644)
		res := call(t, cs, "Read", map[string]any{"file_path": p})
		// One text block: the result object as JSON, also structured.
		want := `{"type":"text","file":{"filePath":` + strconv.Quote(p) + `,"content":"hello from a file\n","numLines":2,"startLine":1,"totalLines":2}}`
		if res.IsError || len(res.Content) != 1 || text(res) != want {
			t.Errorf("Read: error=%v %q, want %s", res.IsError, text(res), want)
		}
		if m, ok := res.StructuredContent.(map[string]any); !ok || m["type"] != "text" {
			t.Errorf("Read structured content %#v", res.StructuredContent)
		}
	})

	t.Run("image", func(t *testing.T) {
		img := image.NewRGBA(image.Rect(0, 0, 4, 4))
		img.Set(1, 1, color.RGBA{255, 0, 0, 255})
		var buf bytes.Buffer
		png.Encode(&buf, img)
		p := filepath.Join(env.ProjectDir, "dot.png")
		os.WriteFile(p, buf.Bytes(), 0o644)
		res := call(t, cs, "Read", map[string]any{"file_path": p})
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("Read image: %v %v", res.IsError, text(res))
		}
		// As Claude Code answers: the image in the result object's base64.
		var got struct {
			Type string `json:"type"`
			File struct {
				Base64 string `json:"base64"`
				Type   string `json:"type"`
			} `json:"file"`
		}
		if err := json.Unmarshal([]byte(text(res)), &got); err != nil || got.Type != "image" || got.File.Type != "image/png" {
			t.Fatalf("content %q: %v", text(res), err)
		}
		data, _ := base64.StdEncoding.DecodeString(got.File.Base64)
		if _, err := png.Decode(bytes.NewReader(data)); err != nil {
			t.Errorf("image data is not the PNG: %v", err)
		}
	})

	t.Run("bash", func(t *testing.T) {
		res := call(t, cs, "Bash", map[string]any{"command": "echo hi"})
		if want := `{"stdout":"hi","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`; res.IsError || text(res) != want {
			t.Errorf("Bash: error=%v %q, want %s", res.IsError, text(res), want)
		}
		if res.StructuredContent == nil {
			t.Error("Bash: no structured content")
		}
	})

	t.Run("bash failure", func(t *testing.T) {
		res := call(t, cs, "Bash", map[string]any{"command": "echo oops >&2; exit 3"})
		if !res.IsError || !strings.Contains(text(res), "oops") {
			t.Errorf("failing Bash: error=%v %q", res.IsError, text(res))
		}
	})

	t.Run("invalid input", func(t *testing.T) {
		for _, args := range []any{
			map[string]any{},                                 // file_path is required
			map[string]any{"file_path": 42},                  // wrong type
			map[string]any{"file_path": "/x", "bogus": true}, // unknown property
		} {
			res := call(t, cs, "Read", args)
			if !res.IsError || !strings.HasPrefix(text(res), "Tool Read arguments failed schema validation: ") {
				t.Errorf("Read %v: error=%v %q", args, res.IsError, text(res))
			}
		}
	})

	t.Run("tool input error", func(t *testing.T) {
		// Valid by the schema, refused by the tool before it runs.
		res := call(t, cs, "Read", map[string]any{"file_path": "relative/../nowhere-" + t.Name()})
		if !res.IsError || strings.HasPrefix(text(res), "{") {
			t.Errorf("Read of a missing file: %q", text(res))
		}
		res = call(t, cs, "Edit", map[string]any{"file_path": filepath.Join(env.ProjectDir, "absent.txt"), "old_string": "a", "new_string": "b"})
		if !res.IsError || !strings.HasPrefix(text(res), "Tool Edit input is invalid: ") {
			t.Errorf("Edit of a missing file: %q", text(res))
		}
	})

	t.Run("unknown tool", func(t *testing.T) {
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "Teleport"}); err == nil {
			t.Error("an unknown tool was called")
		}
	})
}

// Serve returns when its context is done, even with the client still there.
func TestServeStopsOnCancel(t *testing.T) {
	reg, env := newEnv(t)
	clientIn, serverOut := io.Pipe()
	serverIn, clientOut := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, reg, env, serverIn, serverOut) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context was cancelled")
	}
}

func TestGate(t *testing.T) {
	reg, env := newEnv(t)
	var asked []string
	srv := NewServer(reg, env, &Options{Name: "gated", Gate: func(ctx context.Context, tl tool.Tool, input json.RawMessage) error {
		asked = append(asked, tl.Name())
		if tl.Name() == "Bash" {
			return errors.New("Bash is not allowed here")
		}
		return nil
	}})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.InitializeResult().ServerInfo.Name != "gated" {
		t.Errorf("name %q", cs.InitializeResult().ServerInfo.Name)
	}

	marker := filepath.Join(env.ProjectDir, "ran")
	res := call(t, cs, "Bash", map[string]any{"command": "touch " + marker})
	if !res.IsError || !strings.Contains(text(res), "not allowed") {
		t.Errorf("gated Bash: %v %q", res.IsError, text(res))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused command ran")
	}
	// Invalid input is refused before the gate is asked.
	call(t, cs, "Bash", map[string]any{})
	res = call(t, cs, "Glob", map[string]any{"pattern": "*"})
	if res.IsError {
		t.Errorf("Glob: %q", text(res))
	}
	if !slices.Equal(asked, []string{"Bash", "Glob"}) {
		t.Errorf("gate asked for %v", asked)
	}
}
