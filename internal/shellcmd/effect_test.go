package shellcmd

import (
	"fmt"
	"strings"
	"testing"
)

func TestEffect(t *testing.T) {
	type files struct {
		readOnly, fileOp                         bool
		reads, meta, writes, deletes, walks, may []string
	}
	words := func(ws []Word) []string {
		var out []string
		for _, w := range ws {
			out = append(out, strings.ReplaceAll(w.Text, RunTime, "$"))
		}
		return out
	}
	tests := []struct {
		src  string
		want files
	}{
		{"cat a b", files{readOnly: true, reads: []string{"a", "b"}}},
		{"ls -la src", files{readOnly: true, meta: []string{"src"}}},
		{"grep -rn TODO src", files{readOnly: true, reads: []string{"src"}, walks: []string{"src"}}},
		{"sort -o out in", files{reads: []string{"in"}, writes: []string{"out"}}},
		{`\time -o t.log cat a`, files{readOnly: true, reads: []string{"a"}, writes: []string{"t.log"}}},
		{"cp -r src dst", files{fileOp: true, reads: []string{"src"}, writes: []string{"dst", "dst/src"}, walks: []string{"src"}}},
		{"rm -rf build", files{fileOp: true, writes: []string{"build"}, deletes: []string{"build"}}},
		{"sed -i s/a/b/ f", files{fileOp: true, reads: []string{"f"}, writes: []string{"f"}}},
		{"sed 's/a/b/w out' f", files{reads: []string{"f"}}},
		{"git show HEAD:.env", files{readOnly: true, may: []string{"HEAD:.env", ".env"}}},
		{"git push", files{}},
		{"less .env", files{may: []string{".env"}}},
		{"declare x=1", files{}},
		{"> out", files{readOnly: true}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e := Parse(tt.src).Commands[0].Effect()
			var walks []Word
			for _, w := range e.Walks {
				walks = append(walks, w.Root)
			}
			got := files{e.ReadOnly, e.FileOp, words(e.Reads), words(e.MetaReads), words(e.Writes), words(e.Deletes), words(walks), words(e.Maybe)}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("effect %+v, want %+v", got, tt.want)
			}
			if got.readOnly == (e.Why != "") {
				t.Errorf("read-only %v, why %q", got.readOnly, e.Why)
			}
		})
	}
}
