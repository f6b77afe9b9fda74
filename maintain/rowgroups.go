package maintain

import (
	"context"
	"sync"

	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
)

// MeasureConfig says what Measure reads besides a table's metadata.
type MeasureConfig struct {
	// Windows, when given, are counted per partition: the files each
	// plans (LayoutHealth.MeanFilesPlanned) and, with RowGroups, the row
	// groups it reads (RowGroupHealth.MeanRead).
	Windows []spatial.Bound
	// RowGroups reads the footer of each live data file, and nothing
	// else of it, for the row-group figures (RowGroupHealth) of a table
	// with spatial columns: one footer read per file, footerReads at
	// once. False (the default) reads metadata only.
	RowGroups bool
}

// footerReads bounds the footers Measure reads at once: enough to hide
// an object store's latency, few enough to stay a small load.
const footerReads = 8

// RowGroupHealth says how tightly the row groups of a table's (or a
// partition's) live data files are cut, from the files' footers: what a
// reader that prunes row groups by the bbox columns' statistics (DuckDB,
// Spark) skips within a file. A sorted rewrite cuts row groups along its
// curve, so they cover a small part of their file's box; a file written
// in arrival order has every row group spanning the file. They are
// bench's row-group figures (rowgroup), measured on the live table.
type RowGroupHealth struct {
	// Count is the number of row groups.
	Count int64 `json:"count"`
	// FilesWithoutBounds counts the files whose footers lack statistics
	// of the bbox columns (or the table has none): their row groups'
	// boxes are unknown, and a window reads them whole.
	FilesWithoutBounds int64 `json:"files_without_bounds"`
	// Area is the mean, over the row groups of files whose footers bound
	// them, of a row group's bbox area against its file's
	// (rowgroup.MeanArea): 1 for files of one row group, lower is
	// tighter. Nil when unknown: no file's footer bounds its row groups.
	Area *float64 `json:"area"`
	// MeanRead is, given windows, the mean over them of the row groups
	// read: those whose box intersects the window, in the files the
	// window plans (all of an unbounded file's). Nil without windows.
	MeanRead *float64 `json:"mean_read,omitempty"`
}

// footerFile is a live data file whose row groups the row-group figures
// read: its box (Unbounded without statistics), how to read its row
// groups, and, once read, its row groups.
type footerFile struct {
	box  spatial.Bound
	read footerReader
	rg   rowgroup.File
}

// readFooters reads the row groups of files, bounded by the statistics
// of cols, footerReads at once, and returns the first error, having
// stopped handing out reads.
func readFooters(ctx context.Context, files []*footerFile, cols rowgroup.Columns) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan *footerFile)
	var wg sync.WaitGroup
	for range min(footerReads, len(files)) {
		wg.Go(func() {
			for f := range next {
				rg, err := f.read(cols)
				if err != nil {
					cancel(err)
					continue
				}
				f.rg = rg
			}
		})
	}
feed:
	for _, f := range files {
		select {
		case next <- f:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}

// rowGroupHealth is the row-group figures of files, whose row groups
// were read, for windows.
func rowGroupHealth(files []*footerFile, windows []spatial.Bound) *RowGroupHealth {
	rh := &RowGroupHealth{}
	rgs := make([]rowgroup.File, len(files))
	for i, f := range files {
		rgs[i] = f.rg
		rh.Count += int64(len(f.rg.Groups))
		if !f.rg.Bounded {
			rh.FilesWithoutBounds++
		}
	}
	if a, ok := rowgroup.MeanArea(rgs); ok {
		rh.Area = &a
	}
	if len(windows) > 0 {
		read := 0
		for _, w := range windows {
			for _, f := range files {
				if f.box.Intersects(w) {
					n, _ := f.rg.Read(w)
					read += n
				}
			}
		}
		mean := float64(read) / float64(len(windows))
		rh.MeanRead = &mean
	}
	return rh
}
