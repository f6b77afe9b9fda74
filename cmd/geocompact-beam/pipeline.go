package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/job"
	"github.com/geocompact/geocompact/table/catalogs"
)

// batch is the rows one input file sent one bucket, as an Arrow IPC
// stream, with the file's place in input order.
type batch struct {
	Pos int
	IPC []byte
}

// bucketCount is how many rows scatter sent one bucket from one file,
// and, for a group cut at cells (kd's leaves), how many of each cell:
// CellRows[i] rows of cell Cells[i].
type bucketCount struct {
	Group, Bucket int
	Rows          int64
	Cells         []uint64
	CellRows      []int64
}

// fragment is the rows one bucket holds of an output file spanning it.
type fragment struct {
	Bucket int
	IPC    []byte
}

// The elements that carry units and their results are the JSON lines of
// `geocompact job`: a job.Unit in, a job.Result out. The driver gathers
// the results as `geocompact job commit` does (job.Rewrite.Gather).

func init() {
	register.DoFn5x1[context.Context, string, func(string, batch), func(bucketCount), func(string), error](&scatterFn{})
	register.DoFn6x1[context.Context, string, func(*batch) bool, func(*bucketCount) bool, func(string, fragment), func(string), error](&bucketFn{})
	register.DoFn4x1[context.Context, string, func(*fragment) bool, func(string), error](&spanFn{})
	register.DoFn3x1[context.Context, string, func(string), error](&groupFn{})
	register.DoFn4x1[context.Context, int, func(*string) bool, func(string), error](&collectFn{})
	register.Function1x2[string, int, string](keyOne)
	register.Function1x2[bucketCount, string, bucketCount](keyCount)
	register.Function2x1[bucketCount, bucketCount, bucketCount](addCounts)
	register.Emitter2[string, batch]()
	register.Emitter2[string, fragment]()
	register.Emitter1[bucketCount]()
	register.Emitter1[string]()
	register.Iter1[batch]()
	register.Iter1[bucketCount]()
	register.Iter1[fragment]()
	register.Iter1[string]()
	for _, t := range []any{batch{}, bucketCount{}, fragment{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
}

// jobFn is what every step needs: the job and how to reach the catalog.
// Its fields travel to the workers as JSON.
type jobFn struct {
	Spec catalogs.Spec
	Job  string

	job *job.Rewrite
}

func (f *jobFn) open(ctx context.Context) error {
	if f.job != nil {
		return nil
	}
	j, err := openJob(ctx, f.Spec, f.Job)
	if err != nil {
		return err
	}
	f.job = j
	return nil
}

// unit decodes a unit's JSON line and checks that it is one of the job's.
func (f *jobFn) unit(line string) (job.Unit, error) {
	var u job.Unit
	if err := json.Unmarshal([]byte(line), &u); err != nil {
		return u, fmt.Errorf("decode unit: %w", err)
	}
	return u, f.job.CheckUnit(&u)
}

// emitResult sends r on as its JSON line.
func emitResult(r *job.Result, out func(string)) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	out(string(b))
	return nil
}

// opened holds the jobs this process opened, by their JSON: a runner
// makes a DoFn per bundle, and opening a job (loading the table and
// planning its snapshot's files) costs far more than most bundles.
var opened struct {
	sync.Mutex
	jobs map[string]*job.Rewrite
}

// openJob decodes and opens the job encoded as doc, once per process.
func openJob(ctx context.Context, spec catalogs.Spec, doc string) (*job.Rewrite, error) {
	opened.Lock()
	defer opened.Unlock()
	if j := opened.jobs[doc]; j != nil {
		return j, nil
	}
	var j job.Rewrite
	if err := json.Unmarshal([]byte(doc), &j); err != nil {
		return nil, fmt.Errorf("decode job: %w", err)
	}
	cat, err := catalogs.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := j.Open(ctx, cat); err != nil {
		return nil, err
	}
	if opened.jobs == nil {
		opened.jobs = map[string]*job.Rewrite{}
	}
	opened.jobs[doc] = &j
	return &j, nil
}

// keyCount keys a bucket count by its group and bucket.
func keyCount(c bucketCount) (string, bucketCount) { return bucketKey(c.Group, c.Bucket), c }

// addCounts adds two counts of one bucket, and their cells' counts.
func addCounts(a, b bucketCount) bucketCount {
	out := bucketCount{Group: a.Group, Bucket: a.Bucket, Rows: a.Rows + b.Rows}
	if a.Cells == nil && b.Cells == nil {
		return out
	}
	cells := make(map[uint64]int64, len(a.Cells)+len(b.Cells))
	for _, c := range []bucketCount{a, b} {
		for i, cell := range c.Cells {
			cells[cell] += c.CellRows[i]
		}
	}
	for _, cell := range slices.Sorted(maps.Keys(cells)) {
		out.Cells, out.CellRows = append(out.Cells, cell), append(out.CellRows, cells[cell])
	}
	return out
}

// scatterFn runs a scatter unit: it reads the unit's input files and
// emits their rows keyed by bucket, the rows it sent each bucket (so a
// bucket knows its first row), and its result with the digest of the
// rows read.
type scatterFn struct{ jobFn }

func (f *scatterFn) ProcessElement(ctx context.Context, line string, emit func(string, batch), count func(bucketCount), out func(string)) error {
	if err := f.open(ctx); err != nil {
		return err
	}
	u, err := f.unit(line)
	if err != nil {
		return err
	}
	if u.Kind != job.KindScatter {
		return fmt.Errorf("scatter step: a %q unit", u.Kind)
	}
	res := &job.Result{Unit: u}
	in := verify.NewDigest()
	for pos := u.File; pos < u.File+u.Count; pos++ {
		d, err := f.scatterFile(ctx, u.Group, pos, emit, count, res)
		if err != nil {
			return err
		}
		in.Merge(d)
	}
	res.In = in.Encode()
	return emitResult(res, out)
}

// scatterFile scatters input file pos of group, as one batch per bucket:
// few, large elements cost the runner least per row.
func (f *scatterFn) scatterFile(ctx context.Context, group, pos int, emit func(string, batch), count func(bucketCount), res *job.Result) (verify.Digest, error) {
	held := map[int][]arrow.RecordBatch{}
	defer func() {
		for _, recs := range held {
			release(recs)
		}
	}()
	d, cells, err := f.job.ScatterFile(ctx, group, f.job.Groups[group].Files[pos], func(bk int, rec arrow.RecordBatch) error {
		held[bk] = append(held[bk], rec)
		return nil
	})
	if err != nil {
		return d, err
	}
	for _, bk := range slices.Sorted(maps.Keys(held)) {
		b, err := job.EncodeRows(held[bk])
		if err != nil {
			return d, err
		}
		var rows int64
		for _, r := range held[bk] {
			rows += r.NumRows()
		}
		emit(bucketKey(group, bk), batch{Pos: pos, IPC: b})
		c := bucketCount{Group: group, Bucket: bk, Rows: rows}
		if cells != nil {
			for _, cell := range slices.Sorted(maps.Keys(cells[bk])) {
				c.Cells, c.CellRows = append(c.Cells, cell), append(c.CellRows, cells[bk][cell])
			}
		}
		count(c)
		res.ShuffleBytes += int64(len(b))
	}
	return d, nil
}

// bucketFn sorts and writes one bucket.
type bucketFn struct{ jobFn }

func (f *bucketFn) ProcessElement(ctx context.Context, key string, rows func(*batch) bool, counts func(*bucketCount) bool, frag func(string, fragment), out func(string)) error {
	if err := f.open(ctx); err != nil {
		return err
	}
	group, bk := parseKey(key)
	var bs []batch
	var b batch
	for rows(&b) {
		bs = append(bs, b)
	}
	sort.Slice(bs, func(i, k int) bool { return bs[i].Pos < bs[k].Pos })
	var first, total int64
	var cells cluster.Cells
	var c bucketCount
	for counts(&c) {
		if c.Group != group {
			continue
		}
		total += c.Rows
		if c.Bucket < bk {
			first += c.Rows
		}
		if c.Cells != nil && cells == nil {
			cells = cluster.Cells{}
		}
		for i, cell := range c.Cells {
			cells[cell] += c.CellRows[i]
		}
	}
	blobs := make([][]byte, len(bs))
	for i, b := range bs {
		blobs[i] = b.IPC
	}
	recs, err := job.DecodeRows(blobs)
	defer release(recs)
	if err != nil {
		return err
	}
	res, err := f.job.WriteBucket(ctx, group, bk, first, total, cells, recs)
	if err == nil && testHookBucket != nil {
		err = testHookBucket()
	}
	r := &job.Result{Unit: job.Unit{Job: f.job.ID, Group: group, Kind: job.KindBucket, Bucket: bk}}
	if res != nil {
		for _, fr := range res.Fragments {
			b, ferr := job.EncodeRows([]arrow.RecordBatch{fr.Rows})
			fr.Rows.Release()
			if err == nil && ferr != nil {
				err = ferr
			}
			frag(bucketKey(group, fr.File), fragment{Bucket: bk, IPC: b})
			r.ShuffleBytes += int64(len(b))
		}
	}
	if err != nil {
		return err
	}
	return f.report(r, res.Files, res.Out, out)
}

// report completes r with the data files a unit wrote and the digest of
// their rows, and sends it on.
func (f *jobFn) report(r *job.Result, files []iceberg.DataFile, d verify.Digest, out func(string)) error {
	b, err := f.job.EncodeFiles(files)
	if err != nil {
		return err
	}
	r.Files, r.Out, r.Rows, r.FilesOut = b, d.Encode(), d.Rows, len(files)
	return emitResult(r, out)
}

// spanFn writes one output file from the fragments of the buckets it
// spans.
type spanFn struct{ jobFn }

func (f *spanFn) ProcessElement(ctx context.Context, key string, frags func(*fragment) bool, out func(string)) error {
	if err := f.open(ctx); err != nil {
		return err
	}
	group, file := parseKey(key)
	var fs []fragment
	var fr fragment
	for frags(&fr) {
		fs = append(fs, fr)
	}
	sort.Slice(fs, func(i, k int) bool { return fs[i].Bucket < fs[k].Bucket })
	blobs := make([][]byte, len(fs))
	for i, fr := range fs {
		blobs[i] = fr.IPC
	}
	recs, err := job.DecodeRows(blobs)
	defer release(recs)
	if err != nil {
		return err
	}
	written, d, err := f.job.WriteSpanning(ctx, group, file, recs)
	if err != nil {
		return err
	}
	return f.report(&job.Result{Unit: job.Unit{Job: f.job.ID, Group: group, Kind: job.KindSpan, File: file}}, written, d, out)
}

// groupFn runs a whole-group unit as `geocompact job work` does: one
// worker rewrites the group, spilling to its local disk when it is over
// the memory budget; its rows never go through a shuffle.
type groupFn struct{ jobFn }

func (f *groupFn) ProcessElement(ctx context.Context, line string, out func(string)) error {
	if err := f.open(ctx); err != nil {
		return err
	}
	u, err := f.unit(line)
	if err != nil {
		return err
	}
	if u.Kind != job.KindGroup {
		return fmt.Errorf("whole-group step: a %q unit", u.Kind)
	}
	res, err := f.job.Run(ctx, u)
	if err != nil {
		return err
	}
	return emitResult(res, out)
}

// collectFn writes every piece the driver needs into one result file
// next to the table's metadata, which the driver reads once the runner
// reports success: it works on every runner, since workers and driver
// both reach the table's storage.
type collectFn struct{ jobFn }

func (f *collectFn) ProcessElement(ctx context.Context, _ int, lines func(*string) bool, emit func(string)) error {
	if err := f.open(ctx); err != nil {
		return err
	}
	var all []json.RawMessage
	var l string
	for lines(&l) {
		all = append(all, json.RawMessage(l))
	}
	sort.Slice(all, func(i, k int) bool { return bytes.Compare(all[i], all[k]) < 0 })
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	p, err := writeResultFile(ctx, f.job, b)
	if err != nil {
		return err
	}
	emit(p)
	return nil
}

func writeResultFile(ctx context.Context, j *job.Rewrite, b []byte) (string, error) {
	tbl, fs, err := j.Storage(ctx)
	if err != nil {
		return "", err
	}
	w, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return "", errors.New("the table's file system cannot write files")
	}
	p := job.ResultPath(tbl, j.ID)
	if err := w.WriteFile(p, b); err != nil {
		return "", fmt.Errorf("write job result %s: %w", p, err)
	}
	return p, nil
}

func bucketKey(group, n int) string { return fmt.Sprintf("%d/%d", group, n) }

func parseKey(k string) (int, int) {
	var a, b int
	fmt.Sscanf(k, "%d/%d", &a, &b)
	return a, b
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// testHookBucket, when set, runs after each bucket is written (in
// process): an error fails the bundle.
var testHookBucket func() error
