package bench

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// everywhere is the bound of a file without usable statistics: planning
// cannot prune it, so it covers every window.
var everywhere = spatial.Bound{MinX: math.Inf(-1), MinY: math.Inf(-1), MaxX: math.Inf(1), MaxY: math.Inf(1)}

// fileInfo is one data file of a layout, with the bbox of every live row
// read from it.
type fileInfo struct {
	path  string
	size  int64
	count int64 // the manifest's record count
	// bound is the bbox the manifest statistics give; everywhere when
	// hasBound is false.
	bound    spatial.Bound
	hasBound bool
	rows     []spatial.Bound
	// rg is the file's row groups, from its footer, with their boxes
	// from rows (unbounded when deletes make them unknown, see
	// rowgroup.File.BoundRows).
	rg rowgroup.File
}

// readFiles lists tbl's live data files and reads the bbox of each file's
// rows (deletes applied) in one pass, projecting only the spatial columns.
// A row whose bbox is null or whose WKB is not valid gets an empty bbox:
// it matches no window, as no bbox predicate would select it.
func readFiles(ctx context.Context, tbl *table.Table, cols spatialColumns) ([]fileInfo, error) {
	scan := tbl.Scan(table.WithSelectedFields(cols.names()...))
	tasks, err := catalogs.PlanFiles(ctx, scan)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", tbl.Identifier(), err)
	}
	groups, err := footers(ctx, tbl, tasks)
	if err != nil {
		return nil, err
	}
	files := make([]fileInfo, len(tasks))
	for i, t := range tasks {
		f := &files[i]
		f.path, f.size, f.count = t.File.FilePath(), t.File.FileSizeBytes(), t.File.Count()
		f.bound, f.hasBound = cols.fileBound(t.File.LowerBoundValues(), t.File.UpperBoundValues())
		if !f.hasBound {
			f.bound = everywhere
		}
		f.rows = make([]spatial.Bound, 0, f.count)
		_, recs, err := scan.ReadTasks(ctx, tasks[i:i+1])
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f.path, err)
		}
		for rec, err := range recs {
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", f.path, err)
			}
			f.rows, err = appendRowBounds(f.rows, rec, cols)
			rec.Release()
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", f.path, err)
			}
		}
		f.rg = groups[i]
		f.rg.Size = f.size
		f.rg.BoundRows(f.rows)
	}
	return files, nil
}

// appendRowBounds appends the bbox of each row of rec.
func appendRowBounds(dst []spatial.Bound, rec arrow.RecordBatch, cols spatialColumns) ([]spatial.Bound, error) {
	n := int(rec.NumRows())
	if cols.HasBBox() {
		var arrs [4]*array.Float64
		for i, name := range spatial.BBoxColumns {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				return dst, fmt.Errorf("column %s missing from the scan", name)
			}
			a, ok := rec.Column(idx[0]).(*array.Float64)
			if !ok {
				return dst, fmt.Errorf("column %s is %s, want double", name, rec.Column(idx[0]).DataType())
			}
			arrs[i] = a
		}
		for r := range n {
			b := spatial.EmptyBound()
			if !arrs[0].IsNull(r) && !arrs[1].IsNull(r) && !arrs[2].IsNull(r) && !arrs[3].IsNull(r) {
				b = spatial.Bound{MinX: arrs[0].Value(r), MinY: arrs[1].Value(r), MaxX: arrs[2].Value(r), MaxY: arrs[3].Value(r)}
			}
			dst = append(dst, b)
		}
		return dst, nil
	}
	idx := rec.Schema().FieldIndices(cols.Geometry)
	if len(idx) == 0 {
		return dst, fmt.Errorf("column %s missing from the scan", cols.Geometry)
	}
	col := rec.Column(idx[0])
	if ext, ok := col.(array.ExtensionArray); ok {
		col = ext.Storage()
	}
	bin, ok := col.(interface {
		Value(int) []byte
		IsNull(int) bool
	})
	if !ok {
		return dst, fmt.Errorf("column %s is %s, want WKB binary", cols.Geometry, col.DataType())
	}
	for r := range n {
		b := spatial.EmptyBound()
		if !bin.IsNull(r) {
			if e, err := spatial.Envelope(bin.Value(r)); err == nil {
				b = e
			}
		}
		dst = append(dst, b)
	}
	return dst, nil
}

// WindowResult is what one window planned and matched on one layout.
type WindowResult struct {
	// Planned and PlannedBytes are the files (and their bytes) that scan
	// planning returned for the window.
	Planned      int   `json:"files_planned"`
	PlannedBytes int64 `json:"bytes_planned"`
	// Matching is the number of rows whose bbox intersects the window.
	Matching int64 `json:"matching_rows"`
	// FilesWithMatches is the number of files holding at least one
	// matching row: what a perfect index over these same files would open.
	FilesWithMatches int `json:"files_with_matches"`
	// LowerBound is ceil(Matching / even share of rows per file), the
	// share being ceil(rows / files) of the layout (see lowerBound).
	LowerBound int64 `json:"lower_bound"`
	// RowGroupsRead and RowGroupBytesRead are the row groups of the
	// planned files whose bbox intersects the window, and their
	// compressed bytes: what a reader that prunes row groups by the bbox
	// columns' statistics reads.
	RowGroupsRead     int   `json:"row_groups_read"`
	RowGroupBytesRead int64 `json:"row_group_bytes_read"`
}

// measureWindows plans every window with plan and counts, from the rows
// already read into files, the rows and files that truly match. A file
// holding a matching row that planning pruned is an error: the statistics
// would be lying, and no figure could be trusted.
func measureWindows(ctx context.Context, plan planner, files []fileInfo, windows []spatial.Bound) ([]WindowResult, error) {
	byPath := make(map[string]int, len(files))
	var rows int64
	for i, f := range files {
		byPath[f.path] = i
		rows += f.count
	}
	share := (rows + int64(len(files)) - 1) / max(int64(len(files)), 1)
	out := make([]WindowResult, len(windows))
	planned := make([]bool, len(files))
	for wi, w := range windows {
		paths, err := plan(ctx, wi, w)
		if err != nil {
			return nil, err
		}
		clear(planned)
		res := &out[wi]
		for _, p := range paths {
			i, ok := byPath[p]
			if !ok {
				return nil, fmt.Errorf("plan window %d: file %s is not in the table's file list", wi, p)
			}
			planned[i] = true
			res.Planned++
			res.PlannedBytes += files[i].size
			n, b := files[i].rg.Read(w)
			res.RowGroupsRead += n
			res.RowGroupBytesRead += b
		}
		for i, f := range files {
			n := countMatches(f, w)
			if n == 0 {
				continue
			}
			if !planned[i] {
				return nil, fmt.Errorf("window %d: planning pruned %s, which holds %d matching rows", wi, f.path, n)
			}
			res.Matching += n
			res.FilesWithMatches++
		}
		res.LowerBound = lowerBound(res.Matching, share)
	}
	return out, nil
}

// planWindow is what iceberg-go's scan planning opens for window w (the
// wi-th), filtering the way a production query does (spatialColumns.filter).
func planWindow(ctx context.Context, tbl *table.Table, cols spatialColumns, wi int, w spatial.Bound) ([]table.FileScanTask, error) {
	tasks, err := catalogs.PlanFiles(ctx, tbl.Scan(table.WithRowFilter(cols.filter(w))))
	if err != nil {
		return nil, fmt.Errorf("plan window %d: %w", wi, err)
	}
	return tasks, nil
}

// Planning is what scan planning opens on a table for a set of windows,
// measured without reading any rows.
type Planning struct {
	// Files and Bytes are the table's live data files and their size.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// MeanFilesPlanned and MeanBytesPlanned are the mean, over the
	// windows, of the files (and their bytes) planning returned.
	MeanFilesPlanned float64 `json:"mean_files_planned"`
	MeanBytesPlanned float64 `json:"mean_bytes_planned"`
}

// MeasurePlanning counts tbl's live files and plans every window with the
// same predicate and planning Run uses, without reading rows: the quick
// measure of a live table.
func MeasurePlanning(ctx context.Context, tbl *table.Table, windows []spatial.Bound) (*Planning, error) {
	cols, err := columnsOf(tbl.Schema(), tbl.Properties())
	if err != nil {
		return nil, fmt.Errorf("measure %s: %w", catalogs.TableName(tbl), err)
	}
	tasks, err := catalogs.PlanFiles(ctx, tbl.Scan())
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", catalogs.TableName(tbl), err)
	}
	p := &Planning{Files: len(tasks)}
	for _, t := range tasks {
		p.Bytes += t.File.FileSizeBytes()
	}
	for wi, w := range windows {
		planned, err := planWindow(ctx, tbl, cols, wi, w)
		if err != nil {
			return nil, err
		}
		p.MeanFilesPlanned += float64(len(planned))
		for _, t := range planned {
			p.MeanBytesPlanned += float64(t.File.FileSizeBytes())
		}
	}
	if len(windows) > 0 {
		p.MeanFilesPlanned /= float64(len(windows))
		p.MeanBytesPlanned /= float64(len(windows))
	}
	return p, nil
}

// footers checks the footers of the tasks' data files against the files'
// sizes before iceberg-go reads them (see footer.Check), and returns each
// file's row groups, in task order.
func footers(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask) ([]rowgroup.File, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("no file system: %w", err)
	}
	out := make([]rowgroup.File, len(tasks))
	for i, t := range tasks {
		if out[i], err = rowgroup.ReadFile(fsys.Open, t.File.FilePath(), rowgroup.Columns{}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SampleRows returns the bbox of every every-th live row of tbl, in scan
// order, read from the columns Run reads: a sample to place windows on.
func SampleRows(ctx context.Context, tbl *table.Table, every int) ([]spatial.Bound, error) {
	cols, err := columnsOf(tbl.Schema(), tbl.Properties())
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", catalogs.TableName(tbl), err)
	}
	_, recs, err := tbl.Scan(table.WithSelectedFields(cols.names()...)).ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("sample rows: %w", err)
	}
	var out, buf []spatial.Bound
	i := 0
	for rec, err := range recs {
		if err != nil {
			return nil, fmt.Errorf("sample rows: %w", err)
		}
		buf, err = appendRowBounds(buf[:0], rec, cols)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("sample rows: %w", err)
		}
		for _, b := range buf {
			if i%every == 0 {
				out = append(out, b)
			}
			i++
		}
	}
	return out, nil
}

// countMatches counts f's rows whose bbox intersects w, skipping the rows
// when the file's own bound shows none can.
func countMatches(f fileInfo, w spatial.Bound) int64 {
	if f.hasBound && !f.bound.Intersects(w) {
		return 0
	}
	var n int64
	for _, r := range f.rows {
		if r.Intersects(w) {
			n++
		}
	}
	return n
}

// lowerBound is the fewest files any layout of files holding at most
// maxRowsPerFile rows each could plan for a window matching `matching`
// rows: ceil(matching / maxRowsPerFile). Bench passes the even share of
// the layout's rows (ceil(rows / files)), not its largest file: the bound
// is then the same for every layout of a table at one file count (what
// a window must touch at that count), and a layout with a few large
// files (kd's leaves are uneven) does not lower its own bound and so
// look worse against it. A layout with uneven files can plan fewer
// files than this bound for a window that falls in its large files, so
// a ratio below 1 is possible, if rare.
func lowerBound(matching, maxRowsPerFile int64) int64 {
	if matching == 0 || maxRowsPerFile <= 0 {
		return 0
	}
	return (matching + maxRowsPerFile - 1) / maxRowsPerFile
}

// overlapDepth measures how much the files' bboxes overlap. The depth of
// a point is the number of file bboxes (closed boxes, from the manifest
// statistics; a file without statistics covers every point) that contain
// it. mean is the average depth at the bbox centres of the table's rows —
// the files a point query at a random row would plan, at least 1 — and
// maxDepth the largest depth of any point of the plane.
func overlapDepth(files []fileInfo) (mean float64, maxDepth int) {
	var sum, n int64
	for _, f := range files {
		for _, r := range f.rows {
			if r.IsEmpty() {
				continue
			}
			x, y := r.Center()
			for _, g := range files {
				if g.bound.Contains(x, y) {
					sum++
				}
			}
			n++
		}
	}
	if n > 0 {
		mean = float64(sum) / float64(n)
	}
	bounds := make([]spatial.Bound, len(files))
	for i, f := range files {
		bounds[i] = f.bound
	}
	return mean, spatial.MaxDepth(bounds)
}
