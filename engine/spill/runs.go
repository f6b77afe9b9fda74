package spill

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/geocompact/geocompact/cluster"
)

// Runs holds the sorted runs of one group on disk: each run is the rows
// of a stretch of the input, in key order, as an uncompressed Arrow IPC
// file of small batches (LZ4 saved a tenth of the bytes of bbox doubles
// and WKB points, 114 MB against 128 MB for 1.5M points, for about 0.4 s
// of CPU), beside a file of the rows' keys (little-endian uint64s, one
// per row, in the same order). Merge reads them back in key order. Both
// files are read at any row: the IPC file format indexes its batches,
// whose row counts the run keeps, and a key is eight bytes at 8×row.
type Runs struct {
	dir    string
	schema *arrow.Schema
	runs   []run
	disk   int64
	seq    int

	// BeforeWrite, when set, runs before every run file is written; an
	// error fails the write as a full disk would (tests set it).
	BeforeWrite func() error
}

type run struct {
	data, keys string
	rows       int64
	ends       []int64 // the row after each batch of the data file
}

// NewRuns returns an empty set of runs of rows of schema, spilled into dir.
func NewRuns(dir *Dir, schema *arrow.Schema) *Runs {
	return &Runs{dir: dir.Path(), schema: schema}
}

// Len is how many runs are on disk.
func (rs *Runs) Len() int { return len(rs.runs) }

// DiskBytes is what the runs written so far take on disk.
func (rs *Runs) DiskBytes() int64 { return rs.disk }

// Write appends one run: the rows of recs (counted across the batches in
// order) in perm's order, whose keys, in that order, are keys (ascending).
// It writes them in batches of batchRows rows.
func (rs *Runs) Write(recs []arrow.RecordBatch, perm []int32, keys []uint64, batchRows int) error {
	w, err := rs.create()
	if err != nil {
		return err
	}
	for lo := 0; lo < len(perm) && err == nil; lo += batchRows {
		hi := min(len(perm), lo+batchRows)
		var rec arrow.RecordBatch
		if rec, err = cluster.Gather(rs.schema, recs, perm[lo:hi], nil); err == nil {
			err = w.write(rec, keys[lo:hi])
			rec.Release()
		}
	}
	return rs.finish(w, err)
}

// runWriter writes one run's two files.
type runWriter struct {
	run
	df, kf *os.File
	ipc    *ipc.FileWriter
	dw, kw *bufio.Writer
	buf    []byte
}

func (rs *Runs) create() (*runWriter, error) {
	base := filepath.Join(rs.dir, fmt.Sprintf("r%06d", rs.seq))
	rs.seq++
	w := &runWriter{run: run{data: base + ".arrows", keys: base + ".keys"}}
	if rs.BeforeWrite != nil {
		if err := rs.BeforeWrite(); err != nil {
			return nil, rs.full(w.data, err)
		}
	}
	var err error
	if w.df, err = os.OpenFile(w.data, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err != nil {
		return nil, rs.full(w.data, err)
	}
	if w.kf, err = os.OpenFile(w.keys, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err != nil {
		w.df.Close()
		return nil, rs.full(w.keys, err)
	}
	w.dw = bufio.NewWriterSize(w.df, 256<<10)
	if w.ipc, err = ipc.NewFileWriter(w.dw, ipc.WithSchema(rs.schema)); err != nil {
		w.df.Close()
		w.kf.Close()
		os.Remove(w.data)
		os.Remove(w.keys)
		return nil, fmt.Errorf("%w: write %s: %w", ErrDir, w.data, err)
	}
	w.kw = bufio.NewWriterSize(w.kf, 256<<10)
	return w, nil
}

func (w *runWriter) write(rec arrow.RecordBatch, keys []uint64) error {
	if err := w.ipc.Write(rec); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	for _, k := range keys {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, k)
	}
	_, err := w.kw.Write(w.buf)
	w.rows += int64(len(keys))
	w.ends = append(w.ends, w.rows)
	return err
}

// finish closes w's files and records its run (err is the writing's).
func (rs *Runs) finish(w *runWriter, err error) error {
	r, err := rs.close(w, err)
	if err == nil {
		rs.runs = append(rs.runs, r)
	}
	return err
}

// close closes w's files and returns its run (err is the writing's); on
// an error it removes them.
func (rs *Runs) close(w *runWriter, err error) (run, error) {
	if cerr := w.ipc.Close(); err == nil {
		err = cerr
	}
	for _, b := range []*bufio.Writer{w.dw, w.kw} {
		if ferr := b.Flush(); err == nil {
			err = ferr
		}
	}
	for _, f := range []*os.File{w.df, w.kf} {
		if st, serr := f.Stat(); serr == nil {
			rs.disk += st.Size()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.Remove(w.data)
		os.Remove(w.keys)
		return run{}, rs.full(w.data, err)
	}
	return w.run, nil
}

func (rs *Runs) full(path string, err error) error {
	return fmt.Errorf("%w: write %s: %w (is the spill directory full? set the spill-dir option or %s)", ErrDir, path, err, EnvDir)
}

// Merge hands every row of every run to emit in key order, equal keys in
// the order of their runs (so the order of the input they were cut from):
// the stable order of all the rows. emit gets batches of outRows rows
// (the last may be shorter) and owns each. At most fanIn runs are read at
// once: when there are more, some consecutive runs are first merged into
// longer runs on disk, batchRows rows to a batch, up to lanes such merges
// at once (see Shrinks). Every run file is removed once read.
func (rs *Runs) Merge(fanIn, lanes, batchRows, outRows int, emit func(arrow.RecordBatch) error) error {
	return rs.MergeParts(fanIn, lanes, batchRows, outRows, nil, func(_ int, rec arrow.RecordBatch) error { return emit(rec) })
}

// MergeParts is Merge with the order cut into parts merged at once: part
// k is the rows from rank cuts[k-1] (0 for the first) up to rank cuts[k]
// (every row for the last) of the order Merge gives, and its batches go
// to emit(k, rec), called from that part's goroutine. cuts ascend within
// the rows' count. The parts read the same run files, each from its own
// rows on, so they take no more open files than one merge; each holds a
// batch of every run, as one merge does. When a part fails, the others
// stop and the first error is returned.
func (rs *Runs) MergeParts(fanIn, lanes, batchRows, outRows int, cuts []int64, emit func(part int, rec arrow.RecordBatch) error) error {
	fanIn, lanes = fitOpenFiles(fanIn, lanes, openFileLimit())
	for len(rs.runs) > fanIn {
		if err := rs.shrink(Shrinks(len(rs.runs), fanIn), lanes, batchRows); err != nil {
			return err
		}
	}
	runs := rs.runs
	rs.runs = nil
	srcs, err := openSources(runs)
	defer closeSources(srcs)
	if err != nil {
		return err
	}
	var total int64
	for _, r := range runs {
		total += r.rows
	}
	// from[k] is where part k starts in each run.
	from := [][]int64{make([]int64, len(srcs))}
	for i, rank := range cuts {
		if rank < 0 || rank > total || i > 0 && rank < cuts[i-1] {
			return fmt.Errorf("merge: cut at row %d of %d out of order", rank, total)
		}
		at, err := split(srcs, rank)
		if err != nil {
			return err
		}
		from = append(from, at)
	}
	end := make([]int64, len(srcs))
	for i, s := range srcs {
		end[i] = s.rows
	}
	from = append(from, end)
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
		errs   = make([]error, len(from)-1)
	)
	for k := range len(from) - 1 {
		wg.Go(func() {
			cs := make([]*cursor, len(srcs))
			for i, s := range srcs {
				cs[i] = s.cursor(rs.schema, from[k][i], from[k+1][i])
			}
			errs[k] = mergeCursors(rs.schema, cs, outRows, func(rec arrow.RecordBatch, _ []uint64) error {
				if failed.Load() {
					return errStopped
				}
				rec.Retain()
				return emit(k, rec)
			})
			if errs[k] != nil {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, errStopped) {
			return err
		}
	}
	return nil
}

// errStopped ends a part of MergeParts once another has failed.
var errStopped = errors.New("merge: stopped")

// filesKept is how many open files fitOpenFiles leaves to the rest of
// the process.
const filesKept = 256

// fitOpenFiles bounds fanIn and lanes so that lanes merges of fanIn runs
// (two files a run) fit in limit open files with filesKept to spare
// (limit 0: unknown, no bound); fanIn is at least 2 and lanes 1.
func fitOpenFiles(fanIn, lanes, limit int) (int, int) {
	fanIn, lanes = max(fanIn, 2), max(lanes, 1)
	if limit <= 0 {
		return fanIn, lanes
	}
	most := max((limit-filesKept)/2, 2)
	fanIn = min(fanIn, most)
	return fanIn, min(lanes, max(most/fanIn, 1))
}

// Shrinks plans one pass of merges that brings n runs down to fanIn (or
// as far towards it as one pass can, when n is above fanIn²): the
// half-open ranges of consecutive runs each merged into one, from the
// first run on. It merges only as many runs as the last merge must be
// spared, not all of them: with 480 runs and a fan-in of 256, one merge
// of 225 runs, so that 47% of the rows are written to disk once more
// rather than every row.
func Shrinks(n, fanIn int) [][2]int {
	var out [][2]int
	need := n - fanIn
	for lo := 0; need > 0 && lo < n-1; {
		k := min(fanIn, need+1, n-lo)
		out = append(out, [2]int{lo, lo + k})
		need -= k - 1
		lo += k
	}
	return out
}

// shrink merges each of the ranges of runs into one run in its place, up
// to lanes merges at once. Each merge reads its runs' batches, at most
// fanIn of them at a time, so lanes merges hold lanes times what the
// last merge does.
func (rs *Runs) shrink(ranges [][2]int, lanes, batchRows int) error {
	ws := make([]*runWriter, len(ranges))
	errs := make([]error, len(ranges))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards rs.seq and BeforeWrite in create
		slot = make(chan struct{}, max(lanes, 1))
	)
	for i, r := range ranges {
		slot <- struct{}{}
		wg.Go(func() {
			defer func() { <-slot }()
			mu.Lock()
			w, err := rs.create()
			mu.Unlock()
			if err == nil {
				ws[i] = w
				err = rs.merge(rs.runs[r[0]:r[1]], batchRows, w.write)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	var next []run
	var err error
	at := 0
	for i, r := range ranges {
		next = append(next, rs.runs[at:r[0]]...)
		at = r[1]
		if ws[i] == nil {
			err = cmp.Or(err, errs[i])
			continue
		}
		merged, ferr := rs.close(ws[i], errs[i])
		if err = cmp.Or(err, ferr); ferr == nil {
			next = append(next, merged)
		}
	}
	if err != nil {
		// A failed merge has removed the runs it read: the rows are gone,
		// so every run left, merged or not, is removed too.
		for _, r := range append(next, rs.runs...) {
			os.Remove(r.data)
			os.Remove(r.keys)
		}
		rs.runs = nil
		return err
	}
	rs.runs = append(next, rs.runs[at:]...)
	return nil
}

// Remove deletes every run still on disk.
func (rs *Runs) Remove() {
	for _, r := range rs.runs {
		os.Remove(r.data)
		os.Remove(r.keys)
	}
	rs.runs = nil
}

// merge reads runs in key order and hands emit batches of outRows rows
// (which emit does not own) with their keys. It removes the runs' files.
func (rs *Runs) merge(runs []run, outRows int, emit func(arrow.RecordBatch, []uint64) error) error {
	srcs, err := openSources(runs)
	defer closeSources(srcs)
	if err != nil {
		return err
	}
	cs := make([]*cursor, len(srcs))
	for i, s := range srcs {
		cs[i] = s.cursor(rs.schema, 0, s.rows)
	}
	return mergeCursors(rs.schema, cs, outRows, emit)
}

// mergeCursors merges cs by key into batches of outRows rows for emit,
// and closes them.
func mergeCursors(sc *arrow.Schema, cs []*cursor, outRows int, emit func(arrow.RecordBatch, []uint64) error) error {
	defer func() {
		for _, c := range cs {
			c.close()
		}
	}()
	for _, c := range cs {
		if err := c.next(); err != nil {
			return err
		}
	}
	m := newMerger(sc, cs, outRows)
	defer m.release()
	return m.run(emit)
}

// source is one run open for reading, shared by the cursors over it (its
// files are read at offsets only).
type source struct {
	run
	df, kf *os.File
	rd     *ipc.FileReader
}

// openSources opens runs for reading. Whatever it returns, closeSources
// closes it and removes every run's files.
func openSources(runs []run) ([]*source, error) {
	srcs := make([]*source, len(runs))
	for i, r := range runs {
		srcs[i] = &source{run: r}
	}
	for _, s := range srcs {
		var err error
		if s.df, err = os.Open(s.data); err != nil {
			return srcs, fmt.Errorf("%w: read run: %w", ErrDir, err)
		}
		if s.kf, err = os.Open(s.keys); err != nil {
			return srcs, fmt.Errorf("%w: read run: %w", ErrDir, err)
		}
		if s.rd, err = ipc.NewFileReader(s.df); err != nil {
			return srcs, fmt.Errorf("%w: read run %s: %w", ErrDir, s.data, err)
		}
		if s.rd.NumRecords() != len(s.ends) {
			return srcs, fmt.Errorf("%w: read run %s: %d batches, written %d", ErrDir, s.data, s.rd.NumRecords(), len(s.ends))
		}
	}
	return srcs, nil
}

// closeSources closes the runs' files and removes them.
func closeSources(srcs []*source) {
	for _, s := range srcs {
		if s.rd != nil {
			s.rd.Close()
		}
		for _, f := range []*os.File{s.df, s.kf} {
			if f != nil {
				f.Close()
			}
		}
		os.Remove(s.data)
		os.Remove(s.keys)
	}
}

// keyAt is the key of row i of the run.
func (s *source) keyAt(i int64) (uint64, error) {
	var b [8]byte
	if _, err := s.kf.ReadAt(b[:], 8*i); err != nil {
		return 0, fmt.Errorf("%w: read run keys %s: %w", ErrDir, s.keys, err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// count is how many of the run's keys are below key (or at most key,
// when orEqual).
func (s *source) count(key uint64, orEqual bool) (int64, error) {
	lo, hi := int64(0), s.rows
	for lo < hi {
		mid := lo + (hi-lo)/2
		k, err := s.keyAt(mid)
		if err != nil {
			return 0, err
		}
		if k < key || orEqual && k == key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// split returns how many rows of each run come before rank of the merged
// order (by key, ties to the earlier run): the key of the row at rank is
// found by bisecting the keys, and the rows of that key before rank are
// taken from the earliest runs.
func split(srcs []*source, rank int64) ([]int64, error) {
	at := make([]int64, len(srcs))
	var total int64
	for i, s := range srcs {
		at[i] = s.rows
		total += s.rows
	}
	if rank >= total {
		return at, nil
	}
	// The least key with more than rank rows at or below it.
	lo, hi := uint64(0), ^uint64(0)
	for lo < hi {
		mid := lo + (hi-lo)/2
		_, n, err := counts(srcs, mid, true)
		if err != nil {
			return nil, err
		}
		if n > rank {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	at, below, err := counts(srcs, lo, false)
	if err != nil {
		return nil, err
	}
	upto, _, err := counts(srcs, lo, true)
	if err != nil {
		return nil, err
	}
	need := rank - below
	for i := range at {
		take := min(upto[i]-at[i], need)
		at[i] += take
		need -= take
	}
	return at, nil
}

// counts is how many keys of each run are below key (or at most key,
// when orEqual), and their sum.
func counts(srcs []*source, key uint64, orEqual bool) ([]int64, int64, error) {
	each := make([]int64, len(srcs))
	var n int64
	for i, s := range srcs {
		c, err := s.count(key, orEqual)
		if err != nil {
			return nil, 0, err
		}
		each[i] = c
		n += c
	}
	return each, n, nil
}

// cursor reads rows [at, end) of one run batch by batch.
type cursor struct {
	src     *source
	schema  *arrow.Schema
	at, end int64
	kr      *bufio.Reader
	rec     arrow.RecordBatch // current batch, nil when the range is done
	keys    []uint64
	buf     []byte
	pos     int
	slot    int // index of rec in the merger's batch list, -1 when not in it
}

func (s *source) cursor(sc *arrow.Schema, from, to int64) *cursor {
	return &cursor{src: s, schema: sc, at: from, end: to, slot: -1,
		kr: bufio.NewReaderSize(io.NewSectionReader(s.kf, 8*from, 8*(to-from)), 4<<10)}
}

// next moves to the range's next batch (rec nil at the end).
func (c *cursor) next() error {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
	c.pos, c.slot = 0, -1
	if c.at >= c.end {
		return nil
	}
	ends := c.src.ends
	b := sort.Search(len(ends), func(i int) bool { return ends[i] > c.at })
	if b == len(ends) {
		return fmt.Errorf("%w: read run %s: row %d past its %d rows", ErrDir, c.src.data, c.at, c.src.rows)
	}
	first := int64(0)
	if b > 0 {
		first = ends[b-1]
	}
	rec, err := c.src.rd.RecordBatchAt(b)
	if err != nil {
		return fmt.Errorf("%w: read run %s: %w", ErrDir, c.src.data, err)
	}
	lo, hi := c.at-first, min(c.end, ends[b])-first
	if lo > 0 || hi < rec.NumRows() {
		part := rec.NewSlice(lo, hi)
		rec.Release()
		rec = part
	}
	n := int(rec.NumRows())
	c.buf = append(c.buf[:0], make([]byte, 8*n)...)
	if _, err := io.ReadFull(c.kr, c.buf); err != nil {
		rec.Release()
		return fmt.Errorf("%w: read run keys %s: %w", ErrDir, c.src.keys, err)
	}
	c.keys = c.keys[:0]
	for i := range n {
		c.keys = append(c.keys, binary.LittleEndian.Uint64(c.buf[8*i:]))
	}
	c.at += int64(n)
	c.rec = conformTo(c.schema, rec)
	return nil
}

func (c *cursor) close() {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
}
