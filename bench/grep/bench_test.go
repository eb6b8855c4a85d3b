package main

import (
	"context"
	"os/exec"
	"testing"
)

// BenchmarkGrep runs each search with tack's Grep and, when installed,
// with ripgrep, over $(go env GOROOT)/src.
func BenchmarkGrep(b *testing.B) {
	root, err := goSrc()
	if err != nil {
		b.Skip(err)
	}
	_, rgErr := exec.LookPath("rg")
	g := grepTool()
	for _, c := range cases {
		b.Run("tack/"+c.String(), func(b *testing.B) {
			for b.Loop() {
				if _, err := runTack(context.Background(), g, root, c); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("rg/"+c.String(), func(b *testing.B) {
			if rgErr != nil {
				b.Skip("rg not installed")
			}
			for b.Loop() {
				if _, _, err := countFound(rgCommand(root, c), c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
