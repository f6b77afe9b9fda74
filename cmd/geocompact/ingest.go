package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
)

func init() { register(newIngestCmd) }

type ingestOptions struct {
	g             *globalOptions
	table         string
	files         []string
	create        bool
	addBBox       bool
	formatVersion int
	partitionBy   string
	geometry      string
	cfg           validate.Config
}

func newIngestCmd(g *globalOptions) *cobra.Command {
	o := &ingestOptions{g: g, cfg: validate.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "ingest --table NS.T FILE...",
		Short: "Validate GeoParquet files and append them to a table in one commit",
		Long: `Ingest validates every file first (WKB, CRS against the table's, bbox columns,
nulls, schema fit) and appends all of them in a single commit. Any violation
refuses the whole batch: nothing is written and the table is unchanged.

--create makes the table from the first file's schema and GeoParquet
metadata: v2 stores WKB in a binary column beside double bbox columns; v3
uses the Iceberg geometry type with the data's CRS. The geometry column,
encoding and CRS are recorded in table properties.`,
		Example: `  $ geocompact ingest --table gis.parcels --create --add-bbox parcels-*.parquet
  $ geocompact ingest --table gis.pings --create --format-version 3 --partition-by 'bucket(16, id)' pings.parquet`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			if err := o.complete(); err != nil {
				return err
			}
			return runIngest(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table to append to, NAMESPACE.TABLE (required)")
	f.BoolVar(&o.create, "create", false, "create the table from the first file when it does not exist")
	f.BoolVar(&o.addBBox, "add-bbox", false, "compute missing bbox columns from the WKB")
	f.IntVar(&o.formatVersion, "format-version", 2, "format version of a created table: 2 (WKB + bbox columns) or 3 (geometry type)")
	f.StringVar(&o.partitionBy, "partition-by", "", "partition spec of a created table, e.g. 'bucket(16, id)'")
	f.StringVar(&o.geometry, "geometry-column", "", "geometry column of the files (default: GeoParquet primary_column)")
	f.Float64Var(&o.cfg.Tolerance, "tolerance", o.cfg.Tolerance, "largest allowed difference between a bbox column and the geometry's envelope")
	f.BoolVar(&o.cfg.AllowNull, "allow-null", false, "accept null geometries")
	f.IntVar(&o.cfg.MaxExamples, "max-examples", o.cfg.MaxExamples, "offending rows to show per refused file")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

func (o *ingestOptions) complete() error {
	if _, err := engine.ParseIdentifier(o.table); err != nil {
		return usageErrorf("--table: %v", err)
	}
	if o.formatVersion != 2 && o.formatVersion != 3 {
		return usageErrorf("--format-version %d: want 2 or 3", o.formatVersion)
	}
	if !o.create && (o.partitionBy != "" || o.formatVersion != 2) {
		return usageErrorf("--partition-by and --format-version apply only with --create")
	}
	o.cfg.Logger = o.g.Logger()
	if err := o.cfg.Validate(); err != nil {
		return &usageError{err}
	}
	return nil
}

// ingestResult is what ingest prints.
type ingestResult struct {
	Table      string `json:"table"`
	Created    bool   `json:"created"`
	SnapshotID int64  `json:"snapshot_id"`
	Files      int    `json:"files"`
	Rows       int64  `json:"rows"`
}

func runIngest(ctx context.Context, o *ingestOptions) error {
	cat, spec, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	ident, _ := engine.ParseIdentifier(o.table)
	tbl, err := cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) && !o.create:
		return fmt.Errorf("table %s does not exist (use --create to make it from the files)", o.table)
	case errors.Is(err, catalog.ErrNoSuchTable):
		tbl = nil
	case err != nil:
		return fmt.Errorf("load table %s: %w", o.table, err)
	}

	// 1. Work out what the files must look like.
	target, err := o.ingestTarget(ctx, tbl)
	if err != nil {
		return err
	}
	// 2. Validate every file before anything is written.
	if err := o.validateAll(ctx, target); err != nil {
		return err
	}
	// 3. Read and conform every file to the table's schema; a misfit is
	// refused here, still before anything is written or created.
	var (
		newSchema *iceberg.Schema
		newProps  iceberg.Properties
		arrowSc   *arrow.Schema
	)
	if tbl == nil {
		if newSchema, newProps, err = o.tableSchemaFor(ctx, target); err != nil {
			return err
		}
		arrowSc, err = table.SchemaToArrowSchemaWithOptions(newSchema, table.ArrowSchemaOptions{TableProperties: newProps})
	} else {
		arrowSc, err = table.SchemaToArrowSchemaWithOptions(tbl.Schema(), table.ArrowSchemaOptions{TableProperties: tbl.Properties()})
	}
	if err != nil {
		return fmt.Errorf("arrow schema of %s: %w", o.table, err)
	}
	batches, rows, err := readConformed(ctx, o.files, arrowSc, target.cols.Geometry, o.addBBox)
	if err != nil {
		return fmt.Errorf("ingest into %s refused, nothing was written: %w", o.table, err)
	}
	defer batches.release()
	created := false
	if tbl == nil {
		if _, err = createTable(ctx, cat, ident, newSchema, newProps, o.partitionBy); err != nil {
			return fmt.Errorf("create %s: %w", o.table, err)
		}
		created = true
	}

	// 4. Write the data files once, then add them in one commit, replayed
	// on a fresh base if another writer commits first. Files of a commit
	// that definitely failed are deleted, so a refused or lost ingest
	// leaves nothing behind.
	snapID, err := o.commit(ctx, cat, ident, spec.Retries(), batches)
	if err != nil {
		if created {
			// Leave no empty table behind a failed first ingest.
			if derr := cat.DropTable(ctx, ident); derr != nil {
				o.g.Logger().Warn("drop table after failed ingest", "table", o.table, "error", derr)
			}
		}
		return fmt.Errorf("ingest into %s: %w", o.table, err)
	}
	o.g.Logger().Info("ingest done", "table", o.table, "files", len(o.files), "rows", rows, "snapshot_id", snapID)
	res := ingestResult{Table: o.table, Created: created, SnapshotID: snapID, Files: len(o.files), Rows: rows}
	if o.g.JSON {
		return json.NewEncoder(o.g.IO.Out).Encode(res)
	}
	tw := tabwriter.NewWriter(o.g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tCREATED\tFILES\tROWS\tSNAPSHOT")
	fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\n", res.Table, res.Created, res.Files, res.Rows, res.SnapshotID)
	return tw.Flush()
}

// commit writes batches as data files of the table and appends them in one
// snapshot, retrying lost races on a fresh base. It returns the new
// snapshot's id.
func (o *ingestOptions) commit(ctx context.Context, cat catalog.Catalog, ident table.Identifier, retries int, batches *conformedFiles) (int64, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return 0, err
	}
	if tbl.Metadata().Version() >= 3 {
		// v3 data files need first_row_id from the head they commit on,
		// so each attempt writes through tx.Append.
		return o.appendV3(ctx, cat, ident, retries, batches)
	}
	var files []iceberg.DataFile
	for df, err := range table.WriteRecords(ctx, tbl, batches.schema, batches.all()) {
		if err != nil {
			o.removeFiles(ctx, tbl, files)
			return 0, fmt.Errorf("write data files: %w", err)
		}
		files = append(files, df)
	}
	snapProps := iceberg.Properties{"geocompact.operation": "ingest", "geocompact.ingest.files": strconv.Itoa(len(o.files))}
	var snapID int64
	err = engine.WithCommitRetry(ctx, retries, func(ctx context.Context) error {
		cur, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return err
		}
		tx := cur.NewTransaction()
		if err := tx.AddDataFiles(ctx, files, snapProps, table.WithoutAutoNameMapping()); err != nil {
			return fmt.Errorf("add data files: %w", err)
		}
		after, err := tx.Commit(ctx)
		if err != nil {
			return err
		}
		snapID = after.CurrentSnapshot().SnapshotID
		return nil
	})
	if err != nil && (engine.IsRetryable(err) || errors.Is(err, context.Canceled)) {
		// The catalog refused the commit: the files are referenced by no
		// snapshot and are ours to delete.
		o.removeFiles(context.WithoutCancel(ctx), tbl, files)
	}
	return snapID, err
}

// appendV3 appends batches to a v3 table in one snapshot, retrying lost
// races. Row lineage ties data files to the head they commit on, so every
// attempt writes its files anew; iceberg-go replays its own retries
// (commit.retry.num-retries) with the files already written, and files of
// an attempt that failed here stay as orphans for orphan cleanup.
func (o *ingestOptions) appendV3(ctx context.Context, cat catalog.Catalog, ident table.Identifier, retries int, batches *conformedFiles) (int64, error) {
	snapProps := iceberg.Properties{"geocompact.operation": "ingest", "geocompact.ingest.files": strconv.Itoa(len(o.files))}
	var snapID int64
	err := engine.WithCommitRetry(ctx, retries, func(ctx context.Context) error {
		cur, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return err
		}
		tx := cur.NewTransaction()
		rdr, err := array.NewRecordReader(batches.schema, batches.flat())
		if err != nil {
			return err
		}
		err = tx.Append(ctx, rdr, snapProps)
		rdr.Release()
		if err != nil {
			return fmt.Errorf("append: %w", err)
		}
		after, err := tx.Commit(ctx)
		if err != nil {
			return err
		}
		snapID = after.CurrentSnapshot().SnapshotID
		return nil
	})
	return snapID, err
}

// removeFiles deletes data files this ingest wrote, logging failures: an
// undeleted file is an orphan that orphan cleanup removes later.
func (o *ingestOptions) removeFiles(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) {
	if len(files) == 0 {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		o.g.Logger().Warn("remove written files", "table", o.table, "error", err)
		return
	}
	for _, f := range files {
		if err := fsys.Remove(f.FilePath()); err != nil {
			o.g.Logger().Warn("remove written file", "path", f.FilePath(), "error", err)
		}
	}
}

// ingestTarget is what the files are checked and conformed against: the
// existing table's geometry, or for --create what the first file declares.
type ingestTarget struct {
	cols     spatial.Columns // geometry column and CRS to match
	wantBBox bool            // the table stores bbox columns
	encoding string          // table encoding
}

func (o *ingestOptions) ingestTarget(ctx context.Context, tbl *table.Table) (ingestTarget, error) {
	if tbl != nil {
		cols, err := spatial.DiscoverTableColumns(tbl.Schema(), tbl.Properties(), "")
		if err != nil {
			return ingestTarget{}, fmt.Errorf("table %s: %w", o.table, err)
		}
		return ingestTarget{cols: cols, wantBBox: cols.HasBBox(), encoding: cols.Encoding}, nil
	}
	cfg := o.cfg
	cfg.Column = o.geometry
	cols, _, err := validate.Inspect(ctx, o.files[0], cfg)
	if err != nil && !errors.Is(err, validate.ErrCorrupt) {
		var ce *spatial.ColumnError
		if !errors.As(err, &ce) {
			return ingestTarget{}, err
		}
	}
	// A corrupt or unusable first file is reported by validation below.
	crs := cols.CRS
	if crs == "" {
		crs = spatial.DefaultCRS
	}
	enc := spatial.EncodingWKB
	if o.formatVersion >= 3 {
		enc = spatial.EncodingIcebergGeometry
	}
	name := cols.Geometry
	if name == "" {
		name = "geometry"
	}
	t := ingestTarget{
		cols:     spatial.Columns{Geometry: name, Encoding: enc, CRS: crs},
		wantBBox: o.formatVersion < 3 || o.addBBox,
		encoding: enc,
	}
	return t, nil
}

// validateAll validates every file and refuses the batch on any violation,
// printing the reports.
func (o *ingestOptions) validateAll(ctx context.Context, t ingestTarget) error {
	cfg := o.cfg
	cfg.Column = o.geometry
	if cfg.Column == "" {
		cfg.Column = t.cols.Geometry
	}
	cfg.CRS = t.cols.CRS
	cfg.RequireBBox = t.wantBBox && !o.addBBox
	var res validateResult
	res.OK = true
	prog := newProgress(o.g, "validating", "files")
	for i, path := range o.files {
		rep, err := validate.File(ctx, path, cfg)
		if err != nil {
			prog.Done()
			return err
		}
		res.Inputs = append(res.Inputs, inputReport{Input: path, OK: rep.OK(), Violations: rep.Violations(), Report: rep})
		res.OK = res.OK && rep.OK()
		prog.Update(i+1, len(o.files))
	}
	prog.Done()
	if res.OK {
		return nil
	}
	var bad int
	var n int64
	for _, in := range res.Inputs {
		if !in.OK {
			bad++
			n += in.Violations
		}
	}
	if err := writeValidateResult(o.g.IO.Out, o.g.JSON, res); err != nil {
		return err
	}
	return &exitCodeError{code: exitViolation, err: fmt.Errorf("ingest into %s refused: %d violations in %d of %d files; nothing was written", o.table, n, bad, len(o.files))}
}

// tableSchemaFor derives the schema and properties of a table created from
// the first file: its columns as they are, plus bbox columns with
// --add-bbox, the geometry column as WKB binary (v2) or the geometry type
// with the data's CRS (v3).
func (o *ingestOptions) tableSchemaFor(ctx context.Context, t ingestTarget) (*iceberg.Schema, iceberg.Properties, error) {
	cfg := o.cfg
	cfg.Column = t.cols.Geometry
	_, sc, err := validate.Inspect(ctx, o.files[0], cfg)
	if err != nil {
		return nil, nil, err
	}
	fields := sc.Fields()
	for i, f := range fields {
		if f.Name == t.cols.Geometry {
			fields[i].Type = arrow.BinaryTypes.Binary
			fields[i].Metadata = arrow.Metadata{}
		}
	}
	if t.wantBBox {
		for _, name := range spatial.BBoxColumns {
			if len(sc.FieldIndices(name)) == 0 {
				fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
			}
		}
	}
	isc, err := table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, nil), true)
	if err != nil {
		return nil, nil, fmt.Errorf("derive schema from %s: %w", o.files[0], err)
	}
	props := iceberg.Properties{
		table.PropertyFormatVersion:  strconv.Itoa(o.formatVersion),
		spatial.PropGeometryColumn:   t.cols.Geometry,
		spatial.PropGeometryEncoding: t.encoding,
		spatial.PropCRS:              t.cols.CRS,
		// iceberg-go replays a commit that lost a race on the fresh head,
		// reusing the data files it wrote rather than writing them again.
		table.CommitNumRetriesKey: "4",
	}
	if o.formatVersion < 3 {
		// Truncated binary bounds of WKB are useless in manifests.
		props["write.metadata.metrics.column."+t.cols.Geometry] = "none"
		return isc, props, nil
	}
	gt, err := iceberg.GeometryTypeOf(t.cols.CRS)
	if err != nil {
		return nil, nil, fmt.Errorf("geometry type for CRS %s: %w", t.cols.CRS, err)
	}
	out := make([]iceberg.NestedField, 0, len(isc.Fields()))
	for _, f := range isc.Fields() {
		if f.Name == t.cols.Geometry {
			f.Type = gt
		}
		out = append(out, f)
	}
	return iceberg.NewSchema(0, out...), props, nil
}

// createTable creates the namespace if needed and the table.
func createTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, sc *iceberg.Schema, props iceberg.Properties, partitionBy string) (*table.Table, error) {
	spec, err := bench.ParsePartitionSpec(partitionBy, sc)
	if err != nil {
		return nil, usageErrorf("--partition-by: %v", err)
	}
	ns := catalog.NamespaceFromIdent(ident)
	exists, err := cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("check namespace %v: %w", ns, err)
	}
	if !exists {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("create namespace %v: %w", ns, err)
		}
	}
	tbl, err := cat.CreateTable(ctx, ident, sc, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	return tbl, nil
}

// conformedFiles holds each file's batches in the table's Arrow schema.
type conformedFiles struct {
	schema *arrow.Schema
	files  [][]arrow.RecordBatch
}

// flat returns every file's batches in file order.
func (c *conformedFiles) flat() []arrow.RecordBatch {
	var all []arrow.RecordBatch
	for _, f := range c.files {
		all = append(all, f...)
	}
	return all
}

// all yields every file's batches in file order. Each is retained for the
// consumer, which releases it (table.WriteRecords does).
func (c *conformedFiles) all() iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, f := range c.files {
			for _, r := range f {
				r.Retain()
				if !yield(r, nil) {
					r.Release()
					return
				}
			}
		}
	}
}

func (c *conformedFiles) release() {
	for _, f := range c.files {
		for _, r := range f {
			r.Release()
		}
	}
}

// readConformed reads every file and conforms its batches to target, the
// table's Arrow schema, computing bbox columns when addBBox is set. Any
// misfit is an error naming the file and column.
func readConformed(ctx context.Context, paths []string, target *arrow.Schema, geometry string, addBBox bool) (*conformedFiles, int64, error) {
	out := &conformedFiles{schema: target, files: make([][]arrow.RecordBatch, len(paths))}
	var rows int64
	for i, path := range paths {
		err := readParquet(ctx, path, func(rec arrow.RecordBatch) error {
			c, err := conform(ctx, rec, target, geometry, addBBox)
			if err != nil {
				return err
			}
			out.files[i] = append(out.files[i], c)
			rows += c.NumRows()
			return nil
		})
		if err != nil {
			out.release()
			return nil, 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, rows, nil
}

// readParquet calls fn with each batch of the Parquet file at path.
func readParquet(ctx context.Context, path string, fn func(arrow.RecordBatch) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// conform returns rec in the target schema: columns matched by name,
// WKB wrapped in (or unwrapped from) the geoarrow extension as the table
// needs, integers and floats widened, absent optional columns filled with
// nulls and, with addBBox, missing bbox columns computed from the WKB.
func conform(ctx context.Context, rec arrow.RecordBatch, target *arrow.Schema, geometry string, addBBox bool) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	sc := rec.Schema()
	for _, f := range sc.Fields() {
		if len(target.FieldIndices(f.Name)) == 0 {
			return nil, fmt.Errorf("column %q is not in the table", f.Name)
		}
	}
	var bbox []arrow.Array
	if addBBox && !hasAllBBox(sc) {
		idx := sc.FieldIndices(geometry)
		if len(idx) != 1 {
			return nil, fmt.Errorf("geometry column %q is missing", geometry)
		}
		bbox = computeBBox(rec.Column(idx[0]))
		defer func() {
			for _, a := range bbox {
				a.Release()
			}
		}()
	}
	cols := make([]arrow.Array, 0, target.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, tf := range target.Fields() {
		col, err := conformColumn(ctx, rec, tf, bbox)
		if err != nil {
			return nil, err
		}
		if !tf.Nullable && col.NullN() > 0 {
			col.Release()
			return nil, fmt.Errorf("column %q has %d nulls but the table requires it", tf.Name, col.NullN())
		}
		cols = append(cols, col)
	}
	return array.NewRecordBatch(target, cols, n), nil
}

func hasAllBBox(sc *arrow.Schema) bool {
	for _, name := range spatial.BBoxColumns {
		if len(sc.FieldIndices(name)) == 0 {
			return false
		}
	}
	return true
}

// conformColumn returns the data for table field tf (a new reference).
func conformColumn(ctx context.Context, rec arrow.RecordBatch, tf arrow.Field, bbox []arrow.Array) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(tf.Name)
	if len(idx) == 0 {
		for i, name := range spatial.BBoxColumns {
			if name != tf.Name {
				continue
			}
			if bbox == nil {
				// Null boxes would hide every row from bbox pruning.
				return nil, fmt.Errorf("column %q is missing (a GeoParquet covering does not fill it; use --add-bbox)", tf.Name)
			}
			bbox[i].Retain()
			return bbox[i], nil
		}
		if !tf.Nullable {
			return nil, fmt.Errorf("column %q is required by the table but missing", tf.Name)
		}
		return array.MakeArrayOfNull(memory.DefaultAllocator, tf.Type, int(rec.NumRows())), nil
	}
	col := rec.Column(idx[0])
	if ext, ok := col.(array.ExtensionArray); ok && !arrow.TypeEqual(col.DataType(), tf.Type) {
		col = ext.Storage()
	}
	switch {
	case arrow.TypeEqual(col.DataType(), tf.Type):
		col.Retain()
		return col, nil
	}
	if et, ok := tf.Type.(arrow.ExtensionType); ok && arrow.TypeEqual(col.DataType(), et.StorageType()) {
		return array.NewExtensionArrayWithStorage(et, col), nil
	}
	if widens(col.DataType(), tf.Type) {
		out, err := compute.CastArray(ctx, col, compute.SafeCastOptions(tf.Type))
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", tf.Name, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("column %q has type %s, the table wants %s", tf.Name, col.DataType(), tf.Type)
}

// widens reports whether from converts to to without loss.
func widens(from, to arrow.DataType) bool {
	switch to.ID() {
	case arrow.INT64:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return true
		}
	case arrow.INT32:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16:
			return true
		}
	case arrow.FLOAT64:
		return from.ID() == arrow.FLOAT32
	case arrow.STRING:
		return from.ID() == arrow.LARGE_STRING
	case arrow.BINARY:
		return from.ID() == arrow.LARGE_BINARY
	}
	return false
}

// computeBBox returns the four bbox columns of a WKB column. Null
// geometries get null boxes, empty ones NaN; invalid WKB never reaches
// here (validation refused it).
func computeBBox(geom arrow.Array) []arrow.Array {
	if ext, ok := geom.(array.ExtensionArray); ok {
		geom = ext.Storage()
	}
	var bs [4]*array.Float64Builder
	for i := range bs {
		bs[i] = array.NewFloat64Builder(memory.DefaultAllocator)
		bs[i].Reserve(geom.Len())
	}
	value := func(i int) []byte { return nil }
	switch g := geom.(type) {
	case *array.Binary:
		value = g.Value
	case *array.LargeBinary:
		value = g.Value
	case *array.BinaryView:
		value = g.Value
	}
	for i := range geom.Len() {
		if geom.IsNull(i) {
			for _, b := range bs {
				b.AppendNull()
			}
			continue
		}
		env, err := spatial.Envelope(value(i))
		if err != nil || env.IsEmpty() {
			for _, b := range bs {
				b.Append(math.NaN())
			}
			continue
		}
		bs[0].Append(env.MinX)
		bs[1].Append(env.MinY)
		bs[2].Append(env.MaxX)
		bs[3].Append(env.MaxY)
	}
	out := make([]arrow.Array, 4)
	for i, b := range bs {
		out[i] = b.NewArray()
		b.Release()
	}
	return out
}
