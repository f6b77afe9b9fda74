package validate

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/geocompact/geocompact/spatial"
)

// checkColumns validates pf's rows with Parquet's typed column readers,
// without building Arrow arrays: WKB values are checked in place in the
// decoded page, bbox doubles are read into reused buffers. It handles the
// common layout (a top-level BYTE_ARRAY geometry column and, if any, four
// top-level DOUBLE bbox columns) and reports handled=false for anything
// else, which the Arrow path then reads.
func checkColumns(ctx context.Context, rep *Report, pf *file.Reader, cols spatial.Columns, cfg Config) (handled bool, err error) {
	sc := pf.MetaData().Schema
	gi := sc.ColumnIndexByName(cols.Geometry)
	if cols.Covering != "" || gi < 0 || !flatColumn(sc, gi, parquet.Types.ByteArray) {
		return false, nil
	}
	batch := int64(max(cfg.BatchSize, 1))
	s := &columnScan{rep: rep, cols: cols, rc: newChecker(cols, cfg), batch: batch, gi: gi, hasBBox: cols.HasBBox(),
		gmax: sc.Column(gi).MaxDefinitionLevel(), gvals: make([]parquet.ByteArray, batch), gdef: make([]int16, batch)}
	for k, name := range cols.BBox {
		if !s.hasBBox {
			break
		}
		s.bi[k] = sc.ColumnIndexByName(name)
		if s.bi[k] < 0 || !flatColumn(sc, s.bi[k], parquet.Types.Double) {
			s.hasBBox = false // a non-double bbox column was reported with the schema
		}
	}
	var row int64
	for rg := range pf.NumRowGroups() {
		if err := ctx.Err(); err != nil {
			return true, context.Cause(ctx)
		}
		n, ok := s.rowGroup(pf.RowGroup(rg), rg, sc, row)
		if !ok {
			return true, nil
		}
		row += n
	}
	rep.Rows += row
	return true, nil
}

// columnScan is checkColumns' state: which columns it reads, its reused
// buffers and the checker the rows go to.
type columnScan struct {
	rep     *Report
	cols    spatial.Columns
	rc      *rowChecker
	batch   int64
	gi      int    // the geometry column
	bi      [4]int // the bbox columns, when hasBBox
	hasBBox bool
	gmax    int16
	gvals   []parquet.ByteArray
	gdef    []int16
	bb      [4]doubleColumn
}

// rowGroup checks the rows of one row group, the first being row. It
// returns the rows it holds, and false when the file is corrupt (reported).
func (s *columnScan) rowGroup(rgr *file.RowGroupReader, rg int, sc *schema.Schema, row int64) (int64, bool) {
	n := rgr.NumRows()
	gr, err := rgr.Column(s.gi)
	if err != nil {
		s.rep.Add(-1, CodeCorrupt, fmt.Sprintf("row group %d: %v", rg, err))
		return n, false
	}
	geo := gr.(*file.ByteArrayColumnChunkReader)
	if s.hasBBox {
		for k := range s.bb {
			if err := s.bb[k].open(rgr, s.bi[k], sc.Column(s.bi[k]).MaxDefinitionLevel(), s.batch); err != nil {
				s.rep.Add(-1, CodeCorrupt, fmt.Sprintf("row group %d: %v", rg, err))
				return n, false
			}
		}
	}
	for done := int64(0); done < n; {
		want := min(s.batch, n-done)
		if s.hasBBox {
			for k := range s.bb {
				if err := s.bb[k].read(want); err != nil {
					s.rep.Add(-1, CodeCorrupt, fmt.Sprintf("row group %d, %s: %v", rg, s.cols.BBox[k], err))
					return n, false
				}
			}
		}
		// WKB values point into the current page, so each page's rows
		// are checked before the next page is read.
		for got := int64(0); got < want; {
			total, _, err := geo.ReadBatchInPage(want-got, s.gvals, s.gdef, nil)
			if err == nil && total == 0 {
				err = fmt.Errorf("column ended after %d of %d rows", done+got, n)
			}
			if err != nil {
				s.rep.Add(-1, CodeCorrupt, fmt.Sprintf("row group %d, %s: %v", rg, s.cols.Geometry, err))
				return n, false
			}
			s.checkPage(row+done, got, total)
			got += total
		}
		done += want
	}
	return n, true
}

// checkPage checks total rows read into the buffers, the first being
// batch row got of the batch starting at row first.
func (s *columnScan) checkPage(first, got, total int64) {
	vi := 0
	for i := range total {
		r := got + i
		if s.gmax > 0 && s.gdef[i] < s.gmax {
			s.rc.check(s.rep, first+r, nil, true, nil, -1)
			continue
		}
		b := s.gvals[vi]
		vi++
		if !s.hasBBox {
			s.rc.check(s.rep, first+r, b, false, nil, -1)
			continue
		}
		var v [4]float64
		nullAt := -1
		for k := range s.bb {
			if s.bb[k].null[r] {
				nullAt = k
				break
			}
			v[k] = s.bb[k].vals[r]
		}
		s.rc.check(s.rep, first+r, b, false, &v, nullAt)
	}
}

// flatColumn reports whether leaf i is a top-level, non-repeated column of
// physical type t.
func flatColumn(sc *schema.Schema, i int, t parquet.Type) bool {
	c := sc.Column(i)
	return c.PhysicalType() == t && c.MaxRepetitionLevel() == 0 && len(c.ColumnPath()) == 1
}

// doubleColumn reads one DOUBLE column a batch at a time into row-aligned
// (spaced) values and null flags.
type doubleColumn struct {
	rdr    *file.Float64ColumnChunkReader
	maxDef int16
	dense  []float64
	def    []int16
	vals   []float64
	null   []bool
}

func (c *doubleColumn) open(rgr *file.RowGroupReader, i int, maxDef int16, batch int64) error {
	cr, err := rgr.Column(i)
	if err != nil {
		return err
	}
	c.rdr, c.maxDef = cr.(*file.Float64ColumnChunkReader), maxDef
	if int64(len(c.dense)) < batch {
		c.dense, c.def = make([]float64, batch), make([]int16, batch)
		c.vals, c.null = make([]float64, batch), make([]bool, batch)
	}
	return nil
}

// read reads the next n rows into vals and null.
func (c *doubleColumn) read(n int64) error {
	total, nv, err := c.rdr.ReadBatch(n, c.dense, c.def, nil)
	if err != nil {
		return err
	}
	if total != n {
		return fmt.Errorf("column ended after %d of %d rows", total, n)
	}
	if int64(nv) == n {
		copy(c.vals, c.dense[:n])
		clear(c.null[:n])
		return nil
	}
	vi := 0
	for i := range n {
		if c.def[i] < c.maxDef {
			c.null[i] = true
			continue
		}
		c.null[i] = false
		c.vals[i] = c.dense[vi]
		vi++
	}
	return nil
}
