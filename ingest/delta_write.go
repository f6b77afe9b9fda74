package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
)

// deltaIngest is one RunDelta past its checks: the sources to append, the
// snapshot they were checked on (nil: the table is to be created), and,
// once written, each source's data files.
type deltaIngest struct {
	*ingester
	tbl     *delta.Table
	read    *delta.Snapshot
	parts   []string
	create  []delta.Action // protocol and metaData of a table to create
	written [][]*delta.Add // by source
	rows    []int64        // by source
}

// run validates, conforms, writes and commits the sources.
func (d *deltaIngest) run(ctx context.Context, res *DeltaResult) error {
	tgt, err := d.deltaTarget(ctx)
	if err != nil {
		return err
	}
	if err := d.validateAll(ctx, tgt); err != nil {
		return err
	}
	ws, err := d.writeSnapshot(ctx, tgt)
	if err != nil {
		return err
	}
	d.parts = ws.Metadata.PartitionColumns
	arrowSc, err := ws.ArrowSchema()
	if err != nil {
		return fmt.Errorf("ingest into %s: %w", d.cfg.Table, err)
	}
	if _, err := d.extraColumns(ctx, arrowSc); err != nil {
		return err
	}
	batches := &conformStream{ctx: ctx, paths: d.cfg.Files, schema: arrowSc,
		conf: conformOpts{geometry: tgt.cols.Geometry, addBBox: d.cfg.AddBBox, dropExtra: d.cfg.DropExtraColumns},
		read: readOpts{mem: d.cfg.allocator(), budget: d.cfg.memoryBytes()}}
	if err := d.write(ctx, ws, batches, tgt.cols); err != nil {
		if ce, ok := errors.AsType[*ConformError](err); ok {
			return fmt.Errorf("ingest into %s refused, nothing was written: %w", d.cfg.Table, ce)
		}
		return fmt.Errorf("ingest into %s: %w", d.cfg.Table, err)
	}
	return d.commit(ctx, ws, res)
}

// deltaTarget is the geometry the files must match: the table's, or for
// a table to create, the first file's.
func (d *deltaIngest) deltaTarget(ctx context.Context) (target, error) {
	if d.read != nil {
		return deltaTarget(d.read, d.cfg.Table, d.cfg.GeometryColumn)
	}
	return d.target(ctx, nil)
}

// writeSnapshot is the snapshot data files are written for: the table's,
// or that of the table to create from the first file, whose protocol and
// metaData actions it keeps for the commit.
func (d *deltaIngest) writeSnapshot(ctx context.Context, tgt target) (*delta.Snapshot, error) {
	if d.read != nil {
		return d.read, nil
	}
	asc, err := d.newArrowSchema(ctx, tgt)
	if err != nil {
		return nil, err
	}
	sc, err := delta.SchemaFromArrow(asc)
	if err != nil {
		return nil, fmt.Errorf("derive schema from %s: %w", d.cfg.Files[0], err)
	}
	if slices.Contains(d.parts, tgt.cols.Geometry) {
		return nil, fmt.Errorf("%w: the geometry column %q cannot partition a table", ErrPartitionSpec, tgt.cols.Geometry)
	}
	props := map[string]string{
		spatial.PropGeometryColumn:   tgt.cols.Geometry,
		spatial.PropGeometryEncoding: spatial.EncodingWKB,
		spatial.PropCRS:              tgt.cols.CRS,
	}
	d.create, err = delta.CreateActions(delta.TableSpec{Schema: sc, PartitionColumns: d.parts, Configuration: props}, time.Now())
	if errors.Is(err, delta.ErrPartitionColumn) {
		return nil, fmt.Errorf("%w: %w", ErrPartitionSpec, err)
	}
	if err != nil {
		return nil, err
	}
	return delta.SnapshotOf(d.create)
}

// write streams each source's batches into data files of s, one per
// source and partition, with stats and GeoParquet metadata. On an error it
// deletes what it wrote.
func (d *deltaIngest) write(ctx context.Context, s *delta.Snapshot, batches *conformStream, cols spatial.Columns) error {
	d.written = make([][]*delta.Add, len(batches.paths))
	d.rows = make([]int64, len(batches.paths))
	geo := cols
	if f := s.Schema.Field(cols.Geometry); f != nil {
		geo.Geometry = f.PhysicalName(s.ColumnMapping())
	}
	for i, path := range batches.paths {
		fw := &deltaFileSet{tbl: d.tbl, snap: s, source: i, geo: geo, geoCol: cols.Geometry, files: map[string]*deltaFile{}}
		adds, err := fw.writeAll(ctx, func(fn func(arrow.RecordBatch) error) error {
			return batches.file(path, func(rec arrow.RecordBatch) error {
				d.rows[i] += rec.NumRows()
				return fn(rec)
			})
		})
		d.written[i] = adds
		if err != nil {
			d.removeWritten(ctx, d.written...)
			return err
		}
	}
	return nil
}

// removeWritten deletes data files that no commit references, logging
// failures: an undeleted one is left for vacuum.
func (d *deltaIngest) removeWritten(ctx context.Context, sets ...[]*delta.Add) {
	for _, adds := range sets {
		for _, a := range adds {
			p, inside, err := d.tbl.Store.TableRoot().Canonical(a.Path)
			if err == nil && !inside {
				err = fmt.Errorf("%s is outside the table; not deleted", p)
			}
			if err == nil {
				err = d.tbl.Store.Delete(context.WithoutCancel(ctx), p)
			}
			if err != nil {
				d.log.Warn("remove written file", "path", a.Path, "error", err)
			}
		}
	}
}

// deltaFileSet writes one source's rows, a data file per partition.
type deltaFileSet struct {
	tbl    *delta.Table
	snap   *delta.Snapshot
	source int
	geo    spatial.Columns // with the physical geometry column name
	geoCol string          // the logical one, in the batches
	files  map[string]*deltaFile
	order  []string
}

type deltaFile struct {
	name  string
	w     *delta.FileWriter
	stats *spatial.GeoStats
}

// writeAll writes recs and closes the files, returning their add actions.
// On an error the files it opened are closed and deleted.
func (fs *deltaFileSet) writeAll(ctx context.Context, each func(func(arrow.RecordBatch) error) error) ([]*delta.Add, error) {
	if err := each(func(rec arrow.RecordBatch) error { return fs.writeBatch(ctx, rec) }); err != nil {
		fs.abort(ctx)
		return nil, err
	}
	var adds []*delta.Add
	for _, key := range fs.order {
		f := fs.files[key]
		doc, err := f.stats.Metadata(fs.geo).Marshal()
		if err == nil {
			err = f.w.SetFileMetadata("geo", string(doc))
		}
		var add *delta.Add
		if err == nil {
			add, err = f.w.Close()
		}
		f.w = nil
		if err != nil {
			fs.abort(ctx)
			return nil, err
		}
		adds = append(adds, add)
	}
	return adds, nil
}

func (fs *deltaFileSet) writeBatch(ctx context.Context, rec arrow.RecordBatch) error {
	groups, err := splitPartitions(ctx, rec, fs.snap)
	if err != nil {
		return err
	}
	defer func() {
		for _, g := range groups {
			g.rec.Release()
		}
	}()
	for _, g := range groups {
		f, err := fs.file(ctx, g)
		if err != nil {
			return err
		}
		if err := f.w.Write(g.rec); err != nil {
			return err
		}
		if idx := g.rec.Schema().FieldIndices(fs.geoCol); len(idx) == 1 {
			f.stats.AddArray(g.rec.Column(idx[0]))
		}
	}
	return nil
}

// file returns the open file of g's partition, starting it if need be.
func (fs *deltaFileSet) file(ctx context.Context, g partGroup) (*deltaFile, error) {
	if f, ok := fs.files[g.key]; ok {
		return f, nil
	}
	name := path.Join(delta.PartitionDir(fs.snap.PhysicalPartitionColumns(), g.values),
		fmt.Sprintf("part-%05d-%s.c000.zstd.parquet", fs.source, uuid.NewString()))
	w, err := fs.tbl.NewFileWriter(ctx, fs.snap, name, g.values, nil)
	if err != nil {
		return nil, err
	}
	f := &deltaFile{name: name, w: w, stats: spatial.NewGeoStats()}
	fs.files[g.key] = f
	fs.order = append(fs.order, g.key)
	return f, nil
}

// abort closes the files still open and deletes every file of the set.
func (fs *deltaFileSet) abort(ctx context.Context) {
	for _, f := range fs.files {
		if f.w != nil {
			_, _ = f.w.Close() // publishes the file, deleted next
		}
		_ = fs.tbl.Store.Delete(context.WithoutCancel(ctx), f.name)
	}
}

// partGroup is the rows of a batch in one partition.
type partGroup struct {
	key    string
	values map[string]*string // by physical partition column
	rec    arrow.RecordBatch
}

// splitPartitions splits rec (in the table's logical schema) by the
// values of the snapshot's partition columns, in order of first row. The
// caller releases the groups' batches.
func splitPartitions(ctx context.Context, rec arrow.RecordBatch, s *delta.Snapshot) ([]partGroup, error) {
	logical, phys := s.Metadata.PartitionColumns, s.PhysicalPartitionColumns()
	if len(logical) == 0 {
		rec.Retain()
		return []partGroup{{values: map[string]*string{}, rec: rec}}, nil
	}
	cols := make([]arrow.Array, len(logical))
	for j, name := range logical {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("partition column %q is not in the batch", name)
		}
		cols[j] = rec.Column(idx[0])
	}
	var groups []partGroup
	rows := map[string][]int64{}
	for r := range int(rec.NumRows()) {
		values := make(map[string]*string, len(logical))
		var key strings.Builder
		for j, c := range cols {
			v, err := delta.FormatPartitionValue(c, r)
			if err != nil {
				return nil, fmt.Errorf("partition column %q: %w", logical[j], err)
			}
			values[phys[j]] = v
			b, _ := json.Marshal(v)
			key.Write(b)
			key.WriteByte(',')
		}
		k := key.String()
		if _, seen := rows[k]; !seen {
			groups = append(groups, partGroup{key: k, values: values})
		}
		rows[k] = append(rows[k], int64(r))
	}
	for i := range groups {
		sub, err := takeRows(ctx, rec, rows[groups[i].key])
		if err != nil {
			for _, g := range groups[:i] {
				g.rec.Release()
			}
			return nil, err
		}
		groups[i].rec = sub
	}
	return groups, nil
}

// takeRows returns the rows of rec at indices, in that order.
func takeRows(ctx context.Context, rec arrow.RecordBatch, indices []int64) (arrow.RecordBatch, error) {
	if len(indices) == int(rec.NumRows()) {
		rec.Retain()
		return rec, nil
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.AppendValues(indices, nil)
	idx := b.NewArray()
	defer idx.Release()
	cols := make([]arrow.Array, 0, rec.NumCols())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, c := range rec.Columns() {
		out, err := compute.TakeArray(ctx, c, idx)
		if err != nil {
			return nil, fmt.Errorf("split partitions: %w", err)
		}
		cols = append(cols, out)
	}
	return array.NewRecordBatch(rec.Schema(), cols, int64(len(indices))), nil
}

// commit commits the written files with a txn per source, creating the
// table in the same commit when it is new. A lost race is retried on the
// latest snapshot (see retry). Files of a commit that definitely did not
// land are deleted.
func (d *deltaIngest) commit(ctx context.Context, ws *delta.Snapshot, res *DeltaResult) error {
	readVersion := int64(-1)
	if d.read != nil {
		readVersion = d.read.Version
	}
	attempts := DefaultDeltaCommitAttempts
	if d.cfg.CommitRetries != 0 {
		attempts = max(d.cfg.CommitRetries, 0) + 1
	}
	if err := d.gate(); err != nil {
		d.removeWritten(ctx, d.written...)
		return fmt.Errorf("ingest into %s: %w", d.cfg.Table, err)
	}
	v, err := delta.CommitAppend(ctx, d.tbl, d.read, d.actions(readVersion+1, readVersion), attempts,
		func(cur *delta.Snapshot) ([]delta.Action, error) { return d.retry(ctx, ws, cur, res) })
	if err != nil {
		if definitelyNotCommitted(err) {
			d.removeWritten(ctx, d.written...)
		}
		return fmt.Errorf("ingest into %s: %w", d.cfg.Table, err)
	}
	if v < 0 {
		return nil // every file was ingested concurrently
	}
	res.Version, res.Created = v, d.create != nil
	res.Files = len(d.sources)
	for i := range d.sources {
		res.DataFiles += len(d.written[i])
		res.Rows += d.rows[i]
	}
	if _, err := d.tbl.MaybeCheckpoint(ctx, v); err != nil {
		d.log.Warn("checkpoint after ingest", "table", d.cfg.Table, "version", v, "error", err)
	}
	return nil
}

// definitelyNotCommitted says whether a commit error means the commit did
// not land, so its data files are unreferenced. Any other error (an I/O
// error, a cancelled request) may hide a commit that landed: its files
// stay, and vacuum removes them if they are unreferenced.
func definitelyNotCommitted(err error) bool {
	return errors.As(err, new(*delta.VersionExistsError)) || errors.As(err, new(*delta.ConflictError)) ||
		errors.As(err, new(*delta.UnsupportedFeatureError)) || errors.As(err, new(*delta.ProtocolVersionError))
}

// retry prepares the commit again on cur after another writer won the
// race: the table must still take the written files (delta.CheckAppend)
// with the geometry properties they were validated against,
// and sources a concurrent ingest appended are dropped, their files
// deleted, so no file is ever appended twice. It returns nil actions when
// no source is left.
func (d *deltaIngest) retry(ctx context.Context, ws *delta.Snapshot, cur *delta.Snapshot, res *DeltaResult) ([]delta.Action, error) {
	if err := delta.CheckAppend(ws.Metadata, cur); err != nil {
		return nil, err
	}
	for _, k := range []string{spatial.PropGeometryColumn, spatial.PropGeometryEncoding, spatial.PropCRS} {
		if ws.Metadata.Configuration[k] != cur.Metadata.Configuration[k] {
			// The files were validated against other geometry properties
			// (another ingest created the table from data in another CRS).
			return nil, &delta.ConflictError{Version: cur.Version, Reason: "the table property " + k + " changed"}
		}
	}
	d.create = nil // the table exists now, with the same schema
	res.Version = cur.Version
	if !d.cfg.AllowDuplicates {
		var keep []int
		for i, src := range d.sources {
			if v, ok := cur.Txns[TxnAppID(src.digest)]; ok {
				res.Skipped = append(res.Skipped, DeltaSkipped{Path: src.path, Digest: src.digest, Version: &v})
				d.removeWritten(ctx, d.written[i])
				continue
			}
			keep = append(keep, i)
		}
		d.keepSources(keep)
	}
	if len(d.sources) == 0 {
		return nil, nil
	}
	return d.actions(cur.Version+1, cur.Version), nil
}

// keepSources keeps the sources at the given indices.
func (d *deltaIngest) keepSources(keep []int) {
	srcs := make([]source, len(keep))
	written := make([][]*delta.Add, len(keep))
	rows := make([]int64, len(keep))
	for j, i := range keep {
		srcs[j], written[j], rows[j] = d.sources[i], d.written[i], d.rows[i]
	}
	d.setSources(srcs)
	d.written, d.rows = written, rows
}

// gate passes the written files through the commit gate: each source's
// files hold the rows read from it, and every add path is a valid
// reference inside the table.
func (d *deltaIngest) gate() error {
	groups := make([]format.GateGroup, len(d.sources))
	for i, src := range d.sources {
		groups[i] = format.GateGroup{Name: src.path, Read: d.rows[i]}
		for _, a := range d.written[i] {
			var n int64 = -1 // no count: the gate refuses it
			if st, err := a.ParsedStats(); err == nil && st != nil {
				n = st.NumRecords
			}
			groups[i].Files = append(groups[i].Files, format.GateFile{Path: a.Path, Records: n})
		}
	}
	if tamperDeltaGate != nil {
		tamperDeltaGate(groups)
	}
	g := format.Gate{Op: "ingest", Table: d.cfg.Table, Style: format.RelativePaths, Roots: []string{d.tbl.Store.TableRoot().URI("")}}
	return g.Check(groups)
}

// tamperDeltaGate, set by tests, alters what the commit gate is shown.
var tamperDeltaGate func([]format.GateGroup)

// actions are the commit of version on top of readVersion (-1: none).
func (d *deltaIngest) actions(version, readVersion int64) []delta.Action {
	now := time.Now()
	op := "WRITE"
	if d.create != nil {
		op = "CREATE TABLE AS SELECT"
	}
	var rows int64
	var files int
	for i := range d.sources {
		rows += d.rows[i]
		files += len(d.written[i])
	}
	partBy, _ := json.Marshal(append([]string{}, d.parts...))
	acts := []delta.Action{delta.NewCommitInfo(op,
		map[string]any{"mode": "Append", "partitionBy": string(partBy)}, readVersion,
		map[string]any{"numFiles": files, "numOutputRows": rows, "numSourceFiles": len(d.sources)})}
	if d.create != nil {
		acts[0].CommitInfo.ReadVersion = nil // nothing was read
	}
	acts = append(acts, d.create...)
	recorded := map[string]bool{} // a commit holds one txn per appId
	for i, src := range d.sources {
		for _, a := range d.written[i] {
			acts = append(acts, delta.Action{Add: a})
		}
		if id := TxnAppID(src.digest); !recorded[id] {
			recorded[id] = true
			acts = append(acts, delta.NewTxn(id, version, now))
		}
	}
	return acts
}
