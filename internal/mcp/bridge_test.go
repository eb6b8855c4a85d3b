package mcp

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool/tooltest"
)

var apiName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

func TestToolNames(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 10)
	remote := []string{"echo", "get.file", "get_file", "get/file", "naïve tool", long, long + "2", "echo"}
	got := toolNames(serverPart("my server.v2"), remote)
	if len(got) != len(remote)-1 {
		t.Fatalf("%d names for %d distinct tools: %v", len(got), len(remote)-1, got)
	}
	if got["echo"] != "mcp__my_server_v2__echo" {
		t.Errorf("echo → %q", got["echo"])
	}
	if got["naïve tool"] != "mcp__my_server_v2__na_ve_tool" {
		t.Errorf("naïve tool → %q", got["naïve tool"])
	}
	seen := map[string]string{}
	for r, n := range got {
		if !apiName.MatchString(n) {
			t.Errorf("%q → %q breaks the API's rule", r, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("%q and %q both → %q", r, other, n)
		}
		seen[n] = r
	}
	// The first of the names that sanitise alike, by the server's names,
	// keeps the plain form; the result does not depend on the list order.
	if got["get.file"] != "mcp__my_server_v2__get_file" {
		t.Errorf("get.file → %q", got["get.file"])
	}
	again := toolNames(serverPart("my server.v2"), []string{long + "2", "get_file", long, "get/file", "get.file"})
	for r, n := range again {
		if got[r] != n {
			t.Errorf("%q → %q, then %q in another order", r, got[r], n)
		}
	}
	if len(serverPart(strings.Repeat("s", 300))) > maxServerNameLen {
		t.Error("long server name not cut")
	}
}

func TestNormalizeSchema(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"nil", nil, `{"type":"object","properties":{}}`},
		{"not an object", "string", `{"type":"object","properties":{}}`},
		{"no type", map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}},
			`{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{"kept as is", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}},
			"required": []any{"a"}, "additionalProperties": false, "$schema": "http://json-schema.org/draft-07/schema#"},
			`{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false,"properties":{"a":{"type":"integer"}},"required":["a"],"type":"object"}`},
		{"top-level anyOf folded", map[string]any{"type": "object", "anyOf": []any{
			map[string]any{"properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}},
			map[string]any{"properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}}},
			`{"properties":{"id":{"type":"string"},"name":{"type":"string"}},"type":"object"}`},
		{"top-level allOf folded with required", map[string]any{"allOf": []any{
			map[string]any{"properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}}}},
			`{"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"}`},
		{"raw JSON", json.RawMessage(`{"type":"object","properties":{"x":{"type":"boolean"}}}`),
			`{"properties":{"x":{"type":"boolean"}},"type":"object"}`},
		{"uncompilable", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/nowhere"}}},
			`{"type":"object","additionalProperties":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := normalizeSchema(tc.in)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if err := tooltest.CompileSchema(got); err != nil {
				t.Errorf("%s: %v", got, err)
			}
		})
	}
}

func TestConvertResult(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	res := convertResult(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "hello"},
		&mcp.ImageContent{MIMEType: "image/png", Data: png},
		&mcp.ImageContent{MIMEType: "image/tiff", Data: []byte("x")},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
		&mcp.ResourceLink{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain", Description: "the a file"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t", MIMEType: "text/markdown", Text: "# T"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: []byte("PK")}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://i", MIMEType: "image/png", Blob: png}},
	}, IsError: true}, DefaultMaxOutputTokens)
	if !res.IsError {
		t.Error("isError lost")
	}
	var types []string
	for _, b := range res.Content {
		types = append(types, b.Type)
	}
	if strings.Join(types, ",") != "text,image,text,text,text,text,text,image" {
		t.Fatalf("block types %v", types)
	}
	if res.Content[1].Source.Data != "iVBORw0KGgpmYWtl" || res.Content[1].Source.MediaType != "image/png" {
		t.Errorf("image %+v", res.Content[1].Source)
	}
	text := llm.TextOf(res.Content)
	for _, want := range []string{"hello", "image/tiff", "audio/wav", "no audio",
		`[Resource link: file:///a.txt name="a" mimeType=text/plain]`, "the a file",
		"[Resource mem://t (text/markdown)]\n# T", "[Resource mem://b (application/zip): 2 bytes of binary data, not shown]"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if _, ok := res.Structured.([]mcp.Content); !ok {
		t.Errorf("structured %T, want the content", res.Structured)
	}

	// Structured content alone becomes JSON text, and the structured result.
	res = convertResult(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"t": 21.5}}, DefaultMaxOutputTokens)
	if got := llm.TextOf(res.Content); got != `{"t":21.5}` {
		t.Errorf("structured as text: %q", got)
	}
	if m, ok := res.Structured.(map[string]any); !ok || m["t"] != 21.5 {
		t.Errorf("structured %#v", res.Structured)
	}
	// With text content too, the text is what the model sees.
	res = convertResult(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "21.5°"}}, StructuredContent: map[string]any{"t": 21.5}}, DefaultMaxOutputTokens)
	if got := llm.TextOf(res.Content); got != "21.5°" {
		t.Errorf("text and structured: %q", got)
	}
	// Nothing at all still says something.
	res = convertResult(&mcp.CallToolResult{}, DefaultMaxOutputTokens)
	if llm.TextOf(res.Content) == "" {
		t.Error("empty result has no text")
	}
}

func TestLimitOutput(t *testing.T) {
	img := llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: strings.Repeat("A", 1000)}}
	blocks := []llm.Block{llm.Text(strings.Repeat("a", 30)), img, llm.Text(strings.Repeat("é", 30)), llm.Text("tail")}
	out := limitOutput(blocks, 10) // 40 bytes
	var text strings.Builder
	images := 0
	for _, b := range out[:len(out)-1] {
		if b.Type == llm.TypeText {
			text.WriteString(b.Text)
		} else {
			images++
		}
	}
	if text.Len() > 40 || !strings.HasPrefix(text.String(), strings.Repeat("a", 30)) || images != 1 {
		t.Errorf("kept %d bytes %q and %d images", text.Len(), text.String(), images)
	}
	if !strings.Contains(text.String()[30:], "é") || strings.ContainsRune(text.String(), '\uFFFD') {
		t.Errorf("cut inside a character: %q", text.String())
	}
	note := out[len(out)-1].Text
	if !strings.Contains(note, "MAX_MCP_OUTPUT_TOKENS") || !strings.Contains(note, "about 24 tokens") {
		t.Errorf("note %q", note)
	}
	if got := limitOutput(blocks[:1], 10); len(got) != 1 {
		t.Errorf("output within the limit changed: %+v", got)
	}
}

func TestLimitsFromEnv(t *testing.T) {
	env := map[string]string{"MCP_TIMEOUT": "1500", "MCP_TOOL_TIMEOUT": "abc", "MAX_MCP_OUTPUT_TOKENS": "1000"}
	l := LimitsFromEnv(func(k string) string { return env[k] })
	if l.StartTimeout != 1500*time.Millisecond || l.ToolTimeout != DefaultToolTimeout || l.MaxOutputTokens != 1000 {
		t.Errorf("%+v", l)
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 16}
	b.Write([]byte("first line\nsecond line\n"))
	b.Write([]byte("third\n"))
	if got := b.String(); got != "…third" && !strings.HasSuffix(got, "third") {
		t.Errorf("%q", got)
	}
	if len(b.buf) > 16 {
		t.Errorf("kept %d bytes", len(b.buf))
	}
	b2 := &tailBuffer{max: 16}
	b2.Write([]byte("short"))
	if b2.String() != "short" {
		t.Errorf("%q", b2.String())
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "PATH=/bin"}, map[string]string{"B": "3", "C": "4"})
	want := map[string]bool{"A=1": true, "B=3": true, "PATH=/bin": true, "C=4": true}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for _, kv := range got {
		if !want[kv] {
			t.Errorf("unexpected %q in %v", kv, got)
		}
	}
}

func TestRootURI(t *testing.T) {
	if got := rootURI("/tmp/my dir"); got != "file:///tmp/my%20dir" {
		t.Errorf("%q", got)
	}
}
