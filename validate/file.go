package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/geocompact/geocompact/internal/footer"
	"github.com/geocompact/geocompact/spatial"
)

// File validates the Parquet file at path. A file that is empty, truncated
// or not Parquet is a finding (file.corrupt), not an error; the error
// return is kept for I/O failures (the file cannot be opened) and
// cancellation.
func File(ctx context.Context, path string, cfg Config) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	defer f.Close()
	return Reader(ctx, f, cfg)
}

// Reader validates a Parquet file read through r. See File.
func Reader(ctx context.Context, r parquet.ReaderAtSeeker, cfg Config) (rep *Report, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rr := NewReport(cfg)
	rep = &rr
	defer RecoverCorrupt(rep, &err)
	pf, err := footer.Open(r)
	if err != nil {
		rep.Add(-1, CodeCorrupt, "not a readable Parquet file: "+err.Error())
		return rep, nil
	}
	defer pf.Close()
	_, err = readFile(ctx, rep, pf, cfg)
	if err != nil {
		return nil, err
	}
	cfg.Log().Debug("validate file done", "rows", rep.Rows, "violations", rep.Violations(), "duration", time.Since(start))
	return rep, nil
}

// RecoverCorrupt, deferred, turns a panic into a file.corrupt finding in rep
// and clears *err: arrow-go's decoders can panic on a corrupt page, and that
// is the file's defect, reported like any other corruption.
func RecoverCorrupt(rep *Report, err *error) {
	if p := recover(); p != nil {
		rep.Add(-1, CodeCorrupt, fmt.Sprintf("reading: %v", p))
		*err = nil
	}
}

// readFile resolves pf's columns and checks its rows batch by batch,
// reading only the columns the checks need. It returns the columns it
// found.
func readFile(ctx context.Context, rep *Report, pf *file.Reader, cfg Config) (spatial.Columns, error) {
	geoJSON := ""
	if v := pf.MetaData().KeyValueMetadata().FindValue(spatial.GeoParquetKey); v != nil {
		geoJSON = *v
	}
	batch := cfg.BatchSize
	if batch <= 0 {
		batch = 1 << 16
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batch)}, memory.DefaultAllocator)
	if err != nil {
		rep.Add(-1, CodeCorrupt, "schema: "+err.Error())
		return spatial.Columns{}, nil
	}
	sc, err := fr.Schema()
	if err != nil {
		rep.Add(-1, CodeCorrupt, "schema: "+err.Error())
		return spatial.Columns{}, nil
	}
	cols, ok := resolveColumns(rep, sc, geoJSON, cfg)
	if !ok {
		return cols, nil
	}
	if handled, err := checkColumns(ctx, rep, pf, cols, cfg); handled || err != nil {
		if handled && err == nil {
			FinishFile(rep, cols, cfg)
		}
		return cols, err
	}
	rr, err := fr.GetRecordReader(ctx, neededLeaves(pf, cols), nil)
	if err != nil {
		rep.Add(-1, CodeCorrupt, "reading: "+err.Error())
		return cols, nil
	}
	defer rr.Release()
	var row int64
	for rr.Next() {
		rec := rr.RecordBatch()
		CheckBatch(rep, rec, cols, cfg, row)
		row += rec.NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		if ctx.Err() != nil {
			return cols, context.Cause(ctx)
		}
		rep.Add(-1, CodeCorrupt, "reading: "+err.Error())
	}
	if row != pf.NumRows() && rep.Counts[CodeCorrupt] == 0 {
		rep.Add(-1, CodeCorrupt, fmt.Sprintf("read %d rows, footer says %d", row, pf.NumRows()))
	}
	FinishFile(rep, cols, cfg)
	return cols, nil
}

// FinishFile adds the checks that need every row (the file-level bbox) and
// the summary of the geometry read.
func FinishFile(rep *Report, cols spatial.Columns, cfg Config) {
	checkFileBBox(rep, cols, cfg)
	rep.Geometry = &GeometryInfo{Column: cols.Geometry, Encoding: cols.Encoding, CRS: cols.CRS, Types: rep.data.Types(), BBox: rep.data.BBoxSlice()}
}

// neededLeaves returns the Parquet leaf columns the checks read: the
// geometry and the bbox or covering columns. Reading only those keeps
// validation fast on wide files.
func neededLeaves(pf *file.Reader, cols spatial.Columns) []int {
	sc := pf.MetaData().Schema
	var out []int
	addLeaf := func(path string) {
		if i := sc.ColumnIndexByName(path); i >= 0 {
			out = append(out, i)
		}
	}
	addLeaf(cols.Geometry)
	for _, name := range cols.BBox {
		if name != "" {
			addLeaf(name)
		}
	}
	if cols.Covering != "" {
		for _, f := range cols.CoveringFields {
			addLeaf(cols.Covering + "." + f)
		}
	}
	return out
}

// ErrCorrupt wraps the reason a file could not be read as Parquet.
var ErrCorrupt = errors.New("validate: not a readable Parquet file")

// Inspect reads only the footer of the Parquet file at path and returns its
// Arrow schema and geometry columns (see spatial.DiscoverColumns, with
// cfg.Column and cfg.Props as hints). A corrupt file returns an error
// wrapping ErrCorrupt; a file whose geometry metadata is unusable returns
// the *spatial.ColumnError.
func Inspect(ctx context.Context, path string, cfg Config) (spatial.Columns, *arrow.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return spatial.Columns{}, nil, fmt.Errorf("inspect %s: %w", path, err)
	}
	defer f.Close()
	pf, err := footer.Open(f)
	if err != nil {
		return spatial.Columns{}, nil, fmt.Errorf("inspect %s: %w: %v", path, ErrCorrupt, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return spatial.Columns{}, nil, fmt.Errorf("inspect %s: %w: %v", path, ErrCorrupt, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return spatial.Columns{}, nil, fmt.Errorf("inspect %s: %w: %v", path, ErrCorrupt, err)
	}
	var geo *spatial.GeoMetadata
	if v := pf.MetaData().KeyValueMetadata().FindValue(spatial.GeoParquetKey); v != nil {
		if geo, err = spatial.ParseGeoMetadata([]byte(*v)); err != nil {
			return spatial.Columns{}, sc, fmt.Errorf("inspect %s: %w", path, err)
		}
	}
	cols, err := spatial.DiscoverColumns(sc, geo, spatial.Hints{Column: cfg.Column, Props: cfg.Props})
	if err != nil {
		return cols, sc, fmt.Errorf("inspect %s: %w", path, err)
	}
	return cols, sc, ctx.Err()
}
