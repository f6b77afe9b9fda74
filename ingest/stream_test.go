package ingest_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// peakAllocator is an arrow allocator that records the most bytes it had
// out at once and the bytes it handed out in all.
type peakAllocator struct {
	mem              memory.Allocator
	mu               sync.Mutex
	cur, peak, total int64
}

func (a *peakAllocator) Allocate(n int) []byte {
	a.add(n)
	return a.mem.Allocate(n)
}

func (a *peakAllocator) Reallocate(n int, b []byte) []byte {
	a.add(n - len(b))
	return a.mem.Reallocate(n, b)
}

func (a *peakAllocator) Free(b []byte) {
	a.add(-len(b))
	a.mem.Free(b)
}

func (a *peakAllocator) add(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur += int64(n)
	a.peak = max(a.peak, a.cur)
	if n > 0 {
		a.total += int64(n)
	}
}

// TestRunStreamsRowGroups ingests a file of 800 row groups with a small
// memory budget, into an Iceberg and a Delta table: the rows must flow
// batch by batch to the writer, so the most the reader has allocated at
// once stays well under the file's rows (an ingest that held every batch
// until the commit, as one did, peaks above all of them: 6.6 GB for a
// 15 MB file of 20,001 row groups).
func TestRunStreamsRowGroups(t *testing.T) {
	const rows, perGroup = 80000, 100
	p := filepath.Join(t.TempDir(), "many-groups.parquet")
	validatetest.Write(t, p, validatetest.File{Rows: validatetest.Points(rows), Geo: validatetest.Geo(""), Extra: true, RowGroupRows: perGroup})
	pf, err := file.OpenParquetFile(p, false)
	require.NoError(t, err)
	var data int64 // the file's rows, uncompressed
	for _, rg := range pf.MetaData().RowGroups {
		data += rg.TotalByteSize
	}
	require.NoError(t, pf.Close())

	for _, format := range []string{"iceberg", "delta"} {
		t.Run(format, func(t *testing.T) {
			mem := &peakAllocator{mem: memory.NewGoAllocator()}
			cfg := config("gis.pts", p)
			cfg.Allocator = mem
			cfg.MemoryBytes = 64 << 10
			var got int64
			if format == "iceberg" {
				cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
				require.NoError(t, err)
				res, err := runIceberg(t.Context(), cat, cfg)
				require.NoError(t, err)
				got = res.Rows
			} else {
				res, err := ingest.Run(t.Context(), deltatable.Appender(filepath.Join(t.TempDir(), "pts")), cfg.Config)
				require.NoError(t, err)
				got = res.Rows
			}
			require.EqualValues(t, rows, got)
			t.Logf("reader allocations: peak %d bytes, %d in all; the file's rows take %d bytes", mem.peak, mem.total, data)
			require.Greater(t, mem.total, data, "the reader allocated less than the rows take: the allocator was not used")
			// A batch is about 16 KiB here; the writer takes them a few at a time.
			require.Less(t, mem.peak*2, data, "the reader held half of the file's rows at once: ingest does not stream")
			require.Zero(t, mem.cur, "batches were not released")
		})
	}
}
