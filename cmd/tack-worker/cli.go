package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/tackcode/tack/cmd/tack-worker/flow"
	"github.com/tackcode/tack/cmd/tack-worker/runner"
	"github.com/tackcode/tack/cmd/tack-worker/store"
	"github.com/tackcode/tack/cmd/tack-worker/task"
)

const usage = `usage:
  tack-worker worker [flags]              run tasks from the task queue
  tack-worker fleet submit [flags] FILE   start a fleet (JSON or YAML file)
  tack-worker fleet status [flags] [NAME] progress of a fleet (all fleets without NAME)
  tack-worker fleet results [flags] NAME  the tasks' results (--json for JSON)
  tack-worker fleet cancel [flags] NAME   cancel a fleet's running and queued tasks
Run a command with -h for its flags.`

// errUsage is the error of a command line tack-worker cannot run: its text
// is the usage.
var errUsage = usageError{}

type usageError struct{}

func (usageError) Error() string { return usage }

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch args[0] {
	case "worker":
		return runWorker(ctx, args[1:], out)
	case "fleet":
		if len(args) < 2 {
			return errUsage
		}
		switch args[1] {
		case "submit":
			return fleetSubmit(ctx, args[2:], out)
		case "status":
			return fleetStatus(ctx, args[2:], out)
		case "results":
			return fleetResults(ctx, args[2:], out)
		case "cancel":
			return fleetCancel(ctx, args[2:], out)
		}
	case "-h", "--help", "help":
		fmt.Fprintln(out, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", strings.Join(args, " "), usage)
}

// conn holds the flags that say which Temporal service to use.
type conn struct {
	address, namespace, taskQueue string
	tlsCert, tlsKey, tlsCA        string
	tlsServerName, apiKey         string
	tls                           bool
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (c *conn) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.address, "address", envOr("TEMPORAL_ADDRESS", "127.0.0.1:7233"), "Temporal frontend host:port ($TEMPORAL_ADDRESS)")
	fs.StringVar(&c.namespace, "namespace", envOr("TEMPORAL_NAMESPACE", "default"), "Temporal namespace ($TEMPORAL_NAMESPACE)")
	fs.StringVar(&c.taskQueue, "task-queue", envOr("TACK_TASK_QUEUE", flow.TaskQueue), "task queue ($TACK_TASK_QUEUE)")
	fs.BoolVar(&c.tls, "tls", os.Getenv("TEMPORAL_TLS") == "true", "connect with TLS ($TEMPORAL_TLS=true); implied by the other TLS flags")
	fs.StringVar(&c.tlsCert, "tls-cert-path", os.Getenv("TEMPORAL_TLS_CERT"), "client certificate for mTLS ($TEMPORAL_TLS_CERT)")
	fs.StringVar(&c.tlsKey, "tls-key-path", os.Getenv("TEMPORAL_TLS_KEY"), "client key for mTLS ($TEMPORAL_TLS_KEY)")
	fs.StringVar(&c.tlsCA, "tls-ca-path", os.Getenv("TEMPORAL_TLS_CA"), "CA certificates of the server ($TEMPORAL_TLS_CA)")
	fs.StringVar(&c.tlsServerName, "tls-server-name", os.Getenv("TEMPORAL_TLS_SERVER_NAME"), "server name the certificate must have")
	fs.StringVar(&c.apiKey, "api-key", os.Getenv("TEMPORAL_API_KEY"), "API key, for Temporal Cloud ($TEMPORAL_API_KEY; implies TLS)")
}

func (c *conn) dial(logger *slog.Logger) (client.Client, error) {
	opts := client.Options{HostPort: c.address, Namespace: c.namespace, Logger: logAdapter(logger)}
	if c.tls || c.tlsCert != "" || c.tlsCA != "" || c.apiKey != "" {
		cfg := &tls.Config{ServerName: c.tlsServerName, MinVersion: tls.VersionTLS12}
		if c.tlsCert != "" || c.tlsKey != "" {
			cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("--tls-cert-path/--tls-key-path: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		if c.tlsCA != "" {
			pem, err := os.ReadFile(c.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("--tls-ca-path: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca-path %s: no PEM certificate in it", c.tlsCA)
			}
			cfg.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = cfg
	}
	if c.apiKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(c.apiKey)
	}
	cl, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w", c.address, c.namespace, err)
	}
	return cl, nil
}

func runWorker(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	storeDir := fs.String("store", os.Getenv("TACK_WORKER_STORE"), "store directory every worker reaches ($TACK_WORKER_STORE)")
	workDir := fs.String("work-dir", "", "this worker's workspaces (default: a folder under the system's temporary one)")
	concurrency := fs.Int("concurrency", 4, "tasks this worker runs at once")
	id := fs.String("id", "", "this worker's name (default host-pid)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, err := store.Open(*storeDir)
	if err != nil {
		return err
	}
	if *id == "" {
		host, _ := os.Hostname()
		*id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if *workDir == "" {
		*workDir = filepath.Join(os.TempDir(), "tack-worker", *id)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cl, err := c.dial(logger)
	if err != nil {
		return err
	}
	defer cl.Close()
	w := worker.New(cl, c.taskQueue, worker.Options{MaxConcurrentActivityExecutionSize: *concurrency})
	w.RegisterWorkflow(flow.TaskWorkflow)
	w.RegisterWorkflow(flow.FleetWorkflow)
	w.RegisterActivity(&runner.Runner{Store: st, WorkRoot: *workDir, WorkerID: *id, Logger: logger})
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	fmt.Fprintf(out, "tack-worker %s: polling task queue %q on %s (namespace %s), %d at a time\n", *id, c.taskQueue, c.address, c.namespace, *concurrency)
	<-ctx.Done()
	w.Stop()
	return nil
}

// fleetID is the workflow id of fleet name.
func fleetID(name string) string { return "fleet-" + name }

func fleetSubmit(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fleet submit", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	heartbeat := fs.Duration("heartbeat-timeout", 0, "a worker silent this long is taken for dead (default 20s)")
	attempts := fs.Int("attempts", 0, "attempts per task (default 5)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("fleet submit: give one fleet file")
	}
	f, err := task.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	cl, err := c.dial(nil)
	if err != nil {
		return err
	}
	defer cl.Close()
	in := flow.FleetInput{Name: f.Name, Tasks: f.Tasks, BudgetUSD: f.BudgetUSD, MaxParallel: f.MaxParallel,
		Timeouts: flow.Timeouts{Heartbeat: *heartbeat, Attempts: int32(*attempts)}}
	run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fleetID(f.Name), TaskQueue: c.taskQueue,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Without it a fleet still running would be answered with its
		// run, as if this file had been submitted.
		WorkflowExecutionErrorWhenAlreadyStarted: true}, flow.FleetWorkflow, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return fmt.Errorf("submit fleet %s: a fleet of that name is running (tack-worker fleet status %s; cancel it or rename this one)", f.Name, f.Name)
	}
	if err != nil {
		return fmt.Errorf("submit fleet %s: %w", f.Name, err)
	}
	fmt.Fprintf(out, "fleet %s: %d tasks submitted (workflow %s, run %s)\n", f.Name, len(f.Tasks), run.GetID(), run.GetRunID())
	return nil
}

// status gets a fleet's status: its result once it is over, else its answer
// to the status query.
func status(ctx context.Context, cl client.Client, name string) (*flow.FleetStatus, error) {
	d, err := cl.DescribeWorkflow(ctx, fleetID(name), "")
	if err != nil {
		return nil, fmt.Errorf("fleet %s: %w", name, err)
	}
	var st flow.FleetStatus
	if d.RawResponse.GetWorkflowExecutionInfo().GetStatus() == enums.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		if err := cl.GetWorkflow(ctx, fleetID(name), "").Get(ctx, &st); err != nil {
			return nil, fmt.Errorf("fleet %s: %w", name, err)
		}
		return &st, nil
	}
	v, err := cl.QueryWorkflow(ctx, fleetID(name), "", flow.QueryStatus)
	if err != nil {
		return nil, fmt.Errorf("fleet %s: status: %w", name, err)
	}
	if err := v.Get(&st); err != nil {
		return nil, fmt.Errorf("fleet %s: status: %w", name, err)
	}
	return &st, nil
}

func fleetStatus(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fleet status", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	asJSON := fs.Bool("json", false, "print the status as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, err := c.dial(nil)
	if err != nil {
		return err
	}
	defer cl.Close()
	names := fs.Args()
	if len(names) == 0 {
		if names, err = listFleets(ctx, cl); err != nil {
			return err
		}
	}
	var all []*flow.FleetStatus
	for _, n := range names {
		st, err := status(ctx, cl, n)
		if err != nil {
			return err
		}
		all = append(all, st)
	}
	if *asJSON {
		return json.NewEncoder(out).Encode(all)
	}
	for _, st := range all {
		fmt.Fprintln(out, progressLine(st))
	}
	return nil
}

func listFleets(ctx context.Context, cl client.Client) ([]string, error) {
	var names []string
	var token []byte
	for {
		resp, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "WorkflowType = 'FleetWorkflow'", NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("list fleets: %w", err)
		}
		for _, e := range resp.Executions {
			names = append(names, strings.TrimPrefix(e.Execution.WorkflowId, "fleet-"))
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	sort.Strings(names)
	return slicesCompact(names), nil
}

func slicesCompact(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// progressLine is a fleet's progress bar and counts.
func progressLine(st *flow.FleetStatus) string {
	n := st.Counts()
	total := len(st.Tasks)
	ended := n[flow.StatusDone] + n[flow.StatusFailed] + n[flow.StatusCancelled] + n[flow.StatusSkipped]
	const width = 20
	filled := 0
	if total > 0 {
		filled = ended * width / total
	}
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	line := fmt.Sprintf("%-16s [%s] %d/%d  queued %d  running %d  done %d  failed %d", st.Name, bar, ended, total,
		n[flow.StatusQueued], n[flow.StatusRunning], n[flow.StatusDone], n[flow.StatusFailed])
	if k := n[flow.StatusCancelled]; k > 0 {
		line += fmt.Sprintf("  cancelled %d", k)
	}
	if k := n[flow.StatusSkipped]; k > 0 {
		line += fmt.Sprintf("  skipped %d", k)
	}
	line += fmt.Sprintf("  cost $%.4f", st.SpentUSD)
	if st.BudgetUSD > 0 {
		line += fmt.Sprintf(" of $%.2f", st.BudgetUSD)
	}
	return line
}

func fleetResults(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fleet results", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	asJSON := fs.Bool("json", false, "print the results as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("fleet results: give the fleet's name")
	}
	cl, err := c.dial(nil)
	if err != nil {
		return err
	}
	defer cl.Close()
	st, err := status(ctx, cl, fs.Arg(0))
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tCOST\tTURNS\tBRANCH\tRESULT")
	for _, t := range st.Tasks {
		turns, branch, text := "", "", t.Error
		if r := t.Result; r != nil {
			turns, branch, text = fmt.Sprint(r.NumTurns), r.Branch, r.Text
			if r.Patch != "" {
				branch = r.Patch
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t$%.4f\t%s\t%s\t%s\n", t.ID, t.Status, t.CostUSD, turns, branch, oneLine(text, 60))
	}
	fmt.Fprintf(tw, "total\t\t$%.4f\t\t\t\n", st.SpentUSD)
	return tw.Flush()
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func fleetCancel(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("fleet cancel", flag.ContinueOnError)
	var c conn
	c.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("fleet cancel: give the fleet's name")
	}
	cl, err := c.dial(nil)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.CancelWorkflow(ctx, fleetID(fs.Arg(0)), ""); err != nil {
		return fmt.Errorf("cancel fleet %s: %w", fs.Arg(0), err)
	}
	fmt.Fprintf(out, "fleet %s: cancel requested\n", fs.Arg(0))
	return nil
}
