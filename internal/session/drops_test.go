package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tackcode/tack/internal/llm"
)

// CheckDrops passes a range that is the named turn (its prompt, context,
// answers, tool results, an interruption note) and refuses one holding
// anything else, naming the first such entry.
func TestCheckDrops(t *testing.T) {
	path := filepath.Join(t.TempDir(), sid1+".jsonl")
	s := newScript(t, path, sid1)
	p1 := s.user(llm.Text("first"))
	a1 := s.assistant("m1", llm.Text("one"))
	p2 := s.user(llm.Text("second"))
	if err := s.w.RecordMeta("", llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("<system-reminder>context</system-reminder>")}}); err != nil {
		t.Fatal(err)
	}
	s.assistant("m2", toolUse("t1", "Bash", `{"command":"true"}`))
	tr := s.user(llm.ToolResult("t1", "", false))
	s.user(llm.Text("[Request interrupted by user]"))
	a2 := s.assistant("m3", llm.Text("two"))
	p3 := s.user(llm.Text("queued third"))
	s.assistant("m4", llm.Text("three"))
	s.close()
	tr0, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, at, turn string
		refused        string // "" when accepted
	}{
		{"the last turn", a2, p3, ""},
		{"the whole tail as one turn is not: a later prompt", a1, p2, "another prompt"},
		{"a turn that is not the first dropped", a1, p3, "does not start with the declared turn's prompt"},
		{"the kept turn's tool result", tr, p3, "does not start with the declared turn's prompt"},
		{"a point off the chain", "no-such-uuid", p3, "not on the session's current chain"},
		{"nothing dropped", tr0.Leaf, p3, ""},
		{"the kept prompt's own answer", p1, p2, "does not start with the declared turn's prompt"},
	}
	for _, c := range cases {
		err := tr0.CheckDrops(c.at, c.turn)
		var de *DropsError
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refused != "" && (!errors.As(err, &de) || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: got %v, want a refusal saying %q", c.name, err, c.refused)
		case c.refused != "" && !strings.HasPrefix(err.Error(), "Resume rejected by --resume-drops-turn: "):
			t.Errorf("%s: %q lacks the prefix hosts match", c.name, err)
		}
	}
}

// A mirror gets every line a write adds, after the file has it, so that
// the lines it got are the file.
func TestWriterMirrorGetsEveryLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p", sid1+".jsonl")
	s := newScript(t, path, sid1)
	var got []string
	s.w.SetMirror(func(p string, lines [][]byte) {
		if p != path {
			t.Errorf("mirrored path %s", p)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if !strings.Contains(string(data), string(l)+"\n") {
				t.Errorf("mirrored before the file had it: %s", l)
			}
			got = append(got, string(l))
		}
	})
	s.user(llm.Text("hi"))
	s.assistant("m1", llm.Text("a"), llm.Text("b"))
	if err := s.w.SetTitle("named"); err != nil {
		t.Fatal(err)
	}
	if err := s.w.WriteCompactBoundary("summary", CompactMetadata{}); err != nil {
		t.Fatal(err)
	}
	s.close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mirrored\n%q\nfile\n%q", got, want)
	}
}
