package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/job"
	"github.com/geocompact/geocompact/table/catalogs"
)

// Result is engine.Result plus where it ran and what went through the
// shuffle.
type Result struct {
	*engine.Result
	Runner string `json:"runner"`
	// ShuffleBytes are the bytes of rows that went through the
	// GroupByKeys (Arrow IPC).
	ShuffleBytes int64 `json:"shuffle_bytes"`
}

// pipeline builds the rewrite of job as a Beam pipeline over the job's
// units (job.Rewrite.Units, the units `geocompact job plan` prints): a
// whole-group unit is one element, run as `geocompact job work` runs it;
// the scatter units of a shuffled group send its rows, cut into key-range
// buckets, through a GroupByKey to the steps that sort and write the
// buckets and the files spanning them, which do what the job's bucket and
// span units do with rows that the runner carries rather than storage.
func pipeline(j *job.Rewrite, spec catalogs.Spec) (*beam.Pipeline, error) {
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("encode job: %w", err)
	}
	fn := jobFn{Spec: spec, Job: string(b)}
	var scatter, whole []string
	for _, u := range j.Units() {
		line, err := json.Marshal(u)
		if err != nil {
			return nil, fmt.Errorf("encode unit: %w", err)
		}
		if u.Kind == job.KindScatter {
			scatter = append(scatter, string(line))
		} else {
			whole = append(whole, string(line))
		}
	}
	p, s := beam.NewPipelineWithRoot()
	var parts []beam.PCollection
	if len(scatter) > 0 {
		units := beam.Reshuffle(s, beam.CreateList(s, scatter))
		rows, counts, reads := beam.ParDo3(s.Scope("scatter"), &scatterFn{fn}, units)
		// Every bucket reads all counts: one per bucket, not one per
		// (file, bucket), or the buckets decode files × buckets² of them.
		counts = beam.DropKey(s, beam.CombinePerKey(s.Scope("add bucket counts"), addCounts, beam.ParDo(s, keyCount, counts)))
		frags, written := beam.ParDo2(s.Scope("sort and write buckets"), &bucketFn{fn}, beam.GroupByKey(s, rows), beam.SideInput{Input: counts})
		spanned := beam.ParDo(s.Scope("write spanning files"), &spanFn{fn}, beam.GroupByKey(s, frags))
		parts = append(parts, reads, written, spanned)
	}
	if len(whole) > 0 {
		units := beam.Reshuffle(s, beam.CreateList(s, whole))
		parts = append(parts, beam.ParDo(s.Scope("rewrite whole groups"), &groupFn{fn}, units))
	}
	all := beam.Flatten(s, parts...)
	keyed := beam.ParDo(s, keyOne, all)
	beam.ParDo(s.Scope("collect"), &collectFn{fn}, beam.GroupByKey(s, keyed))
	return p, nil
}

// keyOne keys every result alike, so one bundle collects them all.
func keyOne(r string) (int, string) { return 0, r }

// rewrite runs the whole rewrite: plan on the driver, the pipeline on the
// runner, then verify and commit here, or delete what the job wrote.
func rewrite(ctx context.Context, spec catalogs.Spec, table string, cfg engine.Request, runner string) (*Result, error) {
	cat, err := catalogs.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	j, err := job.Prepare(ctx, cat, table, cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Result: j.Result, Runner: runner}
	if len(j.Groups) == 0 {
		return res, nil
	}
	p, err := pipeline(j, spec)
	if err != nil {
		return res, err
	}
	// The marker stays if this process dies before it is done: a later
	// run sweeps what the job left (job.Sweep).
	if err := j.WriteMarker(ctx); err != nil {
		return res, err
	}
	abort := func(err error) (*Result, error) {
		bg := context.WithoutCancel(ctx)
		if _, aerr := j.Abort(bg, cat); aerr != nil {
			return res, errors.Join(err, aerr)
		}
		if merr := j.RemoveMarker(bg); merr != nil {
			err = errors.Join(err, merr)
		}
		return res, err
	}
	if err := beamx.Run(ctx, p); err != nil {
		return abort(fmt.Errorf("run the pipeline on %s: %w", runner, err))
	}
	files, in, out, shuffle, err := readResult(ctx, j)
	if err != nil {
		return abort(err)
	}
	res.ShuffleBytes = shuffle
	if testHookBeforeCommit != nil {
		testHookBeforeCommit()
	}
	if _, err := j.Commit(ctx, cat, files, in, out); err != nil {
		return abort(err)
	}
	// Retried steps may have left files of failed attempts, and drivers
	// that died may have left whole jobs; a failure to delete them is not
	// the rewrite's (the next run, or orphans, finds them).
	bg := context.WithoutCancel(ctx)
	if _, err := j.Abort(bg, cat); err == nil {
		j.RemoveMarker(bg)
	}
	job.Sweep(bg, cat, table, j.ID)
	return res, nil
}

// testHookBeforeCommit, when set, runs after the pipeline succeeded and
// its result was read, before the commit.
var testHookBeforeCommit func()

// readResult reads the result file the pipeline wrote (removed with the
// job's marker) and gathers its units' results per group, as `geocompact
// job commit` does.
func readResult(ctx context.Context, j *job.Rewrite) ([][]iceberg.DataFile, []verify.Digest, []verify.Digest, int64, error) {
	loc, fs, err := j.Storage(ctx)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	p := job.ResultPath(loc, j.ID)
	f, err := fs.Open(p)
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("read job result: %w", err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil, nil, nil, 0, fmt.Errorf("read job result: %w", err)
	}
	var rs []job.Result
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, nil, nil, 0, fmt.Errorf("decode job result: %w", err)
	}
	var shuffle int64
	for _, r := range rs {
		shuffle += r.ShuffleBytes
	}
	files, in, out, err := j.Gather(rs)
	return files, in, out, shuffle, err
}
