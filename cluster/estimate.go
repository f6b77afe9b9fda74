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
// slabs by), cuts the order into files runs of equal row counts (the
// first len(rows)%files one row longer) and returns the bounding box of
// each run. Runs of rows without a box, and runs left empty when files
// exceeds len(rows), have an empty box.
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
	perm, err := s.Permutation([]arrow.RecordBatch{rec})
	if err != nil {
		return nil, fmt.Errorf("cluster: file bounds: %w", err)
	}
	out := make([]spatial.Bound, files)
	n := len(perm)
	for f := range out {
		b := spatial.EmptyBound()
		for _, r := range perm[f*n/files : (f+1)*n/files] {
			b = b.Extend(rows[r])
		}
		out[f] = b
	}
	return out, nil
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
