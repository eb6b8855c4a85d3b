// Command fakeapi serves a scripted fake Anthropic Messages API for
// benchmarks and manual runs:
//
//	go run ./bench/fakeapi -script FILE [-addr 127.0.0.1:0] [-loop]
//
// When ready it prints exactly one line, the base URL to use as
// ANTHROPIC_BASE_URL (http://127.0.0.1:PORT), and nothing else on stdout.
// Requests that break the API's rules are answered with an error and logged
// to stderr. It exits on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/tackcode/tack/internal/llm/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run serves until ctx ends and returns the exit code: 0 after a signal,
// 2 for bad arguments or a script that cannot be served.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "script file: a JSON array of turns (required)")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	loop := fs.Bool("loop", false, "restart the script when it is exhausted")
	byConv := fs.Bool("by-conversation", false, "serve each request the turn numbered by its count of assistant messages, so independent runs each start the script over")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *script == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: fakeapi -script FILE [-addr 127.0.0.1:0] [-loop] [-by-conversation]")
		return 2
	}
	turns, err := llmtest.LoadScript(*script)
	if err != nil {
		fmt.Fprintf(stderr, "fakeapi: %v\n", err)
		return 2
	}
	var violations atomic.Int64
	srv, err := llmtest.NewServer(llmtest.Options{
		Turns: turns,
		Addr:  *addr,
		Loop:  *loop,

		ByConversation: *byConv,
		OnViolation: func(err error) {
			violations.Add(1)
			fmt.Fprintf(stderr, "fakeapi: %v\n", err)
		},
		// A benchmark may send thousands of requests; nobody reads them back.
		DiscardRequests: true,
	})
	if err != nil {
		fmt.Fprintf(stderr, "fakeapi: %v\n", err)
		return 2
	}
	fmt.Fprintln(stdout, srv.URL())
	<-ctx.Done()
	srv.Close()
	if n := violations.Load(); n > 0 {
		fmt.Fprintf(stderr, "fakeapi: %d violations\n", n)
	}
	return 0
}
