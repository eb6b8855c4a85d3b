// Command tack is an agentic coding CLI: see the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/tackcode/tack/internal/cli"
	"github.com/tackcode/tack/internal/startheap"
)

// startHeap and startWindow bound tack's start-up heap: no collection
// runs before the heap reaches startHeap or startWindow has passed. That is
// more than resuming a session of 10 000 messages takes, so loading it runs
// no collection (bench/harness: 47 ms to the first request with the
// runtime's default pacing, 35 ms with this), while a -p run stays far under
// it, and a session that goes on is paced as usual once the window is over.
const (
	startHeap   = 64 << 20
	startWindow = time.Second
)

func main() {
	startheap.Set(startHeap, startWindow, os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// The first Ctrl-C stops the run cleanly (the running tool's process
	// group is killed, the transcript records the interruption); once it is
	// caught, a second one kills tack the default way.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := cli.Main(ctx, os.Args[1:], cli.IO{
		In:              os.Stdin,
		Out:             os.Stdout,
		Err:             os.Stderr,
		Getenv:          os.Getenv,
		StdinIsTerminal: term.IsTerminal(int(os.Stdin.Fd())),
	})
	stop()
	os.Exit(code)
}
