package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// Shape of the ingest kill test's batch: files of random points with
// unique ids, file i holding ids [i*ingestCrashRowsPer, (i+1)*ingestCrashRowsPer).
const (
	ingestCrashFiles   = 8
	ingestCrashRowsPer = 3000
)

// ingestCrashVariants are the ingests the kill test kills. pre is how
// many of the batch's files an earlier ingest appended (the batch skips
// them): with pre 0 the killed ingest creates the table.
var ingestCrashVariants = []struct {
	name string
	pre  int
	args []string
}{
	{"create", 0, []string{"--create"}},
	{"append-partitioned", 2, nil},
}

// ingestCrashColumns are the input files' columns, in the order rows and
// digests are taken in (a partitioned table reads region elsewhere).
var ingestCrashColumns = []string{"id", "region", "geometry", "bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy"}

// writeIngestCrashFile writes file i of the batch as GeoParquet under dir.
func writeIngestCrashFile(t *testing.T, dir string, i int, rng *rand.Rand) string {
	t.Helper()
	f64 := arrow.PrimitiveTypes.Float64
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "geometry", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "bbox_minx", Type: f64, Nullable: true}, {Name: "bbox_miny", Type: f64, Nullable: true},
		{Name: "bbox_maxx", Type: f64, Nullable: true}, {Name: "bbox_maxy", Type: f64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for r := range ingestCrashRowsPer {
		x, y := rng.Float64()*360-180, rng.Float64()*180-90
		b.Field(0).(*array.Int64Builder).Append(int64(i*ingestCrashRowsPer + r))
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("r%d", r%3))
		b.Field(2).(*array.BinaryBuilder).Append(validatetest.Point(x, y))
		for k, v := range []float64{x, y, x, y} {
			b.Field(3 + k).(*array.Float64Builder).Append(v)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	p := filepath.Join(dir, fmt.Sprintf("batch-%02d.parquet", i))
	out, err := os.Create(p)
	require.NoError(t, err)
	fw, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(1000)), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, fw.AppendKeyValueMetadata("geo", validatetest.Geo("")))
	require.NoError(t, fw.Write(rec))
	require.NoError(t, fw.Close())
	return p
}

// ingestCrashBatch is the batch a killed ingest appends and what the
// table must read once it is in.
type ingestCrashBatch struct {
	files  []string
	appIDs []string // each file's txn appId
	rows   []string // every row of every file, sorted (ingestRowString)
	digest verify.Digest
}

// newIngestCrashBatch writes the batch's files under dir, seeded, and
// reads back its expected rows and digest.
func newIngestCrashBatch(t *testing.T, dir string, seed uint64) ingestCrashBatch {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	b := ingestCrashBatch{digest: verify.NewDigest()}
	for i := range ingestCrashFiles {
		p := writeIngestCrashFile(t, dir, i, rng)
		raw, err := os.ReadFile(p)
		require.NoError(t, err)
		sum := sha256.Sum256(raw)
		b.files = append(b.files, p)
		b.appIDs = append(b.appIDs, deltatable.TxnAppID(hex.EncodeToString(sum[:])))
		eachParquetRecord(t, p, func(rec arrow.RecordBatch) { b.rows = appendIngestRows(t, b.rows, &b.digest, rec) })
	}
	slices.Sort(b.rows)
	require.Len(t, b.rows, ingestCrashFiles*ingestCrashRowsPer)
	return b
}

// eachParquetRecord calls f with every record of the Parquet file p.
func eachParquetRecord(t *testing.T, p string, f func(arrow.RecordBatch)) {
	t.Helper()
	pf, err := file.OpenParquetFile(p, false)
	require.NoError(t, err)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	require.NoError(t, err)
	tbl, err := fr.ReadTable(t.Context())
	require.NoError(t, err)
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1024)
	defer tr.Release()
	for tr.Next() {
		f(tr.RecordBatch())
	}
}

// appendIngestRows appends rec's rows to rows, each as its
// ingestCrashColumns values joined by tabs, and folds them into d with
// the columns in that order.
func appendIngestRows(t *testing.T, rows []string, d *verify.Digest, rec arrow.RecordBatch) []string {
	t.Helper()
	cols := make([]arrow.Array, len(ingestCrashColumns))
	fields := make([]arrow.Field, len(ingestCrashColumns))
	for j, name := range ingestCrashColumns {
		idx := rec.Schema().FieldIndices(name)
		require.Len(t, idx, 1, "column %s", name)
		cols[j], fields[j] = rec.Column(idx[0]), rec.Schema().Field(idx[0])
	}
	for r := range int(rec.NumRows()) {
		vals := make([]string, len(cols))
		for j, c := range cols {
			vals[j] = c.ValueStr(r)
		}
		rows = append(rows, strings.Join(vals, "\t"))
	}
	ordered := array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
	defer ordered.Release()
	geom, bbox := verify.Columns(ordered.Schema(), "geometry")
	require.NoError(t, d.Add(ordered, geom, bbox))
	return rows
}

// batchTableRows is every row the Delta table at dir reads, as
// appendIngestRows renders them, sorted, and their digest.
func batchTableRows(t *testing.T, dir string) ([]string, verify.Digest) {
	t.Helper()
	d := verify.NewDigest()
	rows := []string{}
	eachDeltaRecord(t, dir, func(rec arrow.RecordBatch) { rows = appendIngestRows(t, rows, &d, rec) })
	slices.Sort(rows)
	return rows, d
}

// rowsOfFiles is the rows of the first n files of the batch, sorted.
func (b ingestCrashBatch) rowsOfFiles(n int) []string {
	out := []string{}
	for _, r := range b.rows {
		id, _ := strconv.Atoi(r[:strings.IndexByte(r, '\t')])
		if id < n*ingestCrashRowsPer {
			out = append(out, r)
		}
	}
	return out
}

// TestIngestDeltaSurvivesSIGKILL runs ingest --delta of a batch of files
// (creating the table, and appending to a partitioned table that already
// holds some of them) as a child process and SIGKILLs it at seeded random
// points: half of the kills anywhere in a calibration run's duration, half
// in its writing and committing phase, timed from the first data file it
// creates (reading and validating take most of an ingest). After every
// kill the table reads, per file, all of its rows or none, the batch's
// files all or none of them (one commit, one txn per file), and a txn
// exactly for each file whose rows it reads; a killed create leaves no
// version at all or a complete one. A rerun of the same ingest then
// completes with exactly the batch's rows and digest, a second rerun
// appends nothing, and a forced vacuum (the files aged past
// delta.MinTempFileAge) leaves exactly the referenced files.
// GEOCOMPACT_LONG=1 kills 10 times per variant; otherwise once, in the
// writing phase.
func TestIngestDeltaSurvivesSIGKILL(t *testing.T) {
	kills, seed, rng := crashSchedule(t, 10)
	batch := newIngestCrashBatch(t, t.TempDir(), seed)
	counts := map[crashOutcome]int{}
	for _, v := range ingestCrashVariants {
		t.Run(v.name, func(t *testing.T) {
			root := t.TempDir()
			dir, pristine := filepath.Join(root, "table"), filepath.Join(root, "pristine")
			base := prepareIngestCrashTable(t, dir, batch, v.pre)
			copyTree(t, dir, pristine)
			before := tableFiles(t, dir)
			args := append(append([]string{"--config", noConfig(t), "ingest", "--delta", dir}, v.args...), batch.files...)
			took, writing := calibrateIngestCrash(t, dir, args, batch, v.pre, before)
			killLoop(rng, kills, took, func(i int, delay time.Duration) bool {
				restoreTree(t, pristine, dir)
				c := startWatched(t, args...)
				inWriting := kills == 1 || i%2 == 1
				if inWriting {
					// The same stratified fraction, of the writing phase.
					delay = time.Duration(float64(delay) / float64(took) * float64(writing))
					if !c.waitForWrite(t, dir, before) {
						delay = 0
					}
				}
				out := c.killAfter(t, delay)
				got := checkIngestAfterKill(t, dir, batch, v.pre, base)
				if out != finishedBeforeKill {
					out = got
				}
				counts[out]++
				t.Logf("attempt %d after %v (from the first write: %v): %s", i, delay.Round(time.Millisecond), inWriting, out)
				rerunIngest(t, dir, args, batch, v.pre, got == killedAfterCommit)
				return out != finishedBeforeKill
			})
		})
	}
	t.Logf("SUMMARY outcomes %v, rows checked per run: %d", counts, len(batch.rows))
}

// watchedChild is a geocompact child process the test watches and kills.
type watchedChild struct {
	done   chan error
	kill   func() error
	errOut *bytes.Buffer
}

// startWatched starts geocompact with args in a child process.
func startWatched(t *testing.T, args ...string) *watchedChild {
	t.Helper()
	cmd := childCLI(t.Context(), args...)
	c := &watchedChild{done: make(chan error, 1), errOut: &bytes.Buffer{}}
	cmd.Stderr = c.errOut
	require.NoError(t, cmd.Start())
	c.kill = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	go func() { c.done <- cmd.Wait() }()
	return c
}

// waitForWrite waits until a file not in before appears under the table
// directory dir (outside its log), and reports false when the child
// exited first, failing the test if it failed.
func (c *watchedChild) waitForWrite(t *testing.T, dir string, before map[string]bool) bool {
	t.Helper()
	return c.waitFor(t, func() bool { return newFileUnder(dir, before) })
}

// waitFor waits until cond holds, looking every millisecond, and reports
// false when the child exited first, failing the test if it failed.
func (c *watchedChild) waitFor(t *testing.T, cond func() bool) bool {
	t.Helper()
	for {
		select {
		case err := <-c.done:
			require.NoError(t, err, "the child failed on its own: %s", c.errOut)
			c.done <- nil // for killAfter
			return false
		case <-time.After(time.Millisecond):
		}
		if cond() {
			return true
		}
	}
}

// newFileUnder reports whether dir holds, outside its log, a file that
// before does not; files vanishing while it looks are no matter.
func newFileUnder(dir string, before map[string]bool) bool {
	found := false
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		switch {
		case err != nil || found:
			return filepath.SkipAll
		case d.IsDir() && rel == delta.LogDir:
			return filepath.SkipDir
		case !d.IsDir() && !before[filepath.ToSlash(rel)]:
			found = true
		}
		return nil
	})
	return found
}

// killAfter SIGKILLs the child after delay, or reports finishedBeforeKill
// when it exited by itself first, failing the test if it failed.
func (c *watchedChild) killAfter(t *testing.T, delay time.Duration) crashOutcome {
	t.Helper()
	select {
	case err := <-c.done:
		require.NoError(t, err, "the child failed on its own: %s", c.errOut)
		return finishedBeforeKill
	case <-time.After(delay):
	}
	_ = c.kill()
	err := <-c.done
	if ee, ok := errors.AsType[*exec.ExitError](err); err == nil || (ok && ee.ExitCode() >= 0) {
		require.NoError(t, err, "the child failed on its own: %s", c.errOut)
		return finishedBeforeKill // it exited in the instant before the signal
	}
	return ""
}

// prepareIngestCrashTable makes the directory dir and, when pre > 0, a
// table there partitioned by region holding the batch's first pre files.
// It returns the table's latest version, -1 for none.
func prepareIngestCrashTable(t *testing.T, dir string, b ingestCrashBatch, pre int) int64 {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if pre == 0 {
		return -1
	}
	r := runCLI(t, "", false, append([]string{"ingest", "--delta", dir, "--create", "--partition-by", "region"}, b.files[:pre]...)...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	rows, _ := batchTableRows(t, dir)
	require.Equal(t, b.rowsOfFiles(pre), rows)
	return latestVersion(t, dir)
}

// calibrateIngestCrash runs the ingest to completion on the table at dir
// (whose files were before) and returns how long it took and how long
// after it created its first data file it ended.
func calibrateIngestCrash(t *testing.T, dir string, args []string, b ingestCrashBatch, pre int, before map[string]bool) (took, writing time.Duration) {
	t.Helper()
	start := time.Now()
	c := startWatched(t, args...)
	seen := c.waitForWrite(t, dir, before)
	wrote := time.Now()
	require.NoError(t, <-c.done, "calibration ingest: %s", c.errOut)
	took, writing = time.Since(start), time.Since(wrote)
	if !seen { // it wrote and committed between two looks
		writing = took / 10
	}
	rows, _ := batchTableRows(t, dir)
	require.Equal(t, b.rows, rows)
	t.Logf("calibration: %v, the last %v of it writing and committing", took.Round(time.Millisecond), writing.Round(time.Millisecond))
	return took, writing
}

// ingestLatestVersion is the latest version of the table at dir, -1 when
// its log holds no commit.
func ingestLatestVersion(t *testing.T, dir string) int64 {
	t.Helper()
	commits, err := filepath.Glob(filepath.Join(dir, delta.LogDir, "[0-9]*.json"))
	require.NoError(t, err)
	if len(commits) == 0 {
		return -1
	}
	return latestVersion(t, dir)
}

// checkIngestAfterKill checks the table a killed ingest left at dir (base
// its version before, -1 for none) and says where the kill landed: at
// most one new version; the rows of the first pre files and, when that
// version landed, of all the batch's files; a txn for exactly the files
// whose rows the table reads, recorded by the version that added them.
func checkIngestAfterKill(t *testing.T, dir string, b ingestCrashBatch, pre int, base int64) crashOutcome {
	t.Helper()
	v := ingestLatestVersion(t, dir)
	committed := v > base
	if committed {
		require.Equal(t, base+1, v, "the batch is one commit")
	} else {
		require.Equal(t, base, v)
	}
	var ref map[string]bool
	if v >= 0 {
		rows, _ := batchTableRows(t, dir)
		want := b.rowsOfFiles(pre)
		if committed {
			want = b.rows
		}
		require.Equal(t, want, rows, "every file's rows, or none of them")
		tbl, err := delta.OpenLocal(dir)
		require.NoError(t, err)
		txns := deltatest.Snapshot(t, tbl).Txns
		for i, id := range b.appIDs {
			got, ok := txns[id]
			require.Equal(t, i < pre || committed, ok, "the txn of file %d", i)
			if ok && i >= pre {
				assert.Equal(t, v, got, "file %d's txn names its version", i)
			}
		}
		ref = referencedFiles(t, dir)
	}
	unreferenced := 0
	for p := range tableFiles(t, dir) {
		if !ref[p] {
			unreferenced++
		}
	}
	switch {
	case committed:
		return killedAfterCommit
	case unreferenced == 0:
		return killedBeforeWriting
	}
	return killedBeforeCommit
}

// rerunIngest runs the ingest again after a kill: it appends the files
// not yet in (none when the killed run committed), the table then reads
// exactly the batch's rows and digest, a second rerun appends nothing,
// and a forced vacuum leaves exactly the referenced files.
func rerunIngest(t *testing.T, dir string, args []string, b ingestCrashBatch, pre int, committed bool) {
	t.Helper()
	want := ingestCrashFiles - pre
	if committed {
		want = 0
	}
	var version int64
	for run, files := range []int{want, 0} {
		r := runChild(t, append(args, "--json")...)
		require.Equal(t, exitOK, r.Code, "rerun %d: %s", run, r.Stderr)
		var res deltaIngestJSON
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
		assert.Equal(t, files, res.Files, "rerun %d appends the files not yet in", run)
		assert.Len(t, res.Skipped, ingestCrashFiles-files, "rerun %d skips the files already in", run)
		if run == 1 {
			assert.Equal(t, version, res.Version, "a second rerun commits nothing")
		}
		version = res.Version
		rows, d := batchTableRows(t, dir)
		require.Equal(t, b.rows, rows, "rerun %d", run)
		require.Empty(t, b.digest.Diff(d), "rerun %d: the table's digest", run)
	}
	vacuumAfterKill(t, dir)
	assert.Equal(t, referencedFiles(t, dir), tableFiles(t, dir), "vacuum leaves exactly the referenced files")
	rows, _ := batchTableRows(t, dir)
	require.Equal(t, b.rows, rows, "the table reads the batch after vacuum")
}
