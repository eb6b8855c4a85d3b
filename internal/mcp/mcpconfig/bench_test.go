package mcpconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeHugeClaudeJSON writes a ~/.claude.json of about size bytes, shaped as
// Claude Code writes it after long use: many projects, each with a prompt
// history full of pasted text (escapes, non-ASCII, numbers), and this
// project's entry with its servers somewhere in the middle.
func writeHugeClaudeJSON(tb testing.TB, files Files, size int) {
	tb.Helper()
	paste := strings.Repeat(`line of pasted code: if (x < 10) { print(\"héllo\\n\"); }\n\tindented \u00e9 \ud83d\ude00 `, 20)
	var b strings.Builder
	b.WriteString(`{
  "numStartups": 4242,
  "installMethod": "native",
  "tipsHistory": {"new-user-warmup": 7, "memory-command": 3},
  "mcpServers": {
    "everywhere": {"type": "stdio", "command": "npx", "args": ["-y", "everything"], "env": {"A": "1"}}
  },
  "projects": {
`)
	project := func(key string, servers string) {
		fmt.Fprintf(&b, "    %s: {\n      \"allowedTools\": [],\n      \"history\": [\n", jsonString(key))
		for h := 0; h < 40; h++ {
			if h > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, `        {"display": "prompt %d: fix the \"bug\" in file_%d.go", "pastedContents": {"1": {"id": 1, "type": "text", "content": "%s"}}, "timestamp": %d.5e3}`, h, h, paste, 1700000000+h)
		}
		fmt.Fprintf(&b, "\n      ],\n      \"mcpServers\": {%s},\n      \"enabledMcpjsonServers\": [\"docs\"],\n      \"disabledMcpjsonServers\": [],\n      \"disabledMcpServers\": [],\n      \"hasTrustDialogAccepted\": true,\n      \"lastCost\": 0.1234,\n      \"lastDuration\": 123456,\n      \"exampleFiles\": [\"a.go\", \"b.go\", \"c.go\"],\n      \"lastSessionId\": \"0f0e0d0c-0b0a-0908-0706-050403020100\"\n    }", servers)
	}
	n := 0
	for b.Len() < size/2 {
		project(fmt.Sprintf("/work/project-%d", n), `"theirs": {"command": "theirs"}`)
		b.WriteString(",\n")
		n++
	}
	project(files.Key(), `"mine": {"command": "mine", "args": ["--x"]}, "http": {"type": "http", "url": "https://example.com/mcp"}`)
	for b.Len() < size {
		b.WriteString(",\n")
		project(fmt.Sprintf("/work/later-%d", n), `"theirs": {"command": "theirs"}`)
		n++
	}
	b.WriteString("\n  },\n  \"userID\": \"0123abcd\"\n}\n")
	if err := os.WriteFile(files.ClaudeJSON, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkLoadHugeClaudeJSON loads the servers of a project from a 27 MB
// ~/.claude.json: the filter keeps this from building the whole tree.
func BenchmarkLoadHugeClaudeJSON(b *testing.B) {
	files := Files{ClaudeJSON: filepath.Join(b.TempDir(), ".claude.json"), ProjectDir: b.TempDir()}
	writeHugeClaudeJSON(b, files, 27<<20)
	info, err := os.Stat(files.ClaudeJSON)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(info.Size())
	b.ReportAllocs()
	for b.Loop() {
		s, err := Load(Options{Files: files, LookupEnv: env(nil)})
		if err != nil {
			b.Fatal(err)
		}
		if p := s.Problems(); len(p) != 0 {
			b.Fatal(p[0])
		}
		if len(s.defs) != 3 {
			b.Fatalf("%d servers", len(s.defs))
		}
	}
}

// BenchmarkEditHugeClaudeJSON records an approval in a 27 MB
// ~/.claude.json: the edit parses the file, and checks the result, shallowly.
func BenchmarkEditHugeClaudeJSON(b *testing.B) {
	files := Files{ClaudeJSON: filepath.Join(b.TempDir(), ".claude.json"), ProjectDir: b.TempDir()}
	writeHugeClaudeJSON(b, files, 27<<20)
	b.ReportAllocs()
	approved := false
	for b.Loop() {
		approved = !approved
		if err := files.SetApproval("docs", approved); err != nil {
			b.Fatal(err)
		}
	}
}
