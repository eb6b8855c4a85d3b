package bash

import (
	"testing"
	"unicode/utf8"
)

func TestDescriptions(t *testing.T) {
	total := 0
	for _, tl := range Tools() {
		d := tl.Description()
		n := utf8.RuneCountInString(d)
		if n == 0 || n > 1500 {
			t.Errorf("%s description is %d characters", tl.Name(), n)
		}
		total += len(d) + len(tl.InputSchema())
	}
	// The three together must leave room in a first request under 25 KB.
	if total > 5000 {
		t.Errorf("the tools take %d bytes of the request", total)
	}
}

func TestReadOnly(t *testing.T) {
	want := map[string]bool{"Bash": false}
	for _, tl := range Tools() {
		if tl.ReadOnly(nil) != want[tl.Name()] {
			t.Errorf("%s ReadOnly = %v", tl.Name(), !want[tl.Name()])
		}
	}
}
