// Command tack is an agentic coding CLI: see the README.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/tackcode/tack/internal/cli"
)

func main() {
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
