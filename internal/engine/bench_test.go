package engine

import (
	"context"
	"testing"

	"github.com/tackcode/tack/internal/llm"
	"github.com/tackcode/tack/internal/llm/llmtest"
)

// BenchmarkRoundTrip measures one model round trip with a trivial tool
// call against the fake API, client and server in one process.
func BenchmarkRoundTrip(b *testing.B) {
	const calls = 20
	turns := make([]llmtest.Turn, 0, calls+1)
	for i := range calls {
		turns = append(turns, llmtest.Reply(llmtest.ToolUse("Echo", map[string]int{"n": i})))
	}
	turns = append(turns, llmtest.Reply(llmtest.Text("done")))
	srv, err := llmtest.NewServer(llmtest.Options{Turns: turns, Loop: true, DiscardRequests: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i += calls {
		b.StopTimer()
		h := newBenchSession(b, srv)
		b.StartTimer()
		if res := h.Run(context.Background(), []llm.Block{llm.Text("go")}, nil); res.IsError {
			b.Fatal(res.Errors)
		}
	}
}
