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
	ctx, cancel := context.WithCancel(context.Background())
	go stopOnSignal(cancel)
	code := cli.Main(ctx, os.Args[1:], cli.IO{
		In:              os.Stdin,
		Out:             os.Stdout,
		Err:             os.Stderr,
		Getenv:          os.Getenv,
		StdinIsTerminal: term.IsTerminal(int(os.Stdin.Fd())),
	})
	cancel()
	os.Exit(code)
}

// stopOnSignal cancels the run at the first Ctrl-C or SIGTERM, which stops
// it cleanly (the running tool's process group is killed, the transcript
// records the interruption); once it is caught, a second one kills tack
// the default way.
//
// Registering for signals makes the runtime start a thread and wait for it
// (0.2 to 0.4 ms on a small VM), so main does it beside the start-up rather
// than before it. A signal in the moment before, the default way too, finds
// nothing half written: files are replaced whole, and a torn last line of a
// transcript is skipped when it is read.
func stopOnSignal(cancel context.CancelFunc) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	signal.Stop(sigs)
	cancel()
}
