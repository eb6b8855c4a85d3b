package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

// Bounds of what a bridged tool shows the model.
const (
	// maxNameLen is the API's limit on tool names (^[a-zA-Z0-9_-]{1,128}$).
	maxNameLen = 128
	// maxServerNameLen keeps a long server name from eating the tool names.
	maxServerNameLen = 48
	// maxDescription cuts a server's tool description (Claude Code's limit).
	maxDescription = 2048
	// maxImageBase64 is the API's limit on one image (5 MB of base64).
	maxImageBase64 = 5 << 20
	// bytesPerToken turns MAX_MCP_OUTPUT_TOKENS into a byte budget.
	bytesPerToken = 4
)

// sanitize replaces every character the API refuses in tool names by '_'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// hash8 is a short stable digest of s, to tell apart names that sanitising
// or cutting made equal.
func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// fit cuts name to max bytes, ending it with a digest of key when cut.
func fit(name, key string, max int) string {
	if len(name) <= max {
		return name
	}
	h := "_" + hash8(key)
	return name[:max-len(h)] + h
}

// serverPart is the sanitised server name inside tool names.
func serverPart(server string) string {
	s := sanitize(server)
	if s == "" {
		s = "_"
	}
	return fit(s, server, maxServerNameLen)
}

// toolNames returns tack's name for each of a server's tools (by the
// server's name): "mcp__<server>__<tool>", sanitised, at most 128 bytes,
// unique. Tools are named in the order of their own names, so the result
// does not depend on the order the server listed them in.
func toolNames(part string, remote []string) map[string]string {
	sorted := slices.Clone(remote)
	slices.Sort(sorted)
	out := make(map[string]string, len(sorted))
	used := make(map[string]bool, len(sorted))
	prefix := "mcp__" + part + "__"
	for _, r := range sorted {
		if _, dup := out[r]; dup {
			continue
		}
		name := fit(prefix+sanitize(r), prefix+r, maxNameLen)
		for i := 0; used[name]; i++ {
			// Another tool sanitised to the same name: tell them apart by
			// a digest of the real name.
			key := r
			if i > 0 {
				key = fmt.Sprintf("%s#%d", r, i)
			}
			suffix := "_" + hash8(key)
			base := prefix + sanitize(r)
			if len(base)+len(suffix) > maxNameLen {
				base = base[:maxNameLen-len(suffix)]
			}
			name = base + suffix
		}
		used[name] = true
		out[r] = name
	}
	return out
}

// cut shortens s to at most max bytes on a character boundary, marking the
// cut.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	n := max - len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}

// normalizeSchema makes a server's input schema one the Messages API
// accepts, changing as little as possible:
//   - a missing or non-object schema becomes {"type":"object"};
//   - "type" is set to "object" when missing or different (the API wants
//     an object at the top);
//   - top-level oneOf/anyOf/allOf, which the API rejects, are folded away:
//     the properties of every branch join the top-level properties (the
//     first definition of a name wins) and, for allOf only, their required
//     names join "required"; the server still validates what it receives;
//   - a schema the validator tack runs before each call cannot compile
//     loses "$schema" and "$id" (a meta-schema or base it cannot fetch);
//     if that is not enough, it is replaced by a permissive object schema,
//     so that the server, not tack, judges the input.
func normalizeSchema(in any) json.RawMessage {
	m, ok := in.(map[string]any)
	if !ok {
		var raw []byte
		if b, isRaw := in.(json.RawMessage); isRaw {
			raw = b
		} else if b, err := json.Marshal(in); err == nil {
			raw = b
		}
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return json.RawMessage(`{"type":"object","properties":{}}`)
		}
	} else {
		m = cloneMap(m)
	}
	if t, _ := m["type"].(string); t != "object" {
		m["type"] = "object"
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	} else {
		props = cloneMap(props)
	}
	required := stringList(m["required"])
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		branches, ok := m[key].([]any)
		if !ok {
			continue
		}
		delete(m, key)
		for _, b := range branches {
			bm, _ := b.(map[string]any)
			bp, _ := bm["properties"].(map[string]any)
			for name, p := range bp {
				if _, ok := props[name]; !ok {
					props[name] = p
				}
			}
			if key == "allOf" {
				for _, r := range stringList(bm["required"]) {
					if !slices.Contains(required, r) {
						required = append(required, r)
					}
				}
			}
		}
	}
	m["properties"] = props
	if len(required) > 0 {
		m["required"] = required
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if compiles(out) {
		return out
	}
	delete(m, "$schema")
	delete(m, "$id")
	if out, err = json.Marshal(m); err == nil && compiles(out) {
		return out
	}
	return json.RawMessage(`{"type":"object","additionalProperties":true}`)
}

// compiles reports whether the registry's validator accepts schema.
func compiles(schema []byte) bool {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return false
	}
	_, err := s.Resolve(nil)
	return err == nil
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func stringList(v any) []string {
	var out []string
	switch l := v.(type) {
	case []any:
		for _, s := range l {
			if str, ok := s.(string); ok {
				out = append(out, str)
			}
		}
	case []string:
		out = append(out, l...)
	}
	return out
}

// mcpTool is one server tool offered to the model.
type mcpTool struct {
	srv      *server
	name     string // tack's name
	remote   string // the server's name
	desc     string
	schema   json.RawMessage
	readOnly bool
}

var _ tool.Tool = (*mcpTool)(nil)

// bridgeTool turns a server tool into a tool.Tool called name.
func bridgeTool(srv *server, name string, t *mcp.Tool) *mcpTool {
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, srv.cfg.Name)
	}
	return &mcpTool{
		srv:      srv,
		name:     name,
		remote:   t.Name,
		desc:     cut(desc, maxDescription),
		schema:   normalizeSchema(t.InputSchema),
		readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint,
	}
}

func (t *mcpTool) Name() string                  { return t.name }
func (t *mcpTool) Description() string           { return t.desc }
func (t *mcpTool) InputSchema() json.RawMessage  { return t.schema }
func (t *mcpTool) ReadOnly(json.RawMessage) bool { return t.readOnly }
func (t *mcpTool) same(o *mcpTool) bool {
	return t.desc == o.desc && string(t.schema) == string(o.schema) && t.readOnly == o.readOnly
}
func (t *mcpTool) limit() int { return t.srv.m.limits.MaxOutputTokens }

// Run calls the tool on its server, starting the server again first if it
// crashed.
func (t *mcpTool) Run(ctx context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	var args json.RawMessage = []byte("{}")
	if trimmed := strings.TrimSpace(string(input)); trimmed != "" && trimmed != "null" {
		args = input
	}
	res, err := t.srv.callTool(ctx, t, args)
	if err != nil {
		return tool.Result{}, err
	}
	return convertResult(res, t.limit()), nil
}

// convertResult maps an MCP tool result to what the model sees:
// text → text blocks; image → image blocks; audio → a note (the API takes
// no audio); resource links and embedded resources → text (an embedded
// image → an image block); structuredContent → JSON text when no block is
// text, and the structured result for hooks either way. Text beyond
// maxTokens·4 bytes is cut with a note saying so.
func convertResult(res *mcp.CallToolResult, maxTokens int) tool.Result {
	blocks := contentBlocks(res.Content)
	if res.StructuredContent != nil && !hasText(blocks) {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			blocks = append(blocks, llm.Text(string(b)))
		}
	}
	if len(blocks) == 0 {
		blocks = []llm.Block{llm.Text("(the tool returned no content)")}
	}
	out := tool.Result{Content: limitOutput(blocks, maxTokens), IsError: res.IsError}
	if res.StructuredContent != nil {
		out.Structured = res.StructuredContent
	} else {
		out.Structured = res.Content
	}
	return out
}

func hasText(blocks []llm.Block) bool {
	for _, b := range blocks {
		if b.Type == llm.TypeText {
			return true
		}
	}
	return false
}

// contentBlocks converts MCP content (tool results, prompt messages) into
// text and image blocks.
func contentBlocks(content []mcp.Content) []llm.Block {
	var out []llm.Block
	for _, c := range content {
		if b, ok := contentBlock(c); ok {
			out = append(out, b)
		}
	}
	return out
}

func contentBlock(c mcp.Content) (llm.Block, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return llm.Text(c.Text), true
	case *mcp.ImageContent:
		return imageBlock(c.MIMEType, c.Data, "image"), true
	case *mcp.AudioContent:
		return llm.Text(fmt.Sprintf("[audio content (%s, %d bytes) not shown: the model takes no audio input]", orUnknown(c.MIMEType), len(c.Data))), true
	case *mcp.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[Resource link: %s", c.URI)
		if c.Name != "" {
			fmt.Fprintf(&b, " name=%q", c.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, " mimeType=%s", c.MIMEType)
		}
		b.WriteString("]")
		if c.Description != "" {
			b.WriteString("\n" + c.Description)
		}
		return llm.Text(b.String()), true
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return llm.Block{}, false
		}
		return resourceBlock(c.Resource), true
	}
	return llm.Block{}, false
}

// resourceBlock shows one resource content: its text, an image, or a note
// about binary data.
func resourceBlock(r *mcp.ResourceContents) llm.Block {
	if r.Blob != nil {
		if strings.HasPrefix(r.MIMEType, "image/") {
			return imageBlock(r.MIMEType, r.Blob, "resource "+r.URI)
		}
		return llm.Text(fmt.Sprintf("[Resource %s (%s): %d bytes of binary data, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
	}
	head := "[Resource " + r.URI
	if r.MIMEType != "" {
		head += " (" + r.MIMEType + ")"
	}
	return llm.Text(head + "]\n" + r.Text)
}

// imageBlock returns an image block of data, or a note when the API would
// refuse it.
func imageBlock(mime string, data []byte, what string) llm.Block {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
	default:
		return llm.Text(fmt.Sprintf("[%s (%s, %d bytes) not shown: the model takes PNG, JPEG, GIF and WebP images]", what, orUnknown(mime), len(data)))
	}
	enc := base64.StdEncoding.EncodeToString(data)
	if len(enc) > maxImageBase64 {
		return llm.Text(fmt.Sprintf("[%s (%s, %d bytes) not shown: larger than the API's 5 MB image limit]", what, mime, len(data)))
	}
	return llm.Block{Type: llm.TypeImage, Source: &llm.ImageSource{Type: "base64", MediaType: mime, Data: enc}}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// limitOutput cuts the text of blocks to maxTokens·4 bytes in all, and says
// so in a last text block. Images are not counted: their cost is not their
// size, and each is already bounded by the API's limit.
func limitOutput(blocks []llm.Block, maxTokens int) []llm.Block {
	budget := maxTokens * bytesPerToken
	total := 0
	for _, b := range blocks {
		if b.Type == llm.TypeText {
			total += len(b.Text)
		}
	}
	if total <= budget {
		return blocks
	}
	out := make([]llm.Block, 0, len(blocks)+1)
	left := budget
	for _, b := range blocks {
		if b.Type != llm.TypeText {
			out = append(out, b)
			continue
		}
		if left <= 0 {
			continue
		}
		if len(b.Text) > left {
			n := left
			for n > 0 && !utf8.RuneStart(b.Text[n]) {
				n--
			}
			b.Text = b.Text[:n]
		}
		left -= len(b.Text)
		out = append(out, b)
	}
	out = append(out, llm.Text(fmt.Sprintf(
		"\n[Output truncated: the MCP tool returned about %d tokens, more than the %d allowed (MAX_MCP_OUTPUT_TOKENS). Ask the tool for less, e.g. a narrower query or a page, to see the rest.]",
		(total+bytesPerToken-1)/bytesPerToken, maxTokens)))
	return out
}
