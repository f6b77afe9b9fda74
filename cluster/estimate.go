package cluster

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/geocompact/geocompact/spatial"
)

// boundsSchema is the schema BoundsBatch builds: the four bbox columns.
var boundsSchema = func() *arrow.Schema {
	fields := make([]arrow.Field, len(spatial.BBoxColumns))
	for i, c := range spatial.BBoxColumns {
		fields[i] = arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}()

// BoundsBatch returns rows as a record batch of the four bbox columns
// (spatial.BBoxColumns), a schema every spatial order accepts; empty
// boxes become nulls, so they have no position. The caller releases it.
func BoundsBatch(rows []spatial.Bound) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, boundsSchema)
	defer b.Release()
	cols := make([]*array.Float64Builder, 4)
	for i := range cols {
		cols[i] = b.Field(i).(*array.Float64Builder)
		cols[i].Reserve(len(rows))
	}
	for _, r := range rows {
		if r.IsEmpty() {
			for _, c := range cols {
				c.AppendNull()
			}
			continue
		}
		for i, v := range [4]float64{r.MinX, r.MinY, r.MaxX, r.MaxY} {
			cols[i].UnsafeAppend(v)
		}
	}
	return b.NewRecordBatch()
}

// FileBounds lays rows out as a rewrite with order o would: it orders
// them with a Sorter (opts.Files is set to files, which str sizes its
// slabs by and kd its leaves), cuts the order into files runs of equal row
// counts (the first len(rows)%files one row longer) or, for kd, at its
// leaves (see RunFiles), and returns the bounding box of each run. Runs of
// rows without a box, and runs left empty when files exceeds len(rows),
// have an empty box.
func FileBounds(rows []spatial.Bound, o Order, opts SortOptions, files int) ([]spatial.Bound, error) {
	if files < 1 {
		return nil, fmt.Errorf("cluster: file bounds: %d files, want at least 1", files)
	}
	opts.Files = files
	s, err := NewSorter(o, boundsSchema, opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: file bounds: %w", err)
	}
	rec := BoundsBatch(rows)
	defer rec.Release()
	perm, keys, err := s.SortedKeys([]arrow.RecordBatch{rec})
	if err != nil {
		return nil, fmt.Errorf("cluster: file bounds: %w", err)
	}
	counts := fileCounts(s, keys, len(perm), files)
	out := make([]spatial.Bound, len(counts))
	at := 0
	for f, c := range counts {
		b := spatial.EmptyBound()
		for _, r := range perm[at : at+c] {
			b = b.Extend(rows[r])
		}
		out[f], at = b, at+c
	}
	return out, nil
}

// fileCounts returns the row counts of the files n rows, whose sorted
// keys are keys, are cut into by s: equal runs (the first n%files one row
// longer), or, when s's layout decides its cuts (CutShift), RunFiles of
// its cells.
func fileCounts(s *Sorter, keys []uint64, n, files int) []int {
	out := make([]int, files)
	shift, ok := s.CutShift()
	if !ok {
		for f := range out {
			out[f] = (f+1)*n/files - f*n/files
		}
		return out
	}
	runs := NewCellRuns(shift)
	runs.Add(keys)
	out = out[:0]
	for _, c := range RunFiles(runs.Runs(), files) {
		out = append(out, int(c))
	}
	return out
}

// CountPlanned returns, for each window, the number of files whose box
// intersects it: the files a scan of that window plans. Touching boxes
// intersect, as they do in scan planning; empty boxes intersect nothing.
func CountPlanned(files, windows []spatial.Bound) []int {
	out := make([]int, len(windows))
	for w, win := range windows {
		for _, f := range files {
			if f.Intersects(win) {
				out[w]++
			}
		}
	}
	return out
}

// FilesPlanned is FileBounds followed by CountPlanned: the files each
// window would plan if rows were rewritten with order o into files files
// of equal row counts. Given a sample of a table's rows it is a cheap
// estimate; given all of them it is the figure the estimate stands for
// (up to the engine cutting files by bytes rather than rows).
func FilesPlanned(rows []spatial.Bound, o Order, opts SortOptions, files int, windows []spatial.Bound) ([]int, error) {
	fb, err := FileBounds(rows, o, opts, files)
	if err != nil {
		return nil, err
	}
	return CountPlanned(fb, windows), nil
}
