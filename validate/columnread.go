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
	var bi [4]int
	hasBBox := cols.HasBBox()
	for k, name := range cols.BBox {
		if !hasBBox {
			break
		}
		bi[k] = sc.ColumnIndexByName(name)
		if bi[k] < 0 || !flatColumn(sc, bi[k], parquet.Types.Double) {
			hasBBox = false // a non-double bbox column was reported with the schema
		}
	}
	rc := newChecker(cols, cfg)
	batch := int64(max(cfg.BatchSize, 1))
	var (
		gvals = make([]parquet.ByteArray, batch)
		gdef  = make([]int16, batch)
		bb    [4]doubleColumn
	)
	gmax := sc.Column(gi).MaxDefinitionLevel()
	var row int64
	for rg := range pf.NumRowGroups() {
		if err := ctx.Err(); err != nil {
			return true, context.Cause(ctx)
		}
		rgr := pf.RowGroup(rg)
		n := rgr.NumRows()
		gr, err := rgr.Column(gi)
		if err != nil {
			rep.add(-1, CodeCorrupt, fmt.Sprintf("row group %d: %v", rg, err))
			return true, nil
		}
		geo := gr.(*file.ByteArrayColumnChunkReader)
		if hasBBox {
			for k := range bb {
				if err := bb[k].open(rgr, bi[k], sc.Column(bi[k]).MaxDefinitionLevel(), batch); err != nil {
					rep.add(-1, CodeCorrupt, fmt.Sprintf("row group %d: %v", rg, err))
					return true, nil
				}
			}
		}
		for done := int64(0); done < n; {
			want := min(batch, n-done)
			if hasBBox {
				for k := range bb {
					if err := bb[k].read(want); err != nil {
						rep.add(-1, CodeCorrupt, fmt.Sprintf("row group %d, %s: %v", rg, cols.BBox[k], err))
						return true, nil
					}
				}
			}
			// WKB values point into the current page, so each page's rows
			// are checked before the next page is read.
			for got := int64(0); got < want; {
				total, _, err := geo.ReadBatchInPage(want-got, gvals, gdef, nil)
				if err == nil && total == 0 {
					err = fmt.Errorf("column ended after %d of %d rows", done+got, n)
				}
				if err != nil {
					rep.add(-1, CodeCorrupt, fmt.Sprintf("row group %d, %s: %v", rg, cols.Geometry, err))
					return true, nil
				}
				vi := 0
				for i := range total {
					r := got + i
					if gmax > 0 && gdef[i] < gmax {
						rc.check(rep, row+done+r, nil, true, nil, -1)
						continue
					}
					b := gvals[vi]
					vi++
					if !hasBBox {
						rc.check(rep, row+done+r, b, false, nil, -1)
						continue
					}
					var v [4]float64
					nullAt := -1
					for k := range bb {
						if bb[k].null[r] {
							nullAt = k
							break
						}
						v[k] = bb[k].vals[r]
					}
					rc.check(rep, row+done+r, b, false, &v, nullAt)
				}
				got += total
			}
			done += want
		}
		row += n
	}
	rep.Rows += row
	return true, nil
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
