package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/engine/geowrite"
	"github.com/geocompact/geocompact/spatial"
)

// icebergFormat is an Iceberg table at the snapshot a rewrite planned on.
type icebergFormat struct {
	// cat and name are where the table is, retries how often a commit
	// that lost a race is replayed.
	cat     catalog.Catalog
	name    string
	retries int

	tbl        *table.Table
	snapshotID int64
	// all are the scan tasks of every live file at the snapshot.
	all []table.FileScanTask
}

// task is the scan task a PlanFile of an Iceberg table carries.
func task(f PlanFile) table.FileScanTask { return *f.File.(*table.FileScanTask) }

func tasksOf(files []PlanFile) []table.FileScanTask {
	ts := make([]table.FileScanTask, len(files))
	for i, f := range files {
		ts[i] = task(f)
	}
	return ts
}

func (t *icebergFormat) Read(ctx context.Context, group, files []PlanFile, cols []string) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	tasks := tasksOf(files)
	scanOpts, _, _ := t.ioOptions(tasksOf(group))
	scanOpts = append(scanOpts, table.WithSnapshotID(t.snapshotID))
	if cols != nil {
		scanOpts = append(scanOpts, table.WithSelectedFields(cols...))
	}
	return t.tbl.Scan(scanOpts...).ReadTasks(ctx, tasks)
}

func (t *icebergFormat) WriteSchema(files []PlanFile, sc *arrow.Schema) (*arrow.Schema, error) {
	_, _, lineage := t.ioOptions(tasksOf(files))
	if lineage == nil {
		return sc, nil
	}
	// With row lineage the writer checks a schema carrying field IDs.
	out, err := table.SchemaToArrowSchemaWithOptions(lineage, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: t.tbl.Properties()})
	if err != nil {
		return nil, fmt.Errorf("lineage schema: %w", err)
	}
	return out, nil
}

func (t *icebergFormat) NewSink(ctx context.Context, files []PlanFile, sc *arrow.Schema, cfg SinkConfig) Sink {
	_, opts, _ := t.ioOptions(tasksOf(files))
	return icebergSink{geowrite.NewSink(ctx, t.tbl, sc, geowrite.SinkConfig{Options: opts, FileRows: cfg.FileRows, Lanes: cfg.Lanes, Queue: cfg.Queue, WriteID: cfg.WriteID})}
}

// icebergSink is a geowrite.Sink whose files are outFiles.
type icebergSink struct{ *geowrite.Sink }

func (s icebergSink) Close() ([]OutFile, error) {
	files, err := s.Sink.Close()
	return icebergOut(files), err
}

// icebergOut describes Iceberg data files as outFiles.
func icebergOut(files []iceberg.DataFile) []OutFile {
	out := make([]OutFile, len(files))
	for i, f := range files {
		out[i] = OutFile{Path: f.FilePath(), Size: f.FileSizeBytes(), Records: f.Count(), File: f}
	}
	return out
}

// dataFiles returns the Iceberg data files of outFiles.
func dataFiles(files []OutFile) []iceberg.DataFile {
	out := make([]iceberg.DataFile, len(files))
	for i, f := range files {
		out[i] = f.File.(iceberg.DataFile)
	}
	return out
}

func (t *icebergFormat) ReadBack(ctx context.Context, in []PlanFile, written []OutFile) (iter.Seq2[arrow.RecordBatch, error], error) {
	scanOpts, _, _ := t.ioOptions(tasksOf(in))
	tasks := make([]table.FileScanTask, len(written))
	for i, f := range dataFiles(written) {
		tasks[i] = table.FileScanTask{File: f, Start: 0, Length: f.FileSizeBytes()}
	}
	_, recs, err := t.tbl.Scan(scanOpts...).ReadTasks(ctx, tasks)
	return recs, err
}

func (t *icebergFormat) Remove(ctx context.Context, paths []string) error {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("no file system: %w", err)
	}
	var errs []error
	for _, p := range paths {
		if err := fs.Remove(p); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

func (t *icebergFormat) BrokenInput(ctx context.Context, files []PlanFile, err error) error {
	return nameBrokenInput(ctx, t.tbl, tasksOf(files), err)
}

func (t *icebergFormat) Spatial() (spatial.Columns, map[string]string, error) {
	cols, err := spatial.DiscoverTableColumns(t.tbl.Schema(), t.tbl.Properties(), "")
	return cols, t.tbl.Properties(), err
}

// ioOptions returns the scan and write options for a group: on a v3 table
// whose files all carry row lineage, _row_id and
// _last_updated_sequence_number are read and written as they are.
func (t *icebergFormat) ioOptions(tasks []table.FileScanTask) ([]table.ScanOption, []table.WriteRecordOption, *iceberg.Schema) {
	write := []table.WriteRecordOption{table.WithClusteredWrite()}
	if t.tbl.Metadata().Version() < 3 {
		return nil, write, nil
	}
	for _, task := range tasks {
		if task.FirstRowID == nil {
			return nil, write, nil
		}
	}
	lineage := iceberg.SchemaWithRowLineage(t.tbl.Schema())
	return []table.ScanOption{table.WithRowLineage()}, append(slices.Clip(write), table.WithPreserveRowLineage(lineage)), lineage
}
