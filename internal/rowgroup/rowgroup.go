// Package rowgroup reads a Parquet data file's row groups from its footer
// (their rows, compressed bytes and boxes) and measures how tightly they
// are cut: a row group's box area against its file's, and the row groups
// a bbox window reads. bench and maintain's metrics share it, so their
// figures mean the same.
package rowgroup

import (
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/geocompact/geocompact/internal/footer"
	"github.com/geocompact/geocompact/spatial"
)

// Group is one row group of a data file: its rows, its compressed bytes
// and the box of its rows, which is what a reader that prunes row groups
// by the bbox columns' statistics (DuckDB, Spark) compares with a window.
type Group struct {
	Rows, Bytes int64
	// Bound is the box of the group's rows, when its File is Bounded;
	// empty when none of its rows has a box.
	Bound spatial.Bound
}

// File is the row groups of one data file.
type File struct {
	// Size is the file's size in bytes, as the table's metadata gives it
	// (ReadFile leaves it to the caller): what a reader reads of a file
	// whose groups' boxes are unknown.
	Size   int64
	Groups []Group
	// Bounded says every group's Bound is known. A file is unbounded
	// when its footer lacks statistics of a bbox column for a group, or
	// when the rows its groups were bounded from are not the rows its
	// footer counts (BoundRows).
	Bounded bool
}

// Columns are the Parquet column paths of a table's xmin, ymin, xmax and
// ymax columns ("bbox_minx", or a covering struct's "bbox.xmin"), whose
// row group statistics bound a row group. The zero Columns names none.
type Columns [4]string

// ColumnsOf returns the paths of c's bbox columns, else of its covering
// struct's fields; false when c has neither. The paths are the table's
// column names: a format that maps them to other physical names (Delta's
// column mapping) gives its own.
func ColumnsOf(c spatial.Columns) (Columns, bool) {
	switch {
	case c.HasBBox():
		return Columns(c.BBox), true
	case c.Covering != "":
		var out Columns
		for i, f := range c.CoveringFields {
			out[i] = c.Covering + "." + f
		}
		return out, true
	}
	return Columns{}, false
}

// ReadFile opens the data file at path with open (a file system's Open),
// checks its footer (footer.ReadFile) and returns its row groups' rows
// and compressed bytes, reading nothing but the footer. With cols, each
// group's box is the minimum of the xmin and ymin columns' statistics
// and the maximum of the xmax and ymax columns'; a group whose footer
// gives no usable statistics for one of them (none written, not doubles,
// NaN) leaves the file unbounded, while a group whose bbox values are all
// null has an empty box. The error names the file.
func ReadFile[F interface {
	parquet.ReaderAtSeeker
	io.Closer
}](open func(string) (F, error), path string, cols Columns) (File, error) {
	md, err := footer.ReadFile(open, path)
	if err != nil {
		return File{}, err
	}
	f := File{Groups: make([]Group, md.NumRowGroups())}
	for i := range f.Groups {
		rg := md.RowGroup(i)
		f.Groups[i].Rows = rg.NumRows()
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return File{}, fmt.Errorf("data file %s: %w", path, err)
			}
			f.Groups[i].Bytes += cc.TotalCompressedSize()
		}
	}
	if cols != (Columns{}) {
		f.Bounded = boundStats(md, cols, f.Groups)
	}
	return f, nil
}

// boundStats sets the box of each of gs, the row groups of md, from the
// statistics of cols; false when any group's box cannot be told.
func boundStats(md *metadata.FileMetaData, cols Columns, gs []Group) bool {
	var idx [4]int
	for k, p := range cols {
		if idx[k] = md.Schema.ColumnIndexByName(p); idx[k] < 0 {
			return false
		}
	}
	for i := range gs {
		rg := md.RowGroup(i)
		var v [4]float64
		empty := false
		for k := range cols {
			x, null, ok := statistic(rg, idx[k], k >= 2)
			if !ok {
				return false
			}
			v[k], empty = x, empty || null
		}
		gs[i].Bound = spatial.EmptyBound()
		if !empty {
			gs[i].Bound = spatial.Bound{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]}
		}
	}
	return true
}

// statistic is the minimum (the maximum, when isMax) of the double column
// col in rg; allNull when every value there is null; ok false when the
// footer does not tell.
func statistic(rg *metadata.RowGroupMetaData, col int, isMax bool) (v float64, allNull, ok bool) {
	cc, err := rg.ColumnChunk(col)
	if err != nil {
		return 0, false, false
	}
	st, err := cc.Statistics()
	if err != nil || st == nil {
		return 0, false, false
	}
	fs, isDouble := st.(*metadata.Float64Statistics)
	if !isDouble {
		return 0, false, false
	}
	if !fs.HasMinMax() {
		all := fs.HasNullCount() && fs.NullCount() >= rg.NumRows()
		return 0, all, all
	}
	v = fs.Min()
	if isMax {
		v = fs.Max()
	}
	return v, false, !math.IsNaN(v)
}

// BoundRows sets the box of each of f's groups from rows, the box of
// every row of the file in file order. When the rows are not the rows
// the footer counts (deletes were applied), the groups' boxes cannot be
// told and f is left unbounded.
func (f *File) BoundRows(rows []spatial.Bound) {
	var n int64
	for _, g := range f.Groups {
		n += g.Rows
	}
	if n != int64(len(rows)) {
		f.Bounded = false
		return
	}
	at := int64(0)
	for i := range f.Groups {
		b := spatial.EmptyBound()
		for _, r := range rows[at : at+f.Groups[i].Rows] {
			b = b.Extend(r)
		}
		f.Groups[i].Bound, at = b, at+f.Groups[i].Rows
	}
	f.Bounded = true
}

// Read counts the row groups of f a reader that prunes row groups by
// their boxes reads for window w, and their bytes (touching boxes
// intersect); an unbounded file is read whole, Size bytes.
func (f File) Read(w spatial.Bound) (n int, bytes int64) {
	if !f.Bounded {
		return len(f.Groups), f.Size
	}
	for _, g := range f.Groups {
		if g.Bound.Intersects(w) {
			n++
			bytes += g.Bytes
		}
	}
	return n, bytes
}

// MeanArea is the mean, over the row groups of the bounded files, of a
// row group's box area against its file's, the file's being the union of
// its groups' boxes: 1 for a file of one row group, lower when the groups
// are cut tighter. Groups with an empty box, and files whose groups' union
// has no area, are left out; ok is false when none is left: the figure is
// unknown, not 0.
func MeanArea(files []File) (mean float64, ok bool) {
	var sum float64
	var n int
	for _, f := range files {
		if !f.Bounded {
			continue
		}
		whole := spatial.EmptyBound()
		for _, g := range f.Groups {
			whole = whole.Extend(g.Bound)
		}
		if whole.IsEmpty() || whole.Area() == 0 {
			continue
		}
		for _, g := range f.Groups {
			if !g.Bound.IsEmpty() {
				sum += g.Bound.Area() / whole.Area()
				n++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
