package acp

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/tackcode/tack/agent"
)

func TestMCPServersFromTheClient(t *testing.T) {
	got, err := mcpServers([]sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "files", Command: "node", Args: []string{"srv.js"}, Env: []sdk.EnvVariable{{Name: "TOKEN", Value: "t"}}}},
		{Http: &sdk.McpServerHttpInline{Name: "web", Url: "http://127.0.0.1:1/mcp", Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer x"}}}},
		{Sse: &sdk.McpServerSseInline{Name: "old", Url: "http://127.0.0.1:1/sse", Headers: []sdk.HttpHeader{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]agent.MCPServerConfig{
		"files": agent.MCPStdioServer{Command: "node", Args: []string{"srv.js"}, Env: map[string]string{"TOKEN": "t"}},
		"web":   agent.MCPHTTPServer{URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer x"}},
		"old":   agent.MCPSSEServer{URL: "http://127.0.0.1:1/sse", Headers: map[string]string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if _, err := mcpServers([]sdk.McpServer{{Acp: &sdk.McpServerAcpInline{}}}); err == nil || !strings.Contains(err.Error(), "mcpServers[0]") {
		t.Errorf("an acp transport: %v", err)
	}
	if _, err := mcpServers([]sdk.McpServer{{Stdio: &sdk.McpServerStdio{Command: "x"}}}); err == nil || !strings.Contains(err.Error(), "no name") {
		t.Errorf("no name: %v", err)
	}
}

func TestPromptContent(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	got, err := promptContent([]sdk.ContentBlock{
		sdk.TextBlock("Look at"),
		sdk.ImageBlock(base64.StdEncoding.EncodeToString(png), "image/png"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///p/a.go", Text: "package a"}}),
		sdk.ResourceLinkBlock("b.go", "file:///p/b.go"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.ContentBlock{
		agent.TextBlock("Look at"),
		agent.ImageBlock("image/png", png),
		agent.TextBlock("<context ref=\"file:///p/a.go\">\npackage a\n</context>"),
		agent.TextBlock("@/p/b.go"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	for _, bad := range [][]sdk.ContentBlock{
		{sdk.AudioBlock("AAAA", "audio/wav")},
		{sdk.ImageBlock("not base64!", "image/png")},
		{sdk.TextBlock("")},
	} {
		if _, err := promptContent(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestStopReasonOfAFailedRun(t *testing.T) {
	_, err := stopReason(&agent.ResultMessage{Subtype: agent.ResultErrorDuringExecution, IsError: true, Errors: []string{"API error 500"}})
	if err == nil || !strings.Contains(err.Error(), "Internal error") {
		t.Errorf("err %v", err)
	}
	if r, err := stopReason(&agent.ResultMessage{Subtype: agent.ResultErrorDuringExecution, IsError: true, TerminalReason: "aborted_tools"}); err != nil || r != sdk.StopReasonCancelled {
		t.Errorf("aborted: %q %v", r, err)
	}
}
