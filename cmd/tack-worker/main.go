// Command tack-worker runs tack's agent as durable Temporal workflows: the
// worker (`tack-worker worker`) and the fleet commands that submit,
// follow, list and cancel fleets of tasks (`tack-worker fleet …`). It is a
// module of its own so that tack's binary never links the Temporal SDK;
// it drives tack's engine only through the public agent package.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tack-worker:", err)
		os.Exit(1)
	}
}
