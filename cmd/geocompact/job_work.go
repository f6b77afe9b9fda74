package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/job"
)

type jobWorkOptions struct {
	g   *globalOptions
	job jobRef
}

func newJobWorkCmd(g *globalOptions) *cobra.Command {
	o := &jobWorkOptions{g: g}
	cmd := &cobra.Command{
		Use:   "work --job FILE_OR_ID",
		Short: "Run units of work read on stdin and print their results",
		Long: `Work runs the units of a job that it reads on stdin (JSON lines, as job plan
prints them) one after the other, and prints one result line (JSON) for
each: the digests of the rows read and written, the files written, the
start and end times and the process id. Every attempt writes files under
fresh names; files of an attempt whose result never reaches job commit are
deleted by it. Work exits at the first unit that fails, and as soon as the
process that started it dies, so that a worker an engine gave up on does
not go on writing.`,
		Example: `  $ tail -n +2 plan.jsonl | geocompact job work --job job.json > results.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runJobWork(cmd.Context(), o)
		},
	}
	o.job.register(cmd)
	return cmd
}

func runJobWork(ctx context.Context, o *jobWorkOptions) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if watchParent {
		go exitWithParent(ctx, stop)
	}
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	j, err := o.job.load(ctx, cat)
	if err != nil {
		return err
	}
	j.Request.Logger = o.g.Logger()
	var opened bool
	enc := json.NewEncoder(o.g.IO.Out)
	return jsonLines(o.g.IO.In, func(line []byte) error {
		var u job.Unit
		if err := json.Unmarshal(line, &u); err != nil {
			return usageErrorf("read unit: %v: %.80q", err, line)
		}
		if err := j.CheckUnit(&u); err != nil {
			return &usageError{err}
		}
		if !opened {
			if err := j.Open(ctx, cat); err != nil {
				return err
			}
			// The table's own target file size is left out of the
			// room: the request's options and the budget dominate.
			cli.LimitMemory(j.Request, nil)
			opened = true
		}
		res, err := workUnit(ctx, j, u)
		if err != nil {
			return err
		}
		if err := pauseAfterWrite(ctx); err != nil {
			return err
		}
		if err := enc.Encode(res); err != nil {
			return fmt.Errorf("write result of group %d: %w", u.Group+1, err)
		}
		return nil
	})
}

// workUnit runs unit u of j and describes what it wrote.
func workUnit(ctx context.Context, j *job.Rewrite, u job.Unit) (*jobUnitResult, error) {
	host, _ := os.Hostname()
	res := &jobUnitResult{PID: os.Getpid(), Host: host, Start: time.Now().UTC()}
	r, err := j.Run(ctx, u)
	if err != nil {
		return nil, err
	}
	res.Result = *r
	res.End, res.PeakRSS = time.Now().UTC(), peakRSS()
	return res, nil
}

// pauseAfterWriteEnv names a file that makes work stop after the first
// unit that creates it has written its files, before its result, until it
// is killed: the moment a real cluster test kills a worker.
const pauseAfterWriteEnv = "GEOCOMPACT_TEST_JOB_PAUSE_FILE"

// pauseAfterWrite waits, when pauseAfterWriteEnv names a file this
// process is the first to create (it writes its pid there), until ctx
// ends.
func pauseAfterWrite(ctx context.Context) error {
	p := os.Getenv(pauseAfterWriteEnv)
	if p == "" {
		return nil
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil // another attempt paused already
	}
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()))
	f.Close()
	<-ctx.Done()
	return ctx.Err()
}

// watchParent is false in tests that run work in their own process.
var watchParent = true

// exitWithParent stops the work (stop) and exits when the process that
// started this one dies: an engine that lost a task's executor must not
// find its child still writing. On Linux the kernel kills this process
// (setParentDeathSignal); elsewhere, and as a second line, the parent's
// pid is polled.
func exitWithParent(ctx context.Context, stop func()) {
	parent := os.Getppid()
	setParentDeathSignal()
	if os.Getppid() != parent { // died before the signal was set
		stop()
		os.Exit(exitError)
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if os.Getppid() != parent {
				stop()
				fmt.Fprintln(os.Stderr, "geocompact: job work: the process that started it died; stopping")
				os.Exit(exitError)
			}
		}
	}
}
