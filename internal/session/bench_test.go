package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tackcode/tack/internal/llm"
)

// bigTranscript writes a session of n message records shaped like a real
// coding session: a prompt every few turns, and turns made of a text piece,
// a tool_use piece and a tool result of a few KB (code, with the quotes,
// tabs and newlines JSON must escape).
func bigTranscript(tb testing.TB, dir string, n int) string {
	path := filepath.Join(dir, sid1+".jsonl")
	s := newScript(tb, path, sid1)
	code := strings.Repeat("func f(x int) string {\n\treturn fmt.Sprintf(\"%d é\", x) // \"quoted\" <b>\n}\n", 30) // ~2.4 KB
	for i := 0; s.n < n; i++ {
		if i%8 == 0 {
			s.user(llm.Text(fmt.Sprintf("Please refactor module %d so that the errors are wrapped with context, and run the tests.", i)))
		}
		id := fmt.Sprintf("toolu_%06d", i)
		s.assistant(fmt.Sprintf("msg_%06d", i), llm.Text("I'll read the file first, then change the error handling where it loses context."),
			toolUse(id, "Read", fmt.Sprintf(`{"file_path":"/work/proj/internal/pkg%d/file.go"}`, i)))
		s.user(llm.ToolResult(id, code[:len(code)-i%500], false))
	}
	s.close()
	return path
}

// BenchmarkLoad10k loads a transcript of 10 000 message records.
func BenchmarkLoad10k(b *testing.B) {
	path := bigTranscript(b, b.TempDir(), 10000)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	want := messagesOf(b, path)
	for b.Loop() {
		tr, err := Load(path)
		if err != nil || len(tr.Messages) < want {
			b.Fatal(err, len(tr.Messages))
		}
	}
}

// BenchmarkList lists a project of 50 sessions, 5 of them large.
func BenchmarkList(b *testing.B) {
	dir := b.TempDir()
	big := bigTranscript(b, b.TempDir(), 2000)
	data, _ := os.ReadFile(big)
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("%08d-2222-4333-8444-555555555555", i)
		if i%10 == 0 {
			os.WriteFile(filepath.Join(dir, id+".jsonl"), data, 0o600)
		} else {
			writeSession(b, dir, id, "prompt", time.Now())
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if l, err := List(dir); err != nil || len(l) != 50 {
			b.Fatal(err, len(l))
		}
	}
}

// BenchmarkLoad10kShort loads a transcript of 10 000 short messages, a
// question and a one-line answer each, as bench/harness's resume scenario
// writes: the per-record cost, where BenchmarkLoad10k is the per-byte one.
func BenchmarkLoad10kShort(b *testing.B) {
	path := filepath.Join(b.TempDir(), sid1+".jsonl")
	s := newScript(b, path, sid1)
	for i := 0; s.n < 10000; i++ {
		s.user(llm.Text(fmt.Sprintf("question %d: what does function f%d in pkg/mod%d.go do, and is it tested?", i, i, i%50)))
		s.assistant(fmt.Sprintf("msg_%d", i), llm.Text(fmt.Sprintf("f%d parses the header and returns its fields; it is covered by TestF%d in pkg/mod%d_test.go.", i, i, i%50)))
	}
	s.close()
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	want := messagesOf(b, path)
	for b.Loop() {
		tr, err := Load(path)
		if err != nil || len(tr.Messages) < want {
			b.Fatal(err, len(tr.Messages))
		}
	}
}

// messagesOf is the number of messages the transcript at path resumes
// with, which the benchmarks check each load against (what a resume
// needs; the chain's entries are made only when asked for).
func messagesOf(b *testing.B, path string) int {
	tr, err := Load(path)
	if err != nil || len(tr.Chain()) < 10000 {
		b.Fatal(err)
	}
	return len(tr.Messages)
}
