package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/job"
)

func init() { register(newJobCmd) }

// newJobCmd groups the commands that run a rewrite as units of work on a
// distributed engine (Spark, for one): the engine's driver plans and
// commits, its workers run the units, and nothing but JSON lines passes
// between them.
func newJobCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Run a rewrite as units of work on a distributed engine",
		Long: `The job commands split a rewrite into units of work that other processes run,
so that a distributed engine (Apache Spark, for one) spreads the rewrite of a
table over its workers:

  plan    plans the rewrite at the table's current snapshot, records the job
          beside the table's metadata and prints the job (first line) and its
          first units (one JSON line each)
  work    runs the units it reads on stdin and prints one result line each
  next    prints the units still to run, from the results so far (none:
          every unit has run, commit)
  commit  verifies the results and replaces the planned files in one
          snapshot, then deletes every file of the job that no metadata
          references (those of failed or repeated attempts)
  abort   deletes the job's files and its record

A group one worker sorts within its memory budget, and with --shuffle=never
every group, is one unit: a worker rewrites it whole (spilling to its local
disk past the budget). A sorted group over the budget is spread over the
workers in three stages through shuffle files beside the table's metadata:
scatter (a unit per input file), bucket (a unit per key range that fits the
budget) and span (a unit per output file crossing a bucket's edge); next
gives each stage's units once the stage before has its results.

Workers need read access to the catalog and read/write access to the table's
storage; only commit changes the table. A unit may run more than once (an
engine retries it): every attempt writes files under fresh names, and commit
keeps one result per unit.`,
		Example: `  $ geocompact job plan --table gis.pings --curve hilbert > plan.jsonl
  $ head -1 plan.jsonl > job.json
  $ tail -n +2 plan.jsonl | geocompact job work --job job.json > results.jsonl
  $ geocompact job next --job job.json results.jsonl > more.jsonl   # empty: done
  $ geocompact job commit --job job.json results.jsonl`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newJobPlanCmd(g), newJobWorkCmd(g), newJobNextCmd(g), newJobCommitCmd(g), newJobAbortCmd(g))
	return cmd
}

// jobUnitResult is what work prints for a unit it ran (job.Result), and
// where and when it ran, so that the engine's spread can be checked.
type jobUnitResult struct {
	job.Result
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	// PeakRSS is the work process's peak resident set so far, in bytes
	// (Linux; 0 elsewhere): the memory a worker must leave it.
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
}

// jobIDPattern is what job.Prepare makes an id of.
var jobIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// jobRef names a job by --job: a file whose first line is the job (what
// plan printed first), or the job's id with --table, read from the
// job's record beside the table's metadata.
type jobRef struct {
	ref, table string
}

func (r *jobRef) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&r.ref, "job", "", "the job: a file whose first line is what job plan printed first, or the job's id (with --table)")
	cmd.Flags().StringVar(&r.table, "table", "", "table of the job, NAMESPACE.TABLE (with a job id)")
	_ = cmd.MarkFlagRequired("job")
}

// isID reports whether --job names a job by its id (no file is so
// called), which load reads from the job's record in the table.
func (r *jobRef) isID() bool {
	if !jobIDPattern.MatchString(r.ref) {
		return false
	}
	_, err := os.Stat(r.ref)
	return errors.Is(err, fs.ErrNotExist)
}

// load returns the job --job names; cat is needed for a job id only.
func (r *jobRef) load(ctx context.Context, cat catalog.Catalog) (*job.Rewrite, error) {
	if r.isID() {
		if r.table == "" {
			return nil, usageErrorf("--job %s is a job id: give its table with --table", r.ref)
		}
		return job.Load(ctx, cat, r.table, r.ref)
	}
	f, err := os.Open(r.ref)
	if err != nil {
		return nil, usageErrorf("--job: %v", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read job %s: %w", r.ref, err)
	}
	var j job.Rewrite
	if err := json.Unmarshal(line, &j); err != nil || !jobIDPattern.MatchString(j.ID) || j.Table == "" {
		return nil, usageErrorf("--job %s: the first line is not a job as job plan prints it", r.ref)
	}
	if r.table != "" && r.table != j.Table {
		return nil, usageErrorf("--job %s is a job on %s, not on --table %s", r.ref, j.Table, r.table)
	}
	return &j, nil
}

// jsonLines calls f with each non-blank line of r.
func jsonLines(r io.Reader, f func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		if err := f(line); err != nil {
			return err
		}
	}
	return sc.Err()
}
