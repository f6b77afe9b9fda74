package bench

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/geocompact/geocompact/internal/footer"
	"github.com/geocompact/geocompact/spatial"
)

// rowGroup is one row group of a data file: its rows, its compressed
// bytes, and the bbox of its rows, which is what a reader that prunes row
// groups by the bbox columns' statistics (DuckDB, Spark) compares with a
// window.
type rowGroup struct {
	rows  int64
	bytes int64
	bound spatial.Bound
}

// openRowGroups opens path with open, checks its footer (see
// footer.ReadFile) and returns its row groups' rows and compressed bytes.
// The error names the file.
func openRowGroups[F interface {
	parquet.ReaderAtSeeker
	io.Closer
}](open func(string) (F, error), path string) ([]rowGroup, error) {
	md, err := footer.ReadFile(open, path)
	if err != nil {
		return nil, err
	}
	out := make([]rowGroup, md.NumRowGroups())
	for i := range out {
		rg := md.RowGroup(i)
		out[i].rows = rg.NumRows()
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return nil, fmt.Errorf("data file %s: %w", path, err)
			}
			out[i].bytes += cc.TotalCompressedSize()
		}
	}
	return out, nil
}

// boundRowGroups sets the bbox of each of gs from rows, the bbox of every
// row of the file in file order. When the rows read are not the rows the
// footer counts (deletes were applied), the row groups' boxes cannot be
// told and gs is returned without them (nil).
func boundRowGroups(gs []rowGroup, rows []spatial.Bound) []rowGroup {
	var n int64
	for _, g := range gs {
		n += g.rows
	}
	if n != int64(len(rows)) {
		return nil
	}
	at := int64(0)
	for i := range gs {
		b := spatial.EmptyBound()
		for _, r := range rows[at : at+gs[i].rows] {
			b = b.Extend(r)
		}
		gs[i].bound, at = b, at+gs[i].rows
	}
	return gs
}

// rowGroupsRead counts the row groups of f a reader that prunes row
// groups by their bbox reads for window w, and their bytes; a file whose
// row groups' boxes are unknown is read whole.
func rowGroupsRead(f fileInfo, w spatial.Bound) (n int, bytes int64) {
	if f.groups == nil {
		return f.rowGroups, f.size
	}
	for _, g := range f.groups {
		if g.bound.Intersects(w) {
			n++
			bytes += g.bytes
		}
	}
	return n, bytes
}

// rowGroupArea is the mean, over the row groups of files whose boxes are
// known, of a row group's bbox area against its file's (1 for a file of
// one row group; lower is tighter); ok is false when no file has known
// row groups of any area.
func rowGroupArea(files []fileInfo) (mean float64, ok bool) {
	var sum float64
	var n int
	for _, f := range files {
		whole := spatial.EmptyBound()
		for _, g := range f.groups {
			whole = whole.Extend(g.bound)
		}
		if whole.IsEmpty() || whole.Area() == 0 {
			continue
		}
		for _, g := range f.groups {
			if !g.bound.IsEmpty() {
				sum += g.bound.Area() / whole.Area()
				n++
			}
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
