package mcp

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/tool"
)

var (
	//go:embed list_resources.md
	listResourcesDescription string
	//go:embed read_resource.md
	readResourceDescription string
)

// Names of the resource tools, as Claude Code names them.
const (
	ListResourcesName = "ListMcpResourcesTool"
	ReadResourceName  = "ReadMcpResourceTool"
)

const listResourcesSchema = `{"type":"object","properties":{` +
	`"server":{"type":"string","description":"Optional server name to filter resources by"}},` +
	`"additionalProperties":false}`

const readResourceSchema = `{"type":"object","properties":{` +
	`"server":{"type":"string","description":"The MCP server name"},` +
	`"uri":{"type":"string","description":"The resource URI to read"}},` +
	`"required":["server","uri"],"additionalProperties":false}`

// listResourcesTool is ListMcpResourcesTool.
type listResourcesTool struct{ m *Manager }

func (listResourcesTool) Name() string                  { return ListResourcesName }
func (listResourcesTool) Description() string           { return listResourcesDescription }
func (listResourcesTool) InputSchema() json.RawMessage  { return json.RawMessage(listResourcesSchema) }
func (listResourcesTool) ReadOnly(json.RawMessage) bool { return true }

func (t listResourcesTool) Run(_ context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		Server string `json:"server"`
	}
	if err := tool.Decode(ListResourcesName, input, &in); err != nil {
		return tool.Result{}, err
	}
	if in.Server != "" {
		if err := t.m.knownServer(ListResourcesName, in.Server); err != nil {
			return tool.Result{}, err
		}
	}
	list := t.m.Resources(in.Server)
	if list == nil {
		list = []ResourceInfo{}
	}
	if len(list) == 0 {
		return tool.TextResult("No resources found. MCP servers may still provide tools even if they have no resources.", list), nil
	}
	b, err := json.Marshal(list)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Content: limitOutput([]llm.Block{llm.Text(string(b))}, t.m.limits.MaxOutputTokens), Structured: list}, nil
}

// knownServer returns an *InputError naming the servers there are when name
// is not one of them.
func (m *Manager) knownServer(toolName, name string) error {
	var names []string
	for _, s := range m.list() {
		if s.cfg.Name == name {
			return nil
		}
		names = append(names, s.cfg.Name)
	}
	slices.Sort(names)
	return tool.BadInput(toolName, "Server %q not found. Available servers: %s", name, strings.Join(names, ", "))
}

// readResourceTool is ReadMcpResourceTool.
type readResourceTool struct{ m *Manager }

func (readResourceTool) Name() string                  { return ReadResourceName }
func (readResourceTool) Description() string           { return readResourceDescription }
func (readResourceTool) InputSchema() json.RawMessage  { return json.RawMessage(readResourceSchema) }
func (readResourceTool) ReadOnly(json.RawMessage) bool { return true }

// resourceContent is one content of a read resource, as the structured
// result and the model's JSON give it.
type resourceContent struct {
	URI         string `json:"uri"`
	MIMEType    string `json:"mimeType,omitempty"`
	Text        string `json:"text,omitempty"`
	BlobSavedTo string `json:"blobSavedTo,omitempty"`
	BlobBytes   int    `json:"blobBytes,omitempty"`
}

func (t readResourceTool) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		Server string `json:"server"`
		URI    string `json:"uri"`
	}
	if err := tool.Decode(ReadResourceName, input, &in); err != nil {
		return tool.Result{}, err
	}
	if err := t.m.knownServer(ReadResourceName, in.Server); err != nil {
		return tool.Result{}, err
	}
	s, err := t.m.get(in.Server)
	if err != nil {
		return tool.Result{}, err
	}
	res, err := s.readResource(ctx, in.URI)
	if err != nil {
		return tool.Result{}, err
	}
	contents := make([]resourceContent, 0, len(res.Contents))
	var images []llm.Block
	for i, c := range res.Contents {
		if c == nil {
			continue
		}
		rc := resourceContent{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Blob != nil {
			rc.BlobBytes = len(c.Blob)
			if b := imageBlock(c.MIMEType, c.Blob, "resource "+c.URI); strings.HasPrefix(c.MIMEType, "image/") && b.Type == llm.TypeImage {
				images = append(images, b)
			} else if path, err := saveBlob(env, in.Server, i, c.URI, c.MIMEType, c.Blob); err == nil {
				rc.BlobSavedTo = path
			}
		}
		contents = append(contents, rc)
	}
	structured := map[string]any{"contents": contents}
	b, err := json.Marshal(structured)
	if err != nil {
		return tool.Result{}, err
	}
	blocks := append([]llm.Block{llm.Text(string(b))}, images...)
	return tool.Result{Content: limitOutput(blocks, t.m.limits.MaxOutputTokens), Structured: structured}, nil
}

// saveBlob writes binary resource content to the session's scratch
// directory, so that other tools can use it.
func saveBlob(env *tool.Env, server string, i int, uri, mime string, data []byte) (string, error) {
	if env == nil || env.ScratchDir == "" {
		return "", fmt.Errorf("no scratch directory")
	}
	dir, err := env.Scratch()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "mcp-resources")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := fmt.Sprintf("%s-%s-%d%s", sanitize(server), hash8(uri), i, extension(mime))
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

func extension(mime string) string {
	switch mime {
	case "application/pdf":
		return ".pdf"
	case "application/gzip":
		return ".gz"
	case "application/zip":
		return ".zip"
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	}
	return ".bin"
}
