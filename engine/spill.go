package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// EnvSpillDir names the environment variable that sets the spill
// directory when the spill-dir option is not given.
const EnvSpillDir = "GEOCOMPACT_SPILL_DIR"

// ErrSpill marks a spilled sort that could not use its spill directory:
// missing, not writable, or too small. Nothing is committed.
var ErrSpill = errors.New("engine: spill")

// spillPrefix starts the name of every run's spill directory, so that a
// later run (or orphans) can recognise abandoned ones.
const spillPrefix = "geocompact-spill-"

// spillRoot returns where spill directories go: the spill-dir option,
// else $GEOCOMPACT_SPILL_DIR, else the OS temp directory. Spills are
// always local, whatever the warehouse.
func spillRoot(opt string) string {
	if opt != "" {
		return opt
	}
	if env := os.Getenv(EnvSpillDir); env != "" {
		return env
	}
	return os.TempDir()
}

// spillDir is one run's private directory of spill files. While the run
// lives it holds an exclusive lock on the directory's lock file; the lock
// dies with the process, so a directory whose lock can be taken belongs
// to a run that was killed.
type spillDir struct {
	path string
	lock *os.File
}

// openSpillDir creates a fresh spill directory under root, after removing
// the directories that killed runs left there.
func openSpillDir(root string) (*spillDir, []string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: spill directory %s: %w; set the spill-dir option or %s to an existing local directory", ErrSpill, root, err, EnvSpillDir)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%w: spill directory %s is not a directory; set the spill-dir option or %s to a local directory", ErrSpill, root, EnvSpillDir)
	}
	removed := CleanAbandonedSpills(root)
	path, err := os.MkdirTemp(root, spillPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, removed, fmt.Errorf("%w: cannot write in spill directory %s: %w; set the spill-dir option or %s to a writable local directory", ErrSpill, root, err, EnvSpillDir)
	}
	lock, err := os.Create(filepath.Join(path, "lock"))
	if err == nil {
		err = lockFile(lock)
	}
	if err != nil {
		os.RemoveAll(path)
		return nil, removed, fmt.Errorf("%w: lock spill directory %s: %w", ErrSpill, path, err)
	}
	fmt.Fprintf(lock, "pid %d\nstarted %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	return &spillDir{path: path, lock: lock}, removed, nil
}

// Close removes the directory and everything in it.
func (d *spillDir) Close() error {
	err := os.RemoveAll(d.path)
	d.lock.Close()
	return err
}

// CleanAbandonedSpills removes the spill directories under root that no
// live run holds (their run was killed) and returns their paths. A
// directory that a running rewrite holds is never touched.
func CleanAbandonedSpills(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), spillPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
		if err != nil {
			// No lock file: a run killed between creating the directory
			// and its lock, unless it is brand new.
			if info, serr := e.Info(); serr != nil || time.Since(info.ModTime()) < time.Minute {
				continue
			}
		} else {
			held := tryLockFile(f) != nil
			f.Close()
			if held {
				continue
			}
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// bucketFiles writes and reads the spill files of one group's buckets:
// each flush of a bucket is one Arrow IPC stream, LZ4-compressed, in a
// segment file of its own; a bucket is read back segment by segment in
// the order written.
type bucketFiles struct {
	dir      string
	schema   *arrow.Schema
	segments [][]string // per bucket
	bytes    []int64    // per bucket: Arrow bytes written (what loading costs)
	rows     []int64
	disk     int64 // bytes on disk
}

func newBucketFiles(dir string, schema *arrow.Schema, buckets int) *bucketFiles {
	return &bucketFiles{dir: dir, schema: schema, segments: make([][]string, buckets),
		bytes: make([]int64, buckets), rows: make([]int64, buckets)}
}

// write appends recs to bucket b as one new segment.
func (bf *bucketFiles) write(b int, recs []arrow.RecordBatch) error {
	path := filepath.Join(bf.dir, fmt.Sprintf("b%05d-%06d.arrows", b, len(bf.segments[b])))
	full := func(err error) error {
		return fmt.Errorf("%w: write %s: %w (is the spill directory full? set the spill-dir option or %s)", ErrSpill, path, err, EnvSpillDir)
	}
	if testHookSpillWrite != nil {
		if err := testHookSpillWrite(); err != nil {
			return full(err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return full(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(bf.schema), ipc.WithLZ4())
	for _, r := range recs {
		if err = w.Write(r); err != nil {
			break
		}
		bf.bytes[b] += recordBytes(r)
		bf.rows[b] += r.NumRows()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if st, serr := f.Stat(); serr == nil {
		bf.disk += st.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	bf.segments[b] = append(bf.segments[b], path)
	if err != nil {
		return full(err)
	}
	return nil
}

// read loads every row of bucket b, in the order written.
func (bf *bucketFiles) read(b int) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	fail := func(err error) ([]arrow.RecordBatch, error) {
		for _, r := range out {
			r.Release()
		}
		return nil, fmt.Errorf("%w: read bucket %d: %w", ErrSpill, b, err)
	}
	for _, path := range bf.segments[b] {
		f, err := os.Open(path)
		if err != nil {
			return fail(err)
		}
		rd, err := ipc.NewReader(f)
		if err != nil {
			f.Close()
			return fail(err)
		}
		for rd.Next() {
			rec := rd.RecordBatch()
			rec.Retain()
			out = append(out, conformTo(bf.schema, rec))
		}
		err = rd.Err()
		rd.Release()
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(err)
		}
	}
	return out, nil
}

// remove deletes bucket b's segments once they are loaded.
func (bf *bucketFiles) remove(b int) {
	for _, p := range bf.segments[b] {
		os.Remove(p)
	}
	bf.segments[b] = nil
}

// conformTo returns rec with schema sc: IPC may hand back an extension
// column as its storage type, which is wrapped again. It takes ownership
// of rec.
func conformTo(sc *arrow.Schema, rec arrow.RecordBatch) arrow.RecordBatch {
	if rec.Schema().Equal(sc) {
		return rec
	}
	defer rec.Release()
	cols := make([]arrow.Array, sc.NumFields())
	for i := range cols {
		col := rec.Column(i)
		if ext, ok := sc.Field(i).Type.(arrow.ExtensionType); ok {
			if _, isExt := col.(array.ExtensionArray); !isExt {
				cols[i] = array.NewExtensionArrayWithStorage(ext, col)
				defer cols[i].Release()
				continue
			}
		}
		cols[i] = col
	}
	return array.NewRecordBatch(sc, cols, rec.NumRows())
}

// testHookSpillWrite, when set, runs before every spill segment is
// written; an error fails the write as a full disk would.
var testHookSpillWrite func() error

// freeSpace probes the free space of a spill directory (replaced in tests).
var freeSpace = freeBytes
