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
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/geocompact/geocompact/cluster"
)

// Runs holds the sorted runs of one group on disk: each run is the rows
// of a stretch of the input, in key order, as an uncompressed Arrow IPC
// file of small batches (LZ4 saved a tenth of the bytes of bbox doubles
// and WKB points, 114 MB against 128 MB for 1.5M points, for about 0.4 s
// of CPU), beside a file of the rows' keys (little-endian uint64s, one
// per row, in the same order). Merge reads them back in key order.
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
}

// NewRuns returns an empty set of runs of rows of schema, spilled into dir.
func NewRuns(dir *Dir, schema *arrow.Schema) *Runs {
	return &Runs{dir: dir.path, schema: schema}
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
	ipc    *ipc.Writer
	kw     *bufio.Writer
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
	w.ipc = ipc.NewWriter(w.df, ipc.WithSchema(rs.schema))
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
	if ferr := w.kw.Flush(); err == nil {
		err = ferr
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
	fanIn, lanes = fitOpenFiles(fanIn, lanes, openFileLimit())
	for len(rs.runs) > fanIn {
		if err := rs.shrink(Shrinks(len(rs.runs), fanIn), lanes, batchRows); err != nil {
			return err
		}
	}
	err := rs.merge(rs.runs, outRows, func(rec arrow.RecordBatch, _ []uint64) error {
		rec.Retain()
		return emit(rec)
	})
	rs.runs = nil
	return err
}

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
	cs := make([]*cursor, 0, len(runs))
	defer func() {
		for _, c := range cs {
			c.close()
		}
	}()
	for _, r := range runs {
		c, err := openCursor(r, rs.schema)
		if err != nil {
			return err
		}
		cs = append(cs, c)
		if err := c.next(); err != nil {
			return err
		}
	}
	m := newMerger(rs.schema, cs, outRows)
	defer m.release()
	return m.run(emit)
}

// cursor reads one run batch by batch.
type cursor struct {
	r      run
	df, kf *os.File
	schema *arrow.Schema
	rd     *ipc.Reader
	kr     *bufio.Reader
	rec    arrow.RecordBatch // current batch, nil when the run is done
	keys   []uint64
	buf    []byte
	pos    int
	slot   int // index of rec in the merger's batch list, -1 when not in it
}

func openCursor(r run, sc *arrow.Schema) (*cursor, error) {
	c := &cursor{r: r, slot: -1}
	var err error
	if c.df, err = os.Open(r.data); err != nil {
		return nil, fmt.Errorf("%w: read run: %w", ErrDir, err)
	}
	if c.kf, err = os.Open(r.keys); err != nil {
		c.df.Close()
		return nil, fmt.Errorf("%w: read run: %w", ErrDir, err)
	}
	c.schema = sc
	if c.rd, err = ipc.NewReader(c.df); err != nil {
		c.kf.Close()
		c.df.Close()
		return nil, fmt.Errorf("%w: read run %s: %w", ErrDir, r.data, err)
	}
	c.kr = bufio.NewReaderSize(c.kf, 16<<10)
	return c, nil
}

// next moves to the run's next batch (rec nil at the end).
func (c *cursor) next() error {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
	c.pos, c.slot = 0, -1
	if !c.rd.Next() {
		if err := c.rd.Err(); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: read run %s: %w", ErrDir, c.r.data, err)
		}
		return nil
	}
	rec := c.rd.RecordBatch()
	rec.Retain()
	n := int(rec.NumRows())
	c.buf = append(c.buf[:0], make([]byte, 8*n)...)
	if _, err := io.ReadFull(c.kr, c.buf); err != nil {
		rec.Release()
		return fmt.Errorf("%w: read run keys %s: %w", ErrDir, c.r.keys, err)
	}
	c.keys = c.keys[:0]
	for i := range n {
		c.keys = append(c.keys, binary.LittleEndian.Uint64(c.buf[8*i:]))
	}
	c.rec = conformTo(c.schema, rec)
	return nil
}

func (c *cursor) close() {
	if c.rec != nil {
		c.rec.Release()
		c.rec = nil
	}
	if c.rd != nil {
		c.rd.Release()
		c.rd = nil
	}
	if c.df != nil {
		c.df.Close()
		c.kf.Close()
		os.Remove(c.r.data)
		os.Remove(c.r.keys)
		c.df = nil
	}
}
