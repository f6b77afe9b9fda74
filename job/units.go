package job

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/verify"
)

// The kinds of unit. A group one worker rewrites whole is one unit; a
// shuffled group (see SetShuffle) runs in three stages through files
// beside the table's metadata: one scatter unit per input file, then one
// bucket unit per bucket that received rows, then one span unit per
// output file that crosses a bucket's edge. Next gives each stage's
// units from the results of the one before.
const (
	KindGroup   = ""
	KindScatter = "scatter"
	KindBucket  = "bucket"
	KindSpan    = "span"
)

// Unit is one unit of work as it travels to a worker (a JSON line).
type Unit struct {
	Job   string `json:"job"`
	Group int    `json:"group"`
	Kind  string `json:"kind,omitempty"`
	// File is, for a scatter unit, the place in its group of the first
	// of its Count input files (see ScatterRun); for a span unit, the
	// output file's.
	File   int `json:"file,omitempty"`
	Count  int `json:"count,omitempty"`
	Bucket int `json:"bucket,omitempty"`
	// FirstRow and GroupRows place a bucket's rows in its group's order;
	// Cells are the cell counts of all the group's rows, for a group cut
	// at cells (see WriteBucket).
	FirstRow  int64         `json:"first_row,omitempty"`
	GroupRows int64         `json:"group_rows,omitempty"`
	Cells     cluster.Cells `json:"cells,omitempty"`
	// Inputs are the shuffle files a bucket or span unit reads, in order.
	Inputs []string `json:"inputs,omitempty"`
}

// key names the unit's work: two attempts of one unit have one key.
func (u *Unit) key() string {
	switch u.Kind {
	case KindScatter, KindSpan:
		return fmt.Sprintf("%s/%d/%d", u.Kind, u.Group, u.File)
	case KindBucket:
		return fmt.Sprintf("%s/%d/%d", u.Kind, u.Group, u.Bucket)
	}
	return fmt.Sprintf("group/%d", u.Group)
}

// Shuffled is one shuffle file a unit wrote: the rows a scatter unit
// sent one bucket (Bucket), or the rows a bucket unit holds of an output
// file that crosses its edge (File).
type Shuffled struct {
	Bucket int           `json:"bucket,omitempty"`
	File   int           `json:"file,omitempty"`
	Path   string        `json:"path"`
	Rows   int64         `json:"rows"`
	Cells  cluster.Cells `json:"cells,omitempty"`
}

// Result is what a worker reports of a unit it ran (a JSON line).
type Result struct {
	Unit
	// In and Out are the digests (verify.Digest.Encode) of the rows read
	// and of the data files written, read back.
	In  []byte `json:"in,omitempty"`
	Out []byte `json:"out,omitempty"`
	// Files describe the data files written (EncodeFiles).
	Files []byte `json:"files,omitempty"`
	// Shuffled are the shuffle files written, for the next stage.
	Shuffled []Shuffled `json:"shuffled,omitempty"`
	// Rows and FilesOut are the rows and data files written, for people.
	Rows     int64 `json:"rows"`
	FilesOut int   `json:"files_out"`
	// ShuffleBytes are the bytes of rows (Arrow IPC) the unit sent on to
	// the next stage.
	ShuffleBytes int64 `json:"shuffle_bytes,omitempty"`
}

// The ways of choosing the groups that run as shuffled stages.
const (
	// ShuffleAuto shuffles a sorted group over a worker's memory budget
	// when it holds more than its share of the job's rows for the workers
	// it runs on: it alone would keep one worker busy after the others
	// are done. With one worker, nothing is shuffled.
	ShuffleAuto = "auto"
	// ShuffleAlways shuffles every sorted group over the budget.
	ShuffleAlways = "always"
	// ShuffleNever shuffles nothing: one worker rewrites each group,
	// spilling to its local disk.
	ShuffleNever = "never"
)

// SetShuffle marks the groups that run as shuffled stages, chosen by
// mode for a job that runs on workers workers (units at once). Only a
// sorted group that one worker would have to spill, and whose keys were
// sampled (not Whole, not Local), can be shuffled. It is the driver's
// choice, made once before the job is written.
func (j *Rewrite) SetShuffle(mode string, workers int) error {
	j.Shuffled = nil
	var total int64
	for _, g := range j.Groups {
		total += g.Records
	}
	if _, err := spreads(mode, 0, 0, 0); err != nil {
		return err
	}
	for i, g := range j.Groups {
		if g.Whole || g.Local || g.Scale == nil {
			continue // in memory, not sampled, or binpack
		}
		if ok, _ := spreads(mode, workers, g.Records, total); ok {
			j.Shuffled = append(j.Shuffled, i)
		}
	}
	var files int
	for _, g := range j.Shuffled {
		files += len(j.Groups[g].Files)
	}
	// Two scatter units per worker: few enough that a worker opens the
	// job for many files at once (a task costs about a second before its
	// first row on Spark), enough to even out the workers' load. With no
	// count of workers (a Beam runner balances its own bundles), a unit
	// per file.
	j.ScatterRun = 1
	if workers > 0 {
		per := 2 * workers
		j.ScatterRun = max(1, (files+per-1)/per)
	}
	return nil
}

// spreads reports whether mode spreads a sorted group over the budget of
// records rows, of total in the job, over workers workers.
func spreads(mode string, workers int, records, total int64) (bool, error) {
	switch mode {
	case ShuffleAlways:
		return true, nil
	case ShuffleAuto:
		return records*int64(max(workers, 1)) > total, nil
	case ShuffleNever:
		return false, nil
	}
	return false, fmt.Errorf("shuffle %q: want %s, %s or %s", mode, ShuffleAuto, ShuffleAlways, ShuffleNever)
}

// scatterUnits returns the scatter units of group gi: a unit per run of
// ScatterRun input files.
func (j *Rewrite) scatterUnits(gi int) []Unit {
	var us []Unit
	n, run := len(j.Groups[gi].Files), max(j.ScatterRun, 1)
	for pos := 0; pos < n; pos += run {
		us = append(us, Unit{Job: j.ID, Group: gi, Kind: KindScatter, File: pos, Count: min(run, n-pos)})
	}
	return us
}

func (j *Rewrite) shuffled(group int) bool { return slices.Contains(j.Shuffled, group) }

// Units returns the job's first units: a unit per whole group, and a
// scatter unit per run of input files of every shuffled group.
func (j *Rewrite) Units() []Unit {
	var us []Unit
	for gi := range j.Groups {
		if !j.shuffled(gi) {
			us = append(us, Unit{Job: j.ID, Group: gi})
			continue
		}
		us = append(us, j.scatterUnits(gi)...)
	}
	return us
}

// CheckUnit refuses a unit that is not one of j's.
func (j *Rewrite) CheckUnit(u *Unit) error { return j.checkUnit(u, true) }

// checkUnit is CheckUnit; a result's unit (inputs false) no longer
// carries its inputs.
func (j *Rewrite) checkUnit(u *Unit, inputs bool) error {
	if u.Job != j.ID {
		return fmt.Errorf("a unit of job %s, not of job %s", u.Job, j.ID)
	}
	if u.Group < 0 || u.Group >= len(j.Groups) {
		return fmt.Errorf("job %s has no group %d (it has %d)", j.ID, u.Group, len(j.Groups))
	}
	g := &j.Groups[u.Group]
	switch u.Kind {
	case KindGroup:
		if j.shuffled(u.Group) {
			return fmt.Errorf("group %d of job %s is shuffled: it has no whole-group unit", u.Group, j.ID)
		}
		return nil
	case KindScatter, KindBucket, KindSpan:
		if !j.shuffled(u.Group) {
			return fmt.Errorf("group %d of job %s is rewritten whole: it has no %s unit", u.Group, j.ID, u.Kind)
		}
	default:
		return fmt.Errorf("unknown kind of unit %q (want %q, %q or %q, or none)", u.Kind, KindScatter, KindBucket, KindSpan)
	}
	switch {
	case u.Kind == KindScatter && (u.File < 0 || u.File >= len(g.Files)):
		return fmt.Errorf("group %d of job %s has no input file %d", u.Group, j.ID, u.File)
	case u.Kind == KindScatter && (u.File%max(j.ScatterRun, 1) != 0 || u.Count != min(max(j.ScatterRun, 1), len(g.Files)-u.File)):
		return fmt.Errorf("group %d of job %s has no scatter unit of %d files from file %d (its units scatter %d files each)", u.Group, j.ID, u.Count, u.File, max(j.ScatterRun, 1))
	case u.Kind == KindBucket && (u.Bucket < 0 || u.Bucket >= g.Buckets):
		return fmt.Errorf("group %d of job %s has no bucket %d", u.Group, j.ID, u.Bucket)
	case inputs && u.Kind != KindScatter && len(u.Inputs) == 0:
		return fmt.Errorf("%s unit of group %d names no shuffle file to read", u.Kind, u.Group)
	}
	for _, p := range u.Inputs {
		if !strings.Contains(p, "/"+shuffleDir+"/") || !strings.Contains(p, j.Tag()) {
			return fmt.Errorf("%s unit of group %d reads %s, which is not a shuffle file of job %s", u.Kind, u.Group, p, j.ID)
		}
	}
	return nil
}

// Run runs one unit of the open job (see Open) and reports what it
// wrote. After an error, what the unit wrote is left for Abort.
func (j *Rewrite) Run(ctx context.Context, u Unit) (*Result, error) {
	if err := j.CheckUnit(&u); err != nil {
		return nil, err
	}
	res := &Result{Unit: u}
	res.Cells, res.Inputs = nil, nil
	var files []iceberg.DataFile
	var out verify.Digest
	var err error
	switch u.Kind {
	case KindGroup:
		var in verify.Digest
		files, in, out, err = j.RewriteGroup(ctx, u.Group)
		res.In = in.Encode()
	case KindScatter:
		err = j.runScatter(ctx, u, res)
	case KindBucket:
		files, out, err = j.runBucket(ctx, u, res)
	case KindSpan:
		files, out, err = j.runSpan(ctx, u)
	}
	if err != nil {
		return nil, err
	}
	if u.Kind != KindScatter {
		if res.Files, err = j.EncodeFiles(files); err != nil {
			return nil, err
		}
		res.Out, res.Rows, res.FilesOut = out.Encode(), out.Rows, len(files)
	}
	return res, nil
}

// shuffleDir holds the shuffle files of every job under a table's
// metadata folder; each file's name carries its job's tag, so Abort and
// Sweep delete it with the job's other files.
const shuffleDir = "geocompact-shuffle"

// shufflePrefix is how the path of every shuffle file of the job under
// location loc begins.
func (j *Rewrite) shufflePrefix(loc string) string {
	return strings.TrimSuffix(loc, "/") + "/metadata/" + shuffleDir + "/" + j.Tag()
}

// writeShuffle writes recs (releasing them) as one shuffle file of the
// job, adds its size to res.ShuffleBytes, and returns its path and rows.
func (j *Rewrite) writeShuffle(ctx context.Context, res *Result, what string, recs []arrow.RecordBatch) (string, int64, error) {
	defer release(recs)
	loc, fs, err := j.Storage(ctx)
	if err != nil {
		return "", 0, err
	}
	w, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return "", 0, fmt.Errorf("job %s: the table's file system cannot write files", j.ID)
	}
	b, err := EncodeRows(recs)
	if err != nil {
		return "", 0, err
	}
	res.ShuffleBytes += int64(len(b))
	var r [6]byte
	rand.Read(r[:])
	p := fmt.Sprintf("%s%s-%s.arrow", j.shufflePrefix(loc), hex.EncodeToString(r[:]), what)
	if err := w.WriteFile(p, b); err != nil {
		return "", 0, fmt.Errorf("write shuffle file %s: %w", p, err)
	}
	var rows int64
	for _, rec := range recs {
		rows += rec.NumRows()
	}
	return p, rows, nil
}

// readShuffle reads the rows of the shuffle files at paths, in order.
func (j *Rewrite) readShuffle(ctx context.Context, paths []string) ([]arrow.RecordBatch, error) {
	loc, fs, err := j.Storage(ctx)
	if err != nil {
		return nil, err
	}
	blobs := make([][]byte, len(paths))
	for i, p := range paths {
		if !strings.HasPrefix(p, j.shufflePrefix(loc)) {
			return nil, fmt.Errorf("read shuffle file %s: not a shuffle file of job %s under %s", p, j.ID, loc)
		}
		f, err := fs.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read shuffle file: %w", err)
		}
		blobs[i], err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read shuffle file %s: %w", p, err)
		}
	}
	recs, err := DecodeRows(blobs)
	if err != nil {
		release(recs)
		return nil, err
	}
	return recs, nil
}

// scatterHold is how many bytes of rows a scatter unit holds before it
// writes them out as shuffle files, one per bucket (a variable for
// tests).
var scatterHold int64 = 32 << 20

// runScatter scatters the unit's input files, in order, into shuffle
// files by bucket: one per bucket each time it has held scatterHold
// bytes, and at the end.
func (j *Rewrite) runScatter(ctx context.Context, u Unit, res *Result) error {
	held := map[int][]arrow.RecordBatch{}
	cells := map[int]cluster.Cells{}
	var bytes int64
	defer func() {
		for _, recs := range held {
			release(recs)
		}
	}()
	flush := func() error {
		for _, bk := range slices.Sorted(maps.Keys(held)) {
			recs := held[bk]
			delete(held, bk)
			p, rows, err := j.writeShuffle(ctx, res, fmt.Sprintf("g%d-f%d-b%d", u.Group, u.File, bk), recs)
			if err != nil {
				return err
			}
			res.Shuffled = append(res.Shuffled, Shuffled{Bucket: bk, Path: p, Rows: rows, Cells: cells[bk]})
			delete(cells, bk)
		}
		bytes = 0
		return nil
	}
	in := verify.NewDigest()
	for pos := u.File; pos < u.File+u.Count; pos++ {
		d, fc, err := j.ScatterFile(ctx, u.Group, j.Groups[u.Group].Files[pos], func(bk int, rec arrow.RecordBatch) error {
			held[bk] = append(held[bk], rec)
			bytes += spill.RecordBytes(rec)
			return nil
		})
		if err != nil {
			return err
		}
		in.Merge(d)
		for bk, c := range fc {
			if len(c) > 0 {
				if cells[bk] == nil {
					cells[bk] = cluster.Cells{}
				}
				cells[bk].Add(c)
			}
		}
		if bytes >= scatterHold {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	res.In = in.Encode()
	return flush()
}

// runBucket sorts one bucket from its shuffle files, writes the data
// files wholly inside it, and the rows of files crossing its edges as
// shuffle files for their span units.
func (j *Rewrite) runBucket(ctx context.Context, u Unit, res *Result) ([]iceberg.DataFile, verify.Digest, error) {
	recs, err := j.readShuffle(ctx, u.Inputs)
	if err != nil {
		return nil, verify.Digest{}, err
	}
	defer release(recs)
	out, err := j.WriteBucket(ctx, u.Group, u.Bucket, u.FirstRow, u.GroupRows, u.Cells, recs)
	if out == nil {
		return nil, verify.Digest{}, err
	}
	for _, fr := range out.Fragments {
		if err != nil {
			fr.Rows.Release()
			continue
		}
		var p string
		var rows int64
		p, rows, err = j.writeShuffle(ctx, res, fmt.Sprintf("g%d-b%d-o%d", u.Group, u.Bucket, fr.File), []arrow.RecordBatch{fr.Rows})
		res.Shuffled = append(res.Shuffled, Shuffled{File: fr.File, Path: p, Rows: rows})
	}
	return out.Files, out.Out, err
}

// runSpan writes one output file from the rows the buckets it crosses
// left, in bucket order, reading one shuffle file at a time: a file may be
// larger than a worker's memory.
func (j *Rewrite) runSpan(ctx context.Context, u Unit) ([]iceberg.DataFile, verify.Digest, error) {
	return j.WriteSpanningSeq(ctx, u.Group, u.File, func(yield func(arrow.RecordBatch, error) bool) {
		for _, p := range u.Inputs {
			recs, err := j.readShuffle(ctx, []string{p})
			if err != nil {
				yield(nil, err)
				return
			}
			for i, rec := range recs {
				if !yield(rec, nil) {
					release(recs[i+1:])
					return
				}
			}
		}
	})
}

// results keeps the first result of every unit, by its key.
type results map[string]*Result

func keep(j *Rewrite, rs []Result) (results, error) {
	kept := results{}
	for i := range rs {
		r := &rs[i]
		if err := j.checkUnit(&r.Unit, false); err != nil {
			return nil, fmt.Errorf("result of %s: %w", r.key(), err)
		}
		if _, ok := kept[r.key()]; !ok {
			kept[r.key()] = r
		}
	}
	return kept, nil
}

func (k results) get(kind string, group, n int) *Result {
	u := Unit{Kind: kind, Group: group, File: n, Bucket: n}
	return k[u.key()]
}

// Next returns the units still to run after the units of rs ran: the
// units of the next stage of every shuffled group whose stage is done,
// and any unit whose result is missing. None means every unit has run
// and the results go to Commit (see Gather).
func (j *Rewrite) Next(rs []Result) ([]Unit, error) {
	kept, err := keep(j, rs)
	if err != nil {
		return nil, err
	}
	return j.next(kept), nil
}

// next is Next on the kept results.
func (j *Rewrite) next(kept results) []Unit {
	var us []Unit
	for gi := range j.Groups {
		if !j.shuffled(gi) {
			if kept.get(KindGroup, gi, 0) == nil {
				us = append(us, Unit{Job: j.ID, Group: gi})
			}
			continue
		}
		us = append(us, j.nextOf(gi, kept)...)
	}
	return us
}

// nextOf returns the units of shuffled group gi still to run.
func (j *Rewrite) nextOf(gi int, kept results) []Unit {
	var us []Unit
	for _, u := range j.scatterUnits(gi) {
		if kept.get(KindScatter, gi, u.File) == nil {
			us = append(us, u)
		}
	}
	if len(us) > 0 {
		return us
	}
	buckets := bucketUnits(j, gi, kept)
	for _, b := range buckets {
		if kept.get(KindBucket, gi, b.Bucket) == nil {
			us = append(us, b)
		}
	}
	if len(us) > 0 {
		return us
	}
	for _, s := range spanUnits(j, gi, kept, buckets) {
		if kept.get(KindSpan, gi, s.File) == nil {
			us = append(us, s)
		}
	}
	return us
}

// bucketUnits returns a unit per bucket of group gi that received rows,
// from the kept results of all its scatter units.
func bucketUnits(j *Rewrite, gi int, kept results) []Unit {
	g := &j.Groups[gi]
	rows := make([]int64, g.Buckets)
	inputs := make([][]string, g.Buckets)
	var cells cluster.Cells
	var total int64
	for _, u := range j.scatterUnits(gi) {
		for _, s := range kept.get(KindScatter, gi, u.File).Shuffled {
			if s.Bucket < 0 || s.Bucket >= g.Buckets {
				continue
			}
			rows[s.Bucket] += s.Rows
			total += s.Rows
			inputs[s.Bucket] = append(inputs[s.Bucket], s.Path)
			if g.CutShift != 0 {
				if cells == nil {
					cells = cluster.Cells{}
				}
				cells.Add(s.Cells)
			}
		}
	}
	var us []Unit
	var first int64
	for bk := range g.Buckets {
		if rows[bk] > 0 {
			us = append(us, Unit{Job: j.ID, Group: gi, Kind: KindBucket, Bucket: bk, FirstRow: first, GroupRows: total, Cells: cells, Inputs: inputs[bk]})
		}
		first += rows[bk]
	}
	return us
}

// spanUnits returns a unit per output file of group gi that crosses a
// bucket's edge, from the kept results of its bucket units.
func spanUnits(j *Rewrite, gi int, kept results, buckets []Unit) []Unit {
	inputs := map[int][]string{}
	for _, b := range buckets {
		for _, s := range kept.get(KindBucket, gi, b.Bucket).Shuffled {
			inputs[s.File] = append(inputs[s.File], s.Path)
		}
	}
	var us []Unit
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		us = append(us, Unit{Job: j.ID, Group: gi, Kind: KindSpan, File: k, Inputs: inputs[k]})
	}
	return us
}

// Gather returns, from the results of every unit of the job, the files
// written and the digests of the rows read and written of every group,
// for Commit. A unit without a result is an error that names it.
func (j *Rewrite) Gather(rs []Result) ([][]iceberg.DataFile, []verify.Digest, []verify.Digest, error) {
	kept, err := keep(j, rs)
	if err != nil {
		return nil, nil, nil, err
	}
	if missing := j.next(kept); len(missing) > 0 {
		u, _ := json.Marshal(missing[0])
		more := ""
		if len(missing) > 1 {
			more = fmt.Sprintf(" (and %d more units)", len(missing)-1)
		}
		return nil, nil, nil, fmt.Errorf("commit job %s: unit %s has no result%s", j.ID, u, more)
	}
	n := len(j.Groups)
	files := make([][]iceberg.DataFile, n)
	in, out := make([]verify.Digest, n), make([]verify.Digest, n)
	for i := range n {
		in[i], out[i] = verify.NewDigest(), verify.NewDigest()
	}
	ordered := slices.SortedFunc(maps.Values(kept), byPlace)
	for _, r := range ordered {
		if err := r.merge(&in[r.Group], &out[r.Group], &files[r.Group]); err != nil {
			return nil, nil, nil, fmt.Errorf("commit job %s: result of %s: %w", j.ID, r.key(), err)
		}
	}
	return files, in, out, nil
}

// byPlace orders results by group, then kind (scatter, bucket, span),
// then place.
func byPlace(a, b *Result) int {
	rank := map[string]int{KindGroup: 0, KindScatter: 1, KindBucket: 2, KindSpan: 3}
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(rank[a.Kind], rank[b.Kind]),
		cmp.Compare(a.File, b.File), cmp.Compare(a.Bucket, b.Bucket))
}

// kindName is the unit's kind for people.
func (u *Unit) kindName() string {
	if u.Kind == KindGroup {
		return "whole-group"
	}
	return u.Kind
}

// merge adds r's digests and files to its group's.
func (r *Result) merge(in, out *verify.Digest, files *[]iceberg.DataFile) error {
	for _, d := range []struct {
		b  []byte
		to *verify.Digest
	}{{r.In, in}, {r.Out, out}} {
		if len(d.b) == 0 {
			continue
		}
		v, err := verify.DecodeDigest(d.b)
		if err != nil {
			return err
		}
		d.to.Merge(v)
	}
	wantIn, wantOut := r.Kind == KindGroup || r.Kind == KindScatter, r.Kind != KindScatter
	if wantIn != (len(r.In) > 0) || wantOut != (len(r.Out) > 0) {
		return fmt.Errorf("a %s result must report the digests of rows read (%v) and written (%v)", r.kindName(), wantIn, wantOut)
	}
	fs, err := DecodeFiles(r.Files)
	if err != nil {
		return err
	}
	*files = append(*files, fs...)
	return nil
}

// EncodeRows encodes recs (of one schema) as one LZ4-compressed Arrow
// IPC stream: the form rows take through a shuffle.
func EncodeRows(recs []arrow.RecordBatch) ([]byte, error) {
	if len(recs) == 0 {
		return nil, errors.New("encode rows: no rows")
	}
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(recs[0].Schema()), ipc.WithLZ4())
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			return nil, fmt.Errorf("encode rows: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encode rows: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeRows decodes the streams of blobs (EncodeRows) in order; after an
// error it returns what it decoded, for release.
func DecodeRows(blobs [][]byte) ([]arrow.RecordBatch, error) {
	recs := make([]arrow.RecordBatch, 0, len(blobs))
	for _, b := range blobs {
		r, err := ipc.NewReader(bytes.NewReader(b))
		if err != nil {
			return recs, fmt.Errorf("decode rows: %w", err)
		}
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		err = r.Err()
		r.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return recs, fmt.Errorf("decode rows: %w", err)
		}
	}
	return recs, nil
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
