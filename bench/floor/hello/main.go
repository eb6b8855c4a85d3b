// Command hello is the floor of `tack --version`: a static Go program that
// writes one line and exits. The harness builds it with CGO_ENABLED=0 and
// prints tack's figures as a ratio to its own.
package main

import "os"

func main() {
	_, _ = os.Stdout.WriteString("hello\n")
}
