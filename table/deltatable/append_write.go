package deltatable

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
	"github.com/geocompact/geocompact/table"
)

// Append writes each source's rows into data files of the table (one per
// source and partition), passes them through the commit gate and commits
// them with a txn per source, creating the table in the same commit when
// it is new.
func (a *appender) Append(ctx context.Context, req table.AppendRequest) (*table.Appended, error) {
	ws, err := a.writeSnapshot(req)
	if err != nil {
		return nil, err
	}
	a.parts = ws.Metadata.PartitionColumns
	sc, err := ws.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("ingest into %s: %w", a.location, err)
	}
	a.sources = req.Sources
	if err := a.write(ctx, ws, req, sc); err != nil {
		return nil, fmt.Errorf("ingest into %s: %w", a.location, err)
	}
	out := &table.Appended{}
	if err := a.commit(ctx, ws, req, out); err != nil {
		return nil, err
	}
	return out, nil
}

// writeSnapshot is the snapshot data files are written for: the table's,
// or that of the table to create from the first file, whose protocol and
// metaData actions it keeps for the commit.
func (a *appender) writeSnapshot(req table.AppendRequest) (*delta.Snapshot, error) {
	if a.read != nil {
		return a.read, nil
	}
	sc, err := delta.SchemaFromArrow(req.Schema)
	if err != nil {
		return nil, fmt.Errorf("derive schema from %s: %w", req.Sources[0].Path, err)
	}
	tgt := req.Columns
	if slices.Contains(a.parts, tgt.Geometry) {
		return nil, fmt.Errorf("%w: the geometry column %q cannot partition a table", table.ErrPartitionSpec, tgt.Geometry)
	}
	props := map[string]string{
		spatial.PropGeometryColumn:   tgt.Geometry,
		spatial.PropGeometryEncoding: spatial.EncodingWKB,
		spatial.PropCRS:              tgt.CRS,
	}
	a.create, err = delta.CreateActions(delta.TableSpec{Schema: sc, PartitionColumns: a.parts, Configuration: props}, time.Now())
	if errors.Is(err, delta.ErrPartitionColumn) {
		return nil, fmt.Errorf("%w: %w", table.ErrPartitionSpec, err)
	}
	if err != nil {
		return nil, err
	}
	return delta.SnapshotOf(a.create)
}

// write streams each source's batches into data files of s, one per
// source and partition, with stats and GeoParquet metadata. On an error it
// deletes what it wrote.
func (a *appender) write(ctx context.Context, s *delta.Snapshot, req table.AppendRequest, sc *arrow.Schema) error {
	cols := req.Columns
	a.written = make([][]*delta.Add, len(req.Sources))
	a.rows = make([]int64, len(req.Sources))
	geo := cols
	if f := s.Schema.Field(cols.Geometry); f != nil {
		geo.Geometry = f.PhysicalName(s.ColumnMapping())
	}
	for i, src := range req.Sources {
		fw := &deltaFileSet{tbl: a.tbl, snap: s, source: i, geo: geo, geoCol: cols.Geometry, files: map[string]*deltaFile{}}
		adds, err := fw.writeAll(ctx, func(fn func(arrow.RecordBatch) error) error {
			return req.Rows(ctx, src, sc, func(rec arrow.RecordBatch) error {
				a.rows[i] += rec.NumRows()
				return fn(rec)
			})
		})
		a.written[i] = adds
		if err != nil {
			a.removeWritten(ctx, a.written...)
			return err
		}
	}
	return nil
}

// removeWritten deletes data files that no commit references, logging
// failures: an undeleted one is left for vacuum.
func (a *appender) removeWritten(ctx context.Context, sets ...[]*delta.Add) {
	for _, adds := range sets {
		for _, add := range adds {
			p, inside, err := a.tbl.Store.TableRoot().Canonical(add.Path)
			if err == nil && !inside {
				err = fmt.Errorf("%s is outside the table; not deleted", p)
			}
			if err == nil {
				err = a.tbl.Store.Delete(context.WithoutCancel(ctx), p)
			}
			if err != nil {
				a.log.Warn("remove written file", "path", add.Path, "error", err)
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
func (a *appender) commit(ctx context.Context, ws *delta.Snapshot, req table.AppendRequest, res *table.Appended) error {
	readVersion := int64(-1)
	if a.read != nil {
		readVersion = a.read.Version
	}
	attempts := DefaultAppendAttempts
	if req.CommitRetries != 0 {
		attempts = max(req.CommitRetries, 0) + 1
	}
	if err := a.gate(); err != nil {
		a.removeWritten(ctx, a.written...)
		return fmt.Errorf("ingest into %s: %w", a.location, err)
	}
	v, err := delta.CommitAppend(ctx, a.tbl, a.read, a.actions(readVersion+1, readVersion), attempts,
		func(cur *delta.Snapshot) ([]delta.Action, error) {
			return a.retry(ctx, ws, cur, req.AllowDuplicates, res)
		})
	if err != nil {
		if definitelyNotCommitted(err) {
			a.removeWritten(ctx, a.written...)
		}
		return fmt.Errorf("ingest into %s: %w", a.location, err)
	}
	if v < 0 {
		return nil // every file was ingested concurrently
	}
	res.Committed, res.Commit, res.Created = true, v, a.create != nil
	res.Files = len(a.sources)
	for i := range a.sources {
		res.DataFiles += len(a.written[i])
		res.Rows += a.rows[i]
	}
	if _, err := a.tbl.MaybeCheckpoint(ctx, v); err != nil {
		a.log.Warn("checkpoint after ingest", "table", a.location, "version", v, "error", err)
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
func (a *appender) retry(ctx context.Context, ws *delta.Snapshot, cur *delta.Snapshot, allowDuplicates bool, res *table.Appended) ([]delta.Action, error) {
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
	a.create = nil // the table exists now, with the same schema
	res.Commit = cur.Version
	if !allowDuplicates {
		var keep []int
		for i, src := range a.sources {
			if v, ok := cur.Txns[TxnAppID(src.Digest)]; ok {
				res.Skipped = append(res.Skipped, table.Skipped{Source: src, Commit: &v})
				a.removeWritten(ctx, a.written[i])
				continue
			}
			keep = append(keep, i)
		}
		a.keepSources(keep)
	}
	if len(a.sources) == 0 {
		return nil, nil
	}
	return a.actions(cur.Version+1, cur.Version), nil
}

// keepSources keeps the sources at the given indices.
func (a *appender) keepSources(keep []int) {
	srcs := make([]table.Source, len(keep))
	written := make([][]*delta.Add, len(keep))
	rows := make([]int64, len(keep))
	for j, i := range keep {
		srcs[j], written[j], rows[j] = a.sources[i], a.written[i], a.rows[i]
	}
	a.sources = srcs
	a.written, a.rows = written, rows
}

// gate passes the written files through the commit gate: each source's
// files hold the rows read from it, and every add path is a valid
// reference inside the table.
func (a *appender) gate() error {
	groups := make([]table.GateGroup, len(a.sources))
	for i, src := range a.sources {
		groups[i] = table.GateGroup{Name: src.Path, Read: a.rows[i]}
		for _, a := range a.written[i] {
			var n int64 = -1 // no count: the gate refuses it
			if st, err := a.ParsedStats(); err == nil && st != nil {
				n = st.NumRecords
			}
			groups[i].Files = append(groups[i].Files, table.GateFile{Path: a.Path, Records: n})
		}
	}
	if tamperGate != nil {
		tamperGate(groups)
	}
	g := table.Gate{Op: "ingest", Table: a.location, Style: table.RelativePaths, Roots: []string{a.tbl.Store.TableRoot().URI("")}}
	return g.Check(groups)
}

// tamperGate, set by tests, alters what the commit gate is shown.
var tamperGate func([]table.GateGroup)

// actions are the commit of version on top of readVersion (-1: none).
func (a *appender) actions(version, readVersion int64) []delta.Action {
	now := time.Now()
	op := "WRITE"
	if a.create != nil {
		op = "CREATE TABLE AS SELECT"
	}
	var rows int64
	var files int
	for i := range a.sources {
		rows += a.rows[i]
		files += len(a.written[i])
	}
	partBy, _ := json.Marshal(append([]string{}, a.parts...))
	acts := []delta.Action{delta.NewCommitInfo(op,
		map[string]any{"mode": "Append", "partitionBy": string(partBy)}, readVersion,
		map[string]any{"numFiles": files, "numOutputRows": rows, "numSourceFiles": len(a.sources)})}
	if a.create != nil {
		acts[0].CommitInfo.ReadVersion = nil // nothing was read
	}
	acts = append(acts, a.create...)
	recorded := map[string]bool{} // a commit holds one txn per appId
	for i, src := range a.sources {
		for _, a := range a.written[i] {
			acts = append(acts, delta.Action{Add: a})
		}
		if id := TxnAppID(src.Digest); !recorded[id] {
			recorded[id] = true
			acts = append(acts, delta.NewTxn(id, version, now))
		}
	}
	return acts
}
