package shell

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHeadTailKeepsAllWhenShort(t *testing.T) {
	w := newHeadTail(10)
	fmt.Fprint(w, "0123456789")
	if text, cut := w.Result(); text != "0123456789" || cut != 0 {
		t.Fatalf("got %q cut %d", text, cut)
	}
}

func TestHeadTailCutsMiddle(t *testing.T) {
	in := strings.Repeat("a", 5) + strings.Repeat("m", 1000) + strings.Repeat("z", 5)
	// The same text written at once, in small pieces and in pieces around
	// the tail size must give the same result.
	for _, size := range []int{len(in), 1, 3, 5, 7, 64} {
		w := newHeadTail(10)
		for s := in; s != ""; {
			k := min(size, len(s))
			w.Write([]byte(s[:k]))
			s = s[k:]
		}
		text, cut := w.Result()
		want := "aaaaa\n\n... [1000 characters truncated] ...\n\nzzzzz"
		if text != want || cut != 1000 {
			t.Errorf("pieces of %d: got %q cut %d", size, text, cut)
		}
	}
}

func TestHeadTailCountsCharactersAndKeepsUTF8Whole(t *testing.T) {
	// 'é' is 2 bytes, '世' 3: a 5-byte head and tail split characters.
	in := strings.Repeat("é", 10) + strings.Repeat("世", 10)
	for _, size := range []int{1, 2, len(in)} {
		w := newHeadTail(10)
		for s := in; s != ""; {
			k := min(size, len(s))
			w.Write([]byte(s[:k]))
			s = s[k:]
		}
		text, cut := w.Result()
		if !utf8.ValidString(text) {
			t.Fatalf("pieces of %d: invalid UTF-8 %q", size, text)
		}
		head, tail, ok := strings.Cut(text, fmt.Sprintf("\n\n... [%d characters truncated] ...\n\n", cut))
		if !ok {
			t.Fatalf("pieces of %d: no marker in %q", size, text)
		}
		kept := utf8.RuneCountInString(head) + utf8.RuneCountInString(tail)
		if kept+int(cut) != 20 {
			t.Errorf("pieces of %d: kept %d (%q, %q) + cut %d != 20 characters", size, kept, head, tail, cut)
		}
		if !strings.HasPrefix(in, head) || !strings.HasSuffix(in, tail) {
			t.Errorf("pieces of %d: %q / %q are not the ends of the input", size, head, tail)
		}
	}
}
