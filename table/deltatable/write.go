package deltatable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine/cuts"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/layouts"
)

// commitAttempts is how many versions a commit tries before giving up
// when concurrent appends keep winning the race.
const commitAttempts = 20

func (f *format) NewSink(ctx context.Context, group []table.PlanFile, _ *arrow.Schema, cfg table.SinkConfig) table.Sink {
	var values map[string]*string
	if len(group) > 0 {
		values = add(group[0]).PartitionValues
	}
	dir := delta.PartitionDir(f.snap.PhysicalPartitionColumns(), values)
	if dir != "" {
		dir += "/"
	}
	rowGroups := cfg.RowGroupRows
	if rowGroups <= 0 {
		rowGroups = defaultRowGroupRows(group)
	}
	w := &fileWriter{f: f, values: values, dir: dir, writeID: cfg.WriteID, rowGroupRows: rowGroups}
	return cuts.NewSink(ctx, cuts.SinkConfig[table.OutFile]{FileRows: cfg.FileRows, Lanes: cfg.Lanes, Queue: cfg.Queue, Write: w.write})
}

// Row groups of the files of a group the engine does not cut itself (a
// bin-packed one), which a Delta table has no property for: Spark's
// Parquet writer closes a row group at 128 MiB, delta-rs's at 1,048,576
// rows, and a row group per batch read made 76 of a 128 MiB file. Here a
// row group holds at most rowGroupMaxRows, and no more than about
// rowGroupMaxBytes at the group's bytes per row, the size a sorted rewrite
// cuts a 128 MiB file into: the writer keeps a row group's pages in
// memory until it closes, so larger ones cost memory (about 50 MiB more
// at 8 MiB, 100 MiB at 16 MiB, for two files written at once) for little
// time.
const (
	rowGroupMaxRows  = 1 << 20
	rowGroupMaxBytes = 8 << 20
)

// defaultRowGroupRows is the most rows a row group of a file written from
// group holds when the engine gives none.
func defaultRowGroupRows(group []table.PlanFile) int64 {
	var records, bytes int64
	for _, f := range group {
		records, bytes = records+f.Records, bytes+f.Size
	}
	if records <= 0 || bytes <= 0 {
		return rowGroupMaxRows
	}
	return max(1, min(rowGroupMaxRows, rowGroupMaxBytes*records/bytes))
}

// fileWriter writes the data files of one group's partition; on a table
// with a geometry column each file carries GeoParquet metadata of its
// rows, as ingest --delta writes it.
type fileWriter struct {
	f       *format
	values  map[string]*string
	dir     string
	writeID func() uuid.UUID
	// rowGroupRows, when positive, cuts each file's row groups (see
	// delta.FileWriter.CutRowGroups).
	rowGroupRows int64
}

// write writes file i of the group from rows.
func (w *fileWriter) write(ctx context.Context, i int, rows iter.Seq2[arrow.RecordBatch, error]) ([]table.OutFile, error) {
	id := uuid.New()
	if w.writeID != nil {
		id = w.writeID()
	}
	name := fmt.Sprintf("%spart-%05d-%s-c000.zstd.parquet", w.dir, i, id)
	fw, err := w.f.t.NewFileWriter(ctx, w.f.snap, name, w.values, nil)
	if err != nil {
		return nil, err
	}
	if w.rowGroupRows > 0 {
		fw.CutRowGroups(w.rowGroupRows)
	}
	var geo *spatial.GeoStats
	if w.f.colsErr == nil && w.f.cols.Geometry != "" {
		geo = spatial.NewGeoStats()
	}
	failed := func(err error) ([]table.OutFile, error) {
		fw.Close()
		return []table.OutFile{{Path: name}}, err
	}
	for rec := range rows { //nolint:errcheck // the sink yields no errors
		err := fw.Write(rec)
		if idx := rec.Schema().FieldIndices(w.f.cols.Geometry); err == nil && geo != nil && len(idx) == 1 {
			geo.AddArray(rec.Column(idx[0]))
		}
		rec.Release()
		if err != nil {
			return failed(err)
		}
	}
	if geo != nil {
		doc, err := geo.Metadata(w.f.cols).Marshal()
		if err == nil {
			err = fw.SetFileMetadata("geo", string(doc))
		}
		if err != nil {
			return failed(err)
		}
	}
	a, err := fw.Close()
	if err != nil {
		return []table.OutFile{{Path: name}}, err
	}
	var records int64
	if st, err := a.ParsedStats(); err == nil && st != nil {
		records = st.NumRecords
	}
	return []table.OutFile{{Path: name, Size: a.Size, Records: records, File: a}}, nil
}

// Commit commits the groups as one OPTIMIZE: a commitInfo, then a remove
// (dataChange=false) of every replaced file and an add (dataChange=false)
// of every new one, put as the next version only if it is absent. When a
// concurrent commit wins the version, its actions are checked: one that
// removed a replaced file or changed its deletion vector is a conflict
// (catalogs.ErrConflict); anything else (an append) is not, and the commit
// is retried on the next version. A checkpoint follows on
// delta.checkpointInterval; failing to write one does not undo the commit.
func (f *format) Commit(ctx context.Context, groups []table.Replacement, c table.Commit) (int64, int, error) {
	gate := table.Gate{Op: "optimize", Table: f.name, Style: table.RelativePaths, Roots: []string{f.t.Store.TableRoot().URI("")}}
	logPath := func(o table.OutFile) string {
		if a, ok := o.File.(*delta.Add); ok {
			return a.Path
		}
		return o.Path
	}
	if err := gate.CheckReplacements(groups, logPath); err != nil {
		return 0, 0, table.NotCommitted(err)
	}
	summary := c.Summary
	var replaced, added []*delta.Add
	var dvs int
	var removedBytes, addedBytes int64
	for _, g := range groups {
		for _, pf := range g.Files {
			a := add(pf)
			replaced = append(replaced, a)
			removedBytes += a.Size
			if a.DeletionVector != nil {
				dvs++
			}
		}
		for _, o := range g.New {
			added = append(added, o.File.(*delta.Add))
			addedBytes += o.Size
		}
	}
	metrics := map[string]any{
		"numRemovedFiles": strconv.Itoa(len(replaced)), "numAddedFiles": strconv.Itoa(len(added)),
		"numRemovedBytes": strconv.FormatInt(removedBytes, 10), "numAddedBytes": strconv.FormatInt(addedBytes, 10),
		"numDeletionVectorsRemoved": strconv.Itoa(dvs),
	}
	op := "OPTIMIZE"
	if summary[table.SummaryPurge] == "true" {
		op = "REORG" // Delta's name for REORG TABLE … APPLY (PURGE)
	}
	actions := append([]delta.Action{delta.NewCommitInfo(op, optimizeParams(summary), f.snap.Version, metrics)},
		delta.RewriteActions(replaced, added, time.Now())...)
	v, err := delta.CommitRewrite(ctx, f.t, f.snap.Version, actions, commitAttempts)
	var ce *delta.ConflictError
	switch {
	case errors.As(err, &ce):
		return 0, 0, table.NotCommitted(fmt.Errorf("%w: %v; nothing was committed, run the rewrite again", catalogs.ErrConflict, err))
	case err != nil:
		var ve *delta.VersionExistsError
		if errors.As(err, &ve) {
			return 0, 0, table.NotCommitted(fmt.Errorf("%w: %v", catalogs.ErrConflict, err))
		}
		return 0, 0, err
	}
	_, _ = f.t.MaybeCheckpoint(ctx, v) // the commit stands; a later commit checkpoints again
	return v, dvs, nil
}

// optimizeParams are the commitInfo's operationParameters: Delta's own
// (predicate, zOrderBy for a Z-order layout, applyPurge for a purge) and
// the rewrite's summary.
func optimizeParams(summary map[string]string) map[string]any {
	params := map[string]any{"predicate": "[]"}
	if summary[table.SummaryPurge] == "true" {
		params["applyPurge"] = "true"
	}
	zorder := []string{}
	if o := summary[table.SummarySortOrder]; o != "" {
		if cols, ok := zorderColumns(o); ok {
			zorder = cols
		}
	}
	b, _ := json.Marshal(zorder)
	params["zOrderBy"] = string(b)
	for k, v := range summary {
		params[k] = v
	}
	return params
}

// zorderColumns returns the columns of a Z-order layout's text (its
// bbox columns when it names none), and whether it is one.
func zorderColumns(text string) ([]string, bool) {
	o, auto, err := layouts.Parse(text)
	if err != nil || auto || o.Curve != cluster.CurveZOrder {
		return nil, false
	}
	if len(o.Columns) == 0 {
		return spatial.BBoxColumns[:], true
	}
	return o.Columns, true
}
