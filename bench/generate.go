package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/geowrite"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// ErrGenerate marks a generator configuration that cannot be used.
var ErrGenerate = errors.New("bench: bad generate config")

// GenerateConfig describes a fragmented spatial table to build.
type GenerateConfig struct {
	// Table is the table to create, "ns.t". The namespace is created when
	// missing.
	Table string
	// Rows is the total number of rows (> 0).
	Rows int64
	// Commits is the number of append commits the rows arrive in (> 0,
	// <= Rows); each leaves at least one data file per partition it touches.
	Commits int
	// Geometry is points (default), lines or polygons.
	Geometry GeometryKind
	// Distribution is uniform (default), clustered, places or tracks.
	Distribution Distribution
	// Extent bounds every geometry; the zero value means spatial.World.
	Extent spatial.Bound
	// FormatVersion is 2 (default: WKB binary plus four bbox columns) or 3
	// (Iceberg's geometry type).
	FormatVersion int
	// BBoxColumns adds the four bbox columns to a v3 table; v2 tables always
	// have them.
	BBoxColumns bool
	// PartitionBy is a partition spec such as "day(ts)" or
	// "day(ts), bucket(8, device_id)"; empty means unpartitioned.
	PartitionBy string
	// CRS is recorded in the table properties (default OGC:CRS84).
	CRS string
	// Seed makes the table reproducible: the same config gives the same rows.
	Seed uint64
	// Start is the timestamp of the first row (default 2026-01-01T00:00Z);
	// rows are spread evenly over Span (default 72h) in arrival order.
	Start time.Time
	Span  time.Duration
	// Replace drops an existing table of the same name first.
	Replace bool
	// Properties are extra table properties.
	Properties map[string]string
	// Progress, when set, is called after each commit.
	Progress func(done, total int)
}

// GenerateResult summarises a generated table.
type GenerateResult struct {
	Table     string        `json:"table"`
	Rows      int64         `json:"rows"`
	Commits   int           `json:"commits"`
	DataFiles int           `json:"data_files"`
	Bytes     int64         `json:"bytes"`
	Extent    spatial.Bound `json:"extent"`
	Duration  time.Duration `json:"duration_ns"`
}

// withDefaults fills in the documented defaults.
func (c GenerateConfig) withDefaults() GenerateConfig {
	if c.Geometry == "" {
		c.Geometry = Points
	}
	if c.Distribution == "" {
		c.Distribution = Uniform
	}
	if c.Extent == (spatial.Bound{}) {
		c.Extent = spatial.World
	}
	if c.FormatVersion == 0 {
		c.FormatVersion = 2
	}
	if c.FormatVersion == 2 {
		c.BBoxColumns = true
	}
	if c.CRS == "" {
		c.CRS = spatial.DefaultCRS
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Span == 0 {
		c.Span = 72 * time.Hour
	}
	return c
}

// Validate reports the first problem with the config, naming the field.
func (c GenerateConfig) Validate() error {
	c = c.withDefaults()
	if _, err := catalogs.ParseIdentifier(c.Table); err != nil {
		return err
	}
	switch {
	case c.Rows <= 0:
		return fmt.Errorf("%w: rows must be positive, got %d", ErrGenerate, c.Rows)
	case c.Commits <= 0:
		return fmt.Errorf("%w: commits must be positive, got %d", ErrGenerate, c.Commits)
	case int64(c.Commits) > c.Rows:
		return fmt.Errorf("%w: %d commits cannot share %d rows", ErrGenerate, c.Commits, c.Rows)
	case c.FormatVersion != 2 && c.FormatVersion != 3:
		return fmt.Errorf("%w: format version must be 2 or 3, got %d", ErrGenerate, c.FormatVersion)
	case c.Extent.IsEmpty() || c.Extent.Width() == 0 || c.Extent.Height() == 0:
		return fmt.Errorf("%w: extent %v has no area", ErrGenerate, c.Extent)
	case c.Span < 0:
		return fmt.Errorf("%w: span must not be negative", ErrGenerate)
	}
	if _, err := ParseGeometryKind(string(c.Geometry)); err != nil {
		return fmt.Errorf("%w: %w", ErrGenerate, err)
	}
	if _, err := ParseDistribution(string(c.Distribution)); err != nil {
		return fmt.Errorf("%w: %w", ErrGenerate, err)
	}
	if c.Distribution == Places || c.Distribution == Tracks {
		if _, err := newPlaceSet(c.Extent); err != nil {
			return fmt.Errorf("%w: %w", ErrGenerate, err)
		}
	}
	if _, err := icebergtable.ParsePartitionSpec(c.PartitionBy, Schema(c.FormatVersion, c.BBoxColumns, c.CRS)); err != nil {
		return fmt.Errorf("%w: %w", ErrGenerate, err)
	}
	return nil
}

// ParseExtent parses "minx,miny,maxx,maxy".
func ParseExtent(s string) (spatial.Bound, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 4 {
		return spatial.Bound{}, fmt.Errorf("extent %q: want minx,miny,maxx,maxy", s)
	}
	var v [4]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return spatial.Bound{}, fmt.Errorf("extent %q: %q is not a number", s, p)
		}
		v[i] = f
	}
	b := spatial.Bound{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]}
	if !(b.MinX < b.MaxX && b.MinY < b.MaxY) {
		return spatial.Bound{}, fmt.Errorf("extent %q: min must be below max on both axes", s)
	}
	return b, nil
}

// Schema is the generated tables' schema: id, ts, device_id, geometry and,
// for v2 (or v3 with bboxColumns), the four bbox columns.
func Schema(formatVersion int, bboxColumns bool, crs string) *iceberg.Schema {
	var geom iceberg.Type = iceberg.PrimitiveTypes.Binary
	if formatVersion >= 3 {
		gt, err := iceberg.GeometryTypeOf(crs)
		if err != nil {
			gt = iceberg.GeometryType{}
		}
		geom = gt
	}
	fields := []iceberg.NestedField{
		{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		{ID: 3, Name: "device_id", Type: iceberg.PrimitiveTypes.Int32},
		{ID: 4, Name: "geometry", Type: geom},
	}
	if formatVersion < 3 || bboxColumns {
		for i, n := range spatial.BBoxColumns {
			fields = append(fields, iceberg.NestedField{ID: 5 + i, Name: n, Type: iceberg.PrimitiveTypes.Float64})
		}
	}
	return iceberg.NewSchema(0, fields...)
}

// Generate creates cfg.Table in cat and fills it with cfg.Commits append
// commits of random geometries in arrival order.
func Generate(ctx context.Context, cat catalog.Catalog, cfg GenerateConfig) (*GenerateResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	start := time.Now()
	tbl, err := createTable(ctx, cat, cfg)
	if err != nil {
		return nil, err
	}
	arrowSchema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", cfg.Table, err)
	}
	s, err := newSampler(cfg.Seed, cfg.Extent, cfg.Distribution, cfg.Geometry)
	if err != nil {
		return nil, err
	}
	res := &GenerateResult{Table: cfg.Table, Extent: spatial.EmptyBound()}
	var id int64
	for c := range cfg.Commits {
		n := cfg.Rows/int64(cfg.Commits) + boolInt(int64(c) < cfg.Rows%int64(cfg.Commits))
		rec, ext := buildBatch(arrowSchema, s, cfg, id, n)
		res.Extent = res.Extent.Extend(ext)
		id += n
		tbl, err = appendBatch(ctx, tbl, rec, iceberg.Properties{"geocompact.generate.commit": strconv.Itoa(c)})
		if err != nil {
			return nil, fmt.Errorf("generate %s: commit %d of %d: %w", cfg.Table, c+1, cfg.Commits, err)
		}
		if cfg.Progress != nil {
			cfg.Progress(c+1, cfg.Commits)
		}
	}
	res.Rows, res.Commits, res.Duration = id, cfg.Commits, time.Since(start)
	tasks, err := catalogs.PlanFiles(ctx, tbl.Scan())
	if err != nil {
		return nil, fmt.Errorf("generate %s: plan: %w", cfg.Table, err)
	}
	for _, t := range tasks {
		res.DataFiles++
		res.Bytes += t.File.FileSizeBytes()
	}
	return res, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// createTable creates the namespace (if needed) and the table, dropping an
// existing one when cfg.Replace is set.
func createTable(ctx context.Context, cat catalog.Catalog, cfg GenerateConfig) (*table.Table, error) {
	if cfg.Replace {
		ident, _ := catalogs.ParseIdentifier(cfg.Table)
		if err := cat.DropTable(ctx, ident); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
			return nil, fmt.Errorf("generate %s: drop old table: %w", cfg.Table, err)
		}
	}
	enc := spatial.EncodingWKB
	if cfg.FormatVersion >= 3 {
		enc = spatial.EncodingIcebergGeometry
	}
	props := icebergtable.SpatialTableProps(cfg.FormatVersion, spatial.Columns{Geometry: "geometry", Encoding: enc, CRS: cfg.CRS})
	maps.Copy(props, cfg.Properties)
	tbl, err := icebergtable.CreateTable(ctx, cat, cfg.Table, Schema(cfg.FormatVersion, cfg.BBoxColumns, cfg.CRS), cfg.PartitionBy, props)
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", cfg.Table, err)
	}
	return tbl, nil
}

// buildBatch makes n rows starting at id, with timestamps spread evenly
// over the config's span in id order.
func buildBatch(sc *arrow.Schema, s *sampler, cfg GenerateConfig, id, n int64) (arrow.RecordBatch, spatial.Bound) {
	mem := memory.DefaultAllocator
	ids := array.NewInt64Builder(mem)
	ts := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	dev := array.NewInt32Builder(mem)
	geo := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	var bb [4]*array.Float64Builder
	for i := range bb {
		bb[i] = array.NewFloat64Builder(mem)
	}
	ext := spatial.EmptyBound()
	step := cfg.Span.Microseconds() / max(cfg.Rows, 1)
	t0 := cfg.Start.UnixMicro()
	buf := make([]byte, 0, 256)
	for i := range n {
		row := id + i
		ids.Append(row)
		ts.Append(arrow.Timestamp(t0 + row*step))
		dev.Append(int32(s.rng.IntN(10000)))
		var b spatial.Bound
		buf, b = s.geometry(buf[:0])
		geo.Append(buf)
		ext = ext.Extend(b)
		bb[0].Append(b.MinX)
		bb[1].Append(b.MinY)
		bb[2].Append(b.MaxX)
		bb[3].Append(b.MaxY)
	}
	cols := []arrow.Array{ids.NewArray(), ts.NewArray(), dev.NewArray(), geoArray(sc.Field(3).Type, geo.NewArray())}
	if sc.NumFields() > 4 {
		for i := range bb {
			cols = append(cols, bb[i].NewArray())
		}
	}
	rec := array.NewRecordBatch(sc, cols, n)
	for _, c := range cols {
		c.Release()
	}
	return rec, ext
}

// geoArray wraps binary WKB storage in the column's extension type (the v3
// geometry column's geoarrow.wkb), or returns it as it is.
func geoArray(typ arrow.DataType, storage arrow.Array) arrow.Array {
	if et, ok := typ.(arrow.ExtensionType); ok {
		arr := array.NewExtensionArrayWithStorage(et, storage)
		storage.Release()
		return arr
	}
	return storage
}

// tamperGenerateGate, set by tests, alters what the commit gate is shown.
var tamperGenerateGate func(*format.GateGroup)

// appendBatch writes rec as GeoParquet data files of tbl and appends them
// in one snapshot. It releases rec. A batch that fails before its commit,
// or whose commit the catalog refused, deletes the files it wrote.
func appendBatch(ctx context.Context, tbl *table.Table, rec arrow.RecordBatch, props iceberg.Properties) (*table.Table, error) {
	read := rec.NumRows()
	rows := func(yield func(arrow.RecordBatch, error) bool) { yield(rec, nil) } // WriteRecords releases rec
	roots := format.IcebergRoots(tbl.Location(), tbl.Properties())
	wctx, created := format.Track(format.WithWriteScope(ctx, roots...))
	fail := func(err error) (*table.Table, error) {
		geowrite.RemoveWritten(context.WithoutCancel(ctx), tbl, created.Paths(),
			slog.With("table", strings.Join(tbl.Identifier(), ".")))
		return nil, err
	}
	var files []iceberg.DataFile
	for df, err := range geowrite.Records(wctx, tbl, rec.Schema(), rows) {
		if err != nil {
			return fail(err)
		}
		files = append(files, df)
	}
	group := format.GateGroup{Read: read, Files: format.GateFiles(files)}
	if tamperGenerateGate != nil {
		tamperGenerateGate(&group)
	}
	if err := (format.Gate{Op: "generate", Table: strings.Join(tbl.Identifier(), "."), Roots: roots}).Check([]format.GateGroup{group}); err != nil {
		return fail(err)
	}
	files, err := geowrite.FirstRowIDs(tbl.Metadata(), files)
	if err != nil {
		return fail(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, files, props, table.WithoutAutoNameMapping(), table.WithoutDuplicateCheck()); err != nil {
		return fail(err)
	}
	next, err := tx.Commit(ctx)
	if err != nil && catalogs.NothingCommitted(err) {
		return fail(err)
	}
	return next, err
}
