package session

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

// corpus returns valid transcripts covering the record kinds tack reads.
func corpus(t testing.TB) [][]byte {
	dir := t.TempDir()
	_, path := standard(t, dir)
	std, _ := os.ReadFile(path)

	path2 := filepath.Join(dir, sid2+".jsonl")
	s := newScript(t, path2, sid2)
	s.user(llm.Text("first"))
	s.assistant("msg_1", llm.Block{Type: llm.TypeThinking, Thinking: "t", Signature: "s"}, toolUse("t1", "Read", `{}`), toolUse("t2", "Grep", `{}`))
	s.user(llm.ToolResult("t2", "two", false), llm.ToolResult("t1", "one", true))
	s.assistant("msg_2", llm.Text("ok"), toolUse("t3", "Bash", `{"command":"x"}`))
	if err := s.w.WriteCompactBoundary("summary", CompactMetadata{Trigger: "auto"}); err != nil {
		t.Fatal(err)
	}
	s.user(llm.Text("after"))
	s.assistant("msg_3", toolUse("t4", "Bash", `{}`))
	s.close()
	cmp, _ := os.ReadFile(path2)
	return [][]byte{std, cmp, []byte(parallelFile), []byte(forkedFile(t))}
}

func forkedFile(t testing.TB) string {
	dir := t.TempDir()
	path := filepath.Join(dir, sid1+".jsonl")
	s := newScript(t, path, sid1)
	s.user(llm.Text("start"))
	a1 := s.assistant("msg_1", toolUse("x1", "Read", `{}`))
	s.user(llm.ToolResult("x1", "r", false))
	s.close()
	s.w = NewWriter(path, s.w.meta, a1)
	s.w.now = clock()
	s.user(llm.Text("other branch"))
	s.close()
	data, _ := os.ReadFile(path)
	return string(data)
}

// loadBytes loads a transcript held in memory; it must never fail, and must
// give a valid conversation.
func loadBytes(t *testing.T, data []byte) *Transcript {
	t.Helper()
	tr, err := loadFrom(bytes.NewReader(data), sid1+".jsonl", false)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := validConversation(tr.Messages); err != nil {
		t.Fatalf("%v\ninput:\n%s\nmessages: %s", err, data, jsonOf(t, tr.Messages))
	}
	if tr.Leaf != "" {
		if _, err := tr.At(tr.Leaf); err != nil {
			t.Fatalf("At(leaf): %v", err)
		}
	}
	for _, e := range tr.Chain() {
		at, err := tr.At(e.UUID)
		if err != nil {
			t.Fatalf("At(%s): %v", e.UUID, err)
		}
		if err := validConversation(at.Messages); err != nil {
			t.Fatalf("At(%s): %v", e.UUID, err)
		}
	}
	return tr
}

func FuzzLoad(f *testing.F) {
	for _, c := range corpus(f) {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) { loadBytes(t, data) })
}

// TestLoadSurvivesCorruption cuts every valid transcript at every byte and
// applies random damage (flipped bytes, lost, repeated and swapped lines,
// junk), and loads each result.
func TestLoadSurvivesCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, c := range corpus(t) {
		for cut := 0; cut <= len(c); cut += 1 + cut%7 {
			loadBytes(t, c[:cut])
			n++
		}
		lines := strings.SplitAfter(string(c), "\n")
		for i := 0; i < 300; i++ {
			mutated := append([]string(nil), lines...)
			for k := 0; k < 1+rng.IntN(3); k++ {
				j := rng.IntN(len(mutated))
				switch rng.IntN(6) {
				case 0: // flip a byte
					if l := mutated[j]; len(l) > 0 {
						b := []byte(l)
						b[rng.IntN(len(b))] = byte(rng.IntN(256))
						mutated[j] = string(b)
					}
				case 1: // lose a line
					mutated = append(mutated[:j], mutated[j+1:]...)
				case 2: // repeat a line
					mutated = append(mutated[:j+1], mutated[j:]...)
				case 3: // swap two lines
					k := rng.IntN(len(mutated))
					mutated[j], mutated[k] = mutated[k], mutated[j]
				case 4: // junk
					mutated = append(mutated[:j], append([]string{fmt.Sprintf("junk %d\n", i)}, mutated[j:]...)...)
				case 5: // tear a line
					if l := mutated[j]; len(l) > 1 {
						mutated[j] = l[:rng.IntN(len(l))]
					}
				}
				if len(mutated) == 0 {
					break
				}
			}
			loadBytes(t, []byte(strings.Join(mutated, "")))
			n++
		}
	}
	t.Logf("%d corrupted transcripts loaded", n)
}
