package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
)

// appendBatchRows is how many rows one concurrent append commits; a data
// file with more rows than this can only come from a rewrite.
const appendBatchRows = 50

// raceStats counts what the concurrent test saw.
type raceStats struct {
	mu                         sync.Mutex
	appends, appendConflicts   int
	deletes, deleteConflicts   int
	writesLostToExpire         int
	rewrites, rewriteConflicts int
	expires, expireConflicts   int
	acked                      map[int64]bool // ids of appends that committed
	unsure                     map[int64]bool // ids of appends that failed: present at most once
	deleted                    map[int64]bool // ids whose delete committed
	otherErrors                []string
}

func (s *raceStats) String() string {
	return fmt.Sprintf("appends=%d (conflicts %d) deletes=%d (conflicts %d) writer commits that lost their base to expire=%d rewrites=%d (exit 4: %d) expires=%d (conflicts %d)",
		s.appends, s.appendConflicts, s.deletes, s.deleteConflicts, s.writesLostToExpire, s.rewrites, s.rewriteConflicts, s.expires, s.expireConflicts)
}

func (s *raceStats) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.otherErrors = append(s.otherErrors, fmt.Sprintf(format, args...))
}

// TestConcurrentWritersRewriteExpire races four writers appending batches
// and one merge-on-read deleter against repeated `rewrite --curve hilbert`
// and `expire` runs, on the SQLite catalog and on the PostgreSQL-backed SQL
// catalog, for a bounded time (30s each with GEOCOMPACT_LONG=1, else 6s).
// Afterwards every acknowledged append is present exactly once, no id is
// present twice, no acknowledged delete has come back, every rewrite either
// committed or exited 4, and no rewrite output is left unreferenced.
func TestConcurrentWritersRewriteExpire(t *testing.T) {
	if testing.Short() {
		t.Skip("concurrent writers run for seconds; skipped with -short")
	}
	dur := 6 * time.Second
	if longRun() {
		dur = 30 * time.Second
	}
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) {
			spec := c.Spec(t)
			cat := testenv.OpenSpec(t, spec)
			flags := append([]string{"--config", noConfig(t)}, testenv.GlobalFlags(t, spec)...)
			st := raceTable(t, cat, flags, dur, 4)
			if st.rewrites == 0 || st.appends == 0 {
				t.Errorf("the race did not happen: %v", st)
			}
		})
	}
}

// TestDeletesRacingRewrite races merge-on-read deletes of single rows
// against repeated `rewrite --curve hilbert` runs, without appenders, so
// deletes commit often: a deleted row must never come back, whether the
// rewrite read its file before or after the delete.
func TestDeletesRacingRewrite(t *testing.T) {
	if testing.Short() {
		t.Skip("racing deletes run for seconds; skipped with -short")
	}
	dur := 5 * time.Second
	if longRun() {
		dur = 20 * time.Second
	}
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) {
			spec := c.Spec(t)
			cat := testenv.OpenSpec(t, spec)
			flags := append([]string{"--config", noConfig(t)}, testenv.GlobalFlags(t, spec)...)
			st := raceTable(t, cat, flags, dur, 0)
			if st.rewrites == 0 || st.deletes == 0 {
				t.Errorf("the race did not happen: %v", st)
			}
		})
	}
}

// raceTable generates a table and races writers appenders, one
// merge-on-read deleter, a rewrite loop and an expire loop against it for
// dur, then checks what every acknowledged write promised.
func raceTable(t *testing.T, cat catalog.Catalog, flags []string, dur time.Duration, writers int) *raceStats {
	needCommand(t, "expire")
	const name = "race.pings"
	const initial = 4000
	ctx := t.Context()
	if _, err := bench.Generate(ctx, cat, bench.GenerateConfig{
		Table: name, Rows: initial, Commits: 8, Seed: 11,
		Properties: map[string]string{
			table.WriteDeleteModeKey: table.WriteModeMergeOnRead,
			// Replays of a lost commit wait at most half a second, so
			// every writer gets turns within the test's time.
			table.CommitMaxRetryWaitMsKey: "500",
		},
	}); err != nil {
		t.Fatal(err)
	}
	st := &raceStats{acked: map[int64]bool{}, unsure: map[int64]bool{}, deleted: map[int64]bool{}}
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() { appendLoop(t, cat, name, w, deadline, st) })
	}
	wg.Go(func() { deleteLoop(t, cat, name, initial, func() bool { return time.Now().Before(deadline) }, nil, st) })
	wg.Go(func() {
		for time.Now().Before(deadline) {
			r := runChild(t, append(flags, "rewrite", "--table", name, "--curve", "hilbert", "--option", "rewrite-all=true")...)
			st.mu.Lock()
			st.rewrites++
			switch r.Code {
			case exitOK:
			case exitConflict:
				st.rewriteConflicts++
			default:
				st.otherErrors = append(st.otherErrors, fmt.Sprintf("rewrite exit %d: %s", r.Code, strings.TrimSpace(r.Stderr)))
			}
			st.mu.Unlock()
		}
	})
	wg.Go(func() {
		for time.Now().Before(deadline) {
			expireOnce(t, flags, name, st)
			time.Sleep(300 * time.Millisecond)
		}
	})
	wg.Wait()
	t.Logf("SUMMARY %v", st)
	for _, e := range st.otherErrors {
		t.Error(e)
	}

	// A final rewrite, alone, must succeed.
	if r := runChild(t, append(flags, "rewrite", "--table", name, "--curve", "hilbert", "--option", "rewrite-all=true")...); r.Code != exitOK {
		t.Fatalf("final rewrite: exit %d, stderr %q", r.Code, r.Stderr)
	}
	tbl := loadTable(t, cat, name)
	d := digest(t, tbl)
	for id, n := range d.IDs {
		if n > 1 {
			t.Errorf("id %d is present %d times", id, n)
		}
	}
	for id := range st.acked {
		if d.IDs[id] != 1 {
			t.Errorf("appended id %d is present %d times, want 1", id, d.IDs[id])
		}
	}
	for id := range int64(initial) {
		want := 1
		if st.deleted[id] {
			want = 0
		}
		if d.IDs[id] != want {
			t.Errorf("original id %d is present %d times, want %d (deleted: %v)", id, d.IDs[id], want, st.deleted[id])
		}
	}
	if want := int64(initial - len(st.deleted) + len(st.acked)); d.Rows < want || d.Rows > want+int64(len(st.unsure)) {
		t.Errorf("table has %d rows, want %d (+ up to %d from appends that reported failure)", d.Rows, want, len(st.unsure))
	}
	missing, err := reliability.MissingFiles(ctx, tbl)
	if err != nil || len(missing) > 0 {
		t.Fatalf("missing files %v (err %v)", missing, err)
	}
	checkNoRewriteLeftovers(t, tbl)
	return st
}

// appendLoop appends batches of fresh ids until the deadline, each through a
// freshly loaded table.
func appendLoop(t *testing.T, cat catalog.Catalog, name string, w int, deadline time.Time, st *raceStats) {
	rng := rand.New(rand.NewPCG(uint64(w), 99))
	next := int64(w+1) * 100_000_000
	for b := 0; time.Now().Before(deadline); b++ {
		tbl, err := catalogs.LoadTable(t.Context(), cat, name)
		if err != nil {
			st.fail("writer %d: load: %v", w, err)
			return
		}
		ids := make([]int64, appendBatchRows)
		for i := range ids {
			ids[i] = next
			next++
		}
		rec := pointBatch(t, tbl, ids, rng)
		rdr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		_, err = tbl.Append(t.Context(), rdr, iceberg.Properties{"geocompact.test.writer": fmt.Sprint(w)})
		rdr.Release()
		rec.Release()
		st.mu.Lock()
		switch {
		case err == nil:
			st.appends++
			for _, id := range ids {
				st.acked[id] = true
			}
		case catalogs.IsRetryable(err):
			st.appendConflicts++
			for _, id := range ids {
				st.unsure[id] = true
			}
		case lostToExpire(err):
			st.writesLostToExpire++
			for _, id := range ids {
				st.unsure[id] = true
			}
		default:
			st.otherErrors = append(st.otherErrors, fmt.Sprintf("writer %d: append: %v", w, err))
			for _, id := range ids {
				st.unsure[id] = true
			}
		}
		st.mu.Unlock()
		time.Sleep(250 * time.Millisecond)
	}
}

// deleteLoop deletes original rows one id at a time with merge-on-read
// deletes while more says so, trying an id again after a conflict, and
// calls pace (when set) after each try.
func deleteLoop(t *testing.T, cat catalog.Catalog, name string, initial int64, more func() bool, pace func(), st *raceStats) {
	rng := rand.New(rand.NewPCG(7, 7))
	order := rng.Perm(int(initial))
	for i := 0; more() && i < len(order); {
		if i > 0 && pace != nil {
			pace()
		}
		id := int64(order[i])
		tbl, err := catalogs.LoadTable(t.Context(), cat, name)
		if err != nil {
			st.fail("deleter: load: %v", err)
			return
		}
		_, err = tbl.Delete(t.Context(), iceberg.EqualTo(iceberg.Reference("id"), id), nil)
		st.mu.Lock()
		switch {
		case err == nil:
			st.deletes++
			st.deleted[id] = true
			i++ // else try the same id again
		case catalogs.IsRetryable(err):
			st.deleteConflicts++
			if st.deleteConflicts == 1 {
				t.Logf("first delete conflict: %v", err)
			}
		case lostToExpire(err):
			st.writesLostToExpire++
		default:
			st.otherErrors = append(st.otherErrors, fmt.Sprintf("deleter: delete id %d: %v", id, err))
		}
		st.mu.Unlock()
	}
}

// lostToExpire recognises iceberg-go's refusal to commit a plain append or
// delete whose base snapshot, or the manifests of a concurrent snapshot it
// validates against, an expire removed meanwhile. Nothing is committed;
// the test counts these apart from conflicts.
func lostToExpire(err error) bool {
	s := err.Error()
	return strings.Contains(s, "commit diverged") || strings.Contains(s, "not found in main ancestry") ||
		(strings.Contains(s, "concurrent snapshot") && strings.Contains(s, "no such file"))
}

// expireOnce expires all but the last ten snapshots older than one second,
// through the expire command.
func expireOnce(t *testing.T, flags []string, name string, st *raceStats) {
	r := runChild(t, append(flags, "expire", "--table", name, "--older-than", "1s", "--retain-last", "10", "--force")...)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.expires++
	switch r.Code {
	case exitOK:
	case exitConflict:
		st.expireConflicts++
	default:
		st.otherErrors = append(st.otherErrors, fmt.Sprintf("expire exit %d: %s", r.Code, strings.TrimSpace(r.Stderr)))
	}
}

// checkNoRewriteLeftovers fails when an unreferenced data file holds more
// rows than one append batch: only a rewrite writes such files, so one left
// behind means a failed rewrite did not clean up.
func checkNoRewriteLeftovers(t *testing.T, tbl *table.Table) {
	t.Helper()
	un, err := reliability.Unreferenced(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range un {
		if !strings.HasSuffix(p, ".parquet") {
			continue
		}
		n++
		rows, cols := parquetShape(t, p)
		if rows > appendBatchRows && cols.has("geometry") {
			t.Errorf("a rewrite left its output %s (%d rows) unreferenced", filepath.Base(p), rows)
		}
	}
	t.Logf("%d unreferenced data or delete files, none from a rewrite", n)
}

type columnSet []string

func (c columnSet) has(name string) bool {
	for _, n := range c {
		if n == name {
			return true
		}
	}
	return false
}

// parquetShape returns a local Parquet file's row count and top-level
// column names.
func parquetShape(t testing.TB, path string) (int64, columnSet) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Close()
	var cols columnSet
	sc := r.MetaData().Schema
	for i := range sc.Root().NumFields() {
		cols = append(cols, sc.Root().Field(i).Name())
	}
	return r.NumRows(), cols
}

// pointBatch builds a batch of tbl's schema: one random WKB point per id,
// with its bbox columns when the table has them.
func pointBatch(t testing.TB, tbl *table.Table, ids []int64, rng *rand.Rand) arrow.RecordBatch {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		x, y := rng.Float64()*360-180, rng.Float64()*180-90
		for i, f := range sc.Fields() {
			fb := b.Field(i)
			switch f.Name {
			case "id":
				fb.(*array.Int64Builder).Append(id)
			case "ts":
				fb.(*array.TimestampBuilder).Append(arrow.Timestamp(time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC).UnixMicro() + id%1000))
			case "device_id":
				fb.(*array.Int32Builder).Append(int32(id % 10000))
			case "geometry":
				wkb := make([]byte, 21)
				wkb[0] = 1
				binary.LittleEndian.PutUint32(wkb[1:], 1)
				binary.LittleEndian.PutUint64(wkb[5:], math.Float64bits(x))
				binary.LittleEndian.PutUint64(wkb[13:], math.Float64bits(y))
				fb.(*array.BinaryBuilder).Append(wkb)
			case "bbox_minx", "bbox_maxx":
				fb.(*array.Float64Builder).Append(x)
			case "bbox_miny", "bbox_maxy":
				fb.(*array.Float64Builder).Append(y)
			default:
				fb.AppendNull()
			}
		}
	}
	return b.NewRecordBatch()
}
