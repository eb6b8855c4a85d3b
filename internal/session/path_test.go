package session

import (
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	cases := map[string]string{
		"/home/me/my_app": "-home-me-my-app",
		"/tmp/café":       "-tmp-caf-",
		"/x/🎉":            "-x---",
		"/A/b9/C.d":       "-A-b9-C-d",
	}
	for in, want := range cases {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSlugLongPathIsCutAndHashed(t *testing.T) {
	p := "/" + strings.Repeat("a", 250)
	got := Slug(p)
	if !strings.HasPrefix(got, "-"+strings.Repeat("a", 199)+"-") {
		t.Fatalf("prefix wrong: %q", got)
	}
	// The hash is the Java-style string hash of the path's UTF-16 units,
	// absolute value, base 36 — recomputed here independently.
	var h int32
	for _, c := range p {
		h = 31*h + int32(c)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	want := "-" + strings.Repeat("a", 199) + "-" + itoa36(abs)
	if got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func itoa36(n int64) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{digits[n%36]}, b...)
		n /= 36
	}
	return string(b)
}
