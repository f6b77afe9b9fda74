// Package icebergtable is the Iceberg table as the rewrite engine sees it
// (format.Format): a table at the snapshot a rewrite planned on, whose
// groups are read with their delete files applied (iceberg-go's scan),
// written as GeoParquet data files (table/geowrite), and committed as one
// replace snapshot with iceberg-go's rewrite transaction, retried when
// another writer committed first and refused when a replaced file changed.
package icebergtable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/footer"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/geowrite"
)

// Table is an Iceberg table at the snapshot a rewrite planned on.
type Table struct {
	// Catalog and Name are where the table is.
	Catalog catalog.Catalog
	Name    string

	Table      *table.Table
	SnapshotID int64
	// All are the scan tasks of every live file at the snapshot.
	All []table.FileScanTask

	// checked holds the data files whose footers were found sound.
	checked sync.Map
}

// task is the scan task a format.PlanFile of an Iceberg table carries.
func Task(f format.PlanFile) table.FileScanTask { return *f.File.(*table.FileScanTask) }

func tasksOf(files []format.PlanFile) []table.FileScanTask {
	ts := make([]table.FileScanTask, len(files))
	for i, f := range files {
		ts[i] = Task(f)
	}
	return ts
}

func (t *Table) Read(ctx context.Context, group, files []format.PlanFile, cols []string) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	tasks := tasksOf(files)
	if err := t.checkFooters(ctx, tasks); err != nil {
		return nil, nil, err
	}
	scanOpts, _, _ := t.ioOptions(tasksOf(group))
	scanOpts = append(scanOpts, table.WithSnapshotID(t.SnapshotID), table.WithArrowBatchSize(t.batchRows(tasks)))
	if n := format.ReadLanes(ctx); n > 0 {
		scanOpts = append(scanOpts, table.WithMaxConcurrency(n))
	}
	if cols != nil {
		scanOpts = append(scanOpts, table.WithSelectedFields(cols...))
	}
	return t.Table.Scan(scanOpts...).ReadTasks(ctx, tasks)
}

// batchRows is the rows per Arrow batch a scan of tasks decodes: the
// table's read.parquet.batch-size (iceberg-go's default 131,072 rows), or
// the rows of the largest file when fewer. The Parquet reader sizes a
// batch's buffers by the batch's rows, not the file's, so files of 5,000
// rows read in batches of 131,072 hold buffers 26 times their data, and a
// rewrite holding many of them holds that much more memory.
func (t *Table) batchRows(tasks []table.FileScanTask) int {
	limit := int64(t.Table.Properties().GetInt(table.ParquetBatchSizeKey, defaultBatchRows))
	var most int64
	for _, task := range tasks {
		most = max(most, task.File.Count())
	}
	return int(max(min(most, limit), minBatchRows))
}

const (
	// defaultBatchRows is iceberg-go's read.parquet.batch-size default.
	defaultBatchRows = 1 << 17
	// minBatchRows keeps batches of tiny files from being tinier.
	minBatchRows = 1 << 10
)

func (t *Table) WriteSchema(files []format.PlanFile, sc *arrow.Schema) (*arrow.Schema, error) {
	_, _, lineage := t.ioOptions(tasksOf(files))
	if lineage == nil {
		return sc, nil
	}
	// With row lineage the writer checks a schema carrying field IDs.
	out, err := table.SchemaToArrowSchemaWithOptions(lineage, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: t.Table.Properties()})
	if err != nil {
		return nil, fmt.Errorf("lineage schema: %w", err)
	}
	return out, nil
}

func (t *Table) NewSink(ctx context.Context, files []format.PlanFile, sc *arrow.Schema, cfg format.SinkConfig) format.Sink {
	_, opts, _ := t.ioOptions(tasksOf(files))
	if _, set := t.Table.Properties()[table.ParquetRowGroupLimitKey]; cfg.RowGroupRows > 0 && !set {
		opts = append(slices.Clip(opts), table.WithParquetRowGroupLimit(int(cfg.RowGroupRows)))
	}
	return icebergSink{geowrite.NewSink(ctx, t.Table, sc, geowrite.SinkConfig{Options: opts, FileRows: cfg.FileRows, Lanes: cfg.Lanes, Queue: cfg.Queue, WriteID: cfg.WriteID, SameBytes: cfg.SameBytes})}
}

// icebergSink is a geowrite.Sink whose files are outFiles.
type icebergSink struct{ *geowrite.Sink }

func (s icebergSink) Close() ([]format.OutFile, error) {
	files, err := s.Sink.Close()
	return Out(files), err
}

// Out describes Iceberg data files as the engine's OutFiles.
func Out(files []iceberg.DataFile) []format.OutFile {
	out := make([]format.OutFile, len(files))
	for i, f := range files {
		out[i] = format.OutFile{Path: f.FilePath(), Size: f.FileSizeBytes(), Records: f.Count(), File: f}
	}
	return out
}

// DataFiles returns the Iceberg data files of OutFiles.
func DataFiles(files []format.OutFile) []iceberg.DataFile {
	out := make([]iceberg.DataFile, len(files))
	for i, f := range files {
		out[i] = f.File.(iceberg.DataFile)
	}
	return out
}

func (t *Table) ReadBack(ctx context.Context, in []format.PlanFile, written []format.OutFile) (iter.Seq2[arrow.RecordBatch, error], error) {
	scanOpts, _, _ := t.ioOptions(tasksOf(in))
	tasks := make([]table.FileScanTask, len(written))
	for i, f := range DataFiles(written) {
		tasks[i] = table.FileScanTask{File: f, Start: 0, Length: f.FileSizeBytes()}
	}
	scanOpts = append(scanOpts, table.WithArrowBatchSize(t.batchRows(tasks)))
	_, recs, err := t.Table.Scan(scanOpts...).ReadTasks(ctx, tasks)
	return recs, err
}

func (t *Table) Remove(ctx context.Context, paths []string) error {
	fs, err := t.Table.FS(ctx)
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

func (t *Table) BrokenInput(ctx context.Context, files []format.PlanFile, err error) error {
	return nameBrokenInput(ctx, t.Table, tasksOf(files), err)
}

func (t *Table) Spatial() (spatial.Columns, map[string]string, error) {
	cols, err := discoverColumns(t.Table)
	return cols, t.Table.Properties(), err
}

// discoverColumns returns the spatial columns of tbl.
func discoverColumns(tbl *table.Table) (spatial.Columns, error) {
	return icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
}

// ioOptions returns the scan and write options for a group: on a v3 table
// whose files all carry row lineage, _row_id and
// _last_updated_sequence_number are read and written as they are. A group
// whose files are all in the current partition spec is written by the
// clustered writer (its rows are in one partition); files of an older spec
// are rewritten into the current one, whose partitions their rows arrive
// interleaved in, so they go through the fanout writer.
func (t *Table) ioOptions(tasks []table.FileScanTask) ([]table.ScanOption, []table.WriteRecordOption, *iceberg.Schema) {
	var write []table.WriteRecordOption
	current := t.Table.Metadata().DefaultPartitionSpec()
	if !slices.ContainsFunc(tasks, func(task table.FileScanTask) bool { return int(task.File.SpecID()) != current }) {
		write = append(write, table.WithClusteredWrite())
	}
	if t.Table.Metadata().Version() < 3 {
		return nil, write, nil
	}
	for _, task := range tasks {
		if task.FirstRowID == nil {
			return nil, write, nil
		}
	}
	lineage := iceberg.SchemaWithRowLineage(t.Table.Schema())
	return []table.ScanOption{table.WithRowLineage()}, append(slices.Clip(write), table.WithPreserveRowLineage(lineage)), lineage
}

// commit replaces the groups' input files with their outputs in one
// replace snapshot, on a fresh load of the table, retrying when another
// writer committed first. It fails with catalogs.ErrConflict, without retrying,
// when a file it replaces is gone or has gained delete files since it was
// read: committing then would lose those deletes. It returns the new
// snapshot's id and how many delete files it dropped with the files they
// applied to.
func (t *Table) Commit(ctx context.Context, groups []format.Replacement, c format.Commit) (id int64, removedDeletes int, err error) {
	gate := format.Gate{Op: "rewrite", Table: t.Name, Roots: format.IcebergRoots(t.Table.Location(), t.Table.Properties())}
	if err := gate.CheckReplacements(groups, func(o format.OutFile) string { return o.Path }); err != nil {
		return 0, 0, format.NotCommitted(err)
	}
	err = catalogs.WithCommitRetry(ctx, c.Retries, func(ctx context.Context) error {
		// An attempt that fails writing a manifest or metadata file, or
		// that the catalog refuses, deletes the files it wrote; one that
		// commits deletes those of its refused tries.
		return catalogs.CommitTracked(ctx, t.Catalog, t.Table.Identifier(), func(ctx context.Context) (*table.Table, error) {
			var nt *table.Table
			var err error
			nt, id, removedDeletes, err = t.commitOnce(ctx, groups, c)
			return nt, err
		})
	})
	if catalogs.NothingCommitted(err) {
		err = format.NotCommitted(err)
	}
	return id, removedDeletes, err
}

// commitOnce is one attempt of Commit.
func (t *Table) commitOnce(ctx context.Context, groups []format.Replacement, c format.Commit) (nt *table.Table, id int64, removedDeletes int, err error) {
	if c.BeforeAttempt != nil {
		c.BeforeAttempt(ctx)
	}
	tbl, err := t.Catalog.LoadTable(ctx, t.Table.Identifier())
	if err != nil {
		return nil, 0, 0, fmt.Errorf("reload %s: %w", t.Name, err)
	}
	removable, err := t.checkBase(ctx, tbl, groups)
	if err != nil {
		return nil, 0, 0, err
	}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(c.Summary)
	for _, g := range groups {
		for _, f := range g.Files {
			rw.DeleteFile(Task(f).File)
		}
		for _, f := range DataFiles(g.New) {
			rw.AddDataFile(f)
		}
	}
	for _, d := range removable {
		rw.DeleteFile(d)
	}
	if err := rw.Commit(ctx); err != nil {
		return nil, 0, 0, fmt.Errorf("stage rewrite of %s: %w", t.Name, err)
	}
	nt, err = tx.Commit(ctx)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("commit rewrite of %s: %w", t.Name, err)
	}
	return nt, nt.CurrentSnapshot().SnapshotID, len(removable), nil
}

// checkBase checks that every file the groups replace is still live in
// tbl with exactly the delete files that were applied when it was read,
// and returns the delete files that apply only to replaced files (safe to
// drop with them).
func (t *Table) checkBase(ctx context.Context, tbl *table.Table, groups []format.Replacement) ([]iceberg.DataFile, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, errDiverged("the table has no current snapshot any more")
	}
	tasks := t.All
	if tbl.CurrentSnapshot().SnapshotID != t.SnapshotID {
		var err error
		if tasks, err = catalogs.PlanFiles(ctx, tbl.Scan()); err != nil {
			return nil, fmt.Errorf("plan files of %s: %w", t.Name, err)
		}
	}
	live := make(map[string]*table.FileScanTask, len(tasks))
	for i := range tasks {
		live[tasks[i].File.FilePath()] = &tasks[i]
	}
	replaced := map[string]bool{}
	for _, g := range groups {
		for _, f := range g.Files {
			task := Task(f)
			replaced[task.File.FilePath()] = true
			cur, ok := live[task.File.FilePath()]
			if !ok {
				return nil, errDiverged("data file %s was removed by a concurrent commit (another rewrite or a delete); nothing was committed, run the rewrite again", task.File.FilePath())
			}
			if !slices.Equal(deletePaths(cur), deletePaths(&task)) {
				return nil, errDiverged("data file %s gained delete files from a concurrent commit; nothing was committed, run the rewrite again", task.File.FilePath())
			}
		}
	}
	// A delete file may go when every live data file it applies to is
	// being replaced.
	users := map[string][]string{}
	files := map[string]iceberg.DataFile{}
	for _, tk := range tasks {
		for _, d := range taskDeletes(&tk) {
			k := deleteKey(d)
			users[k] = append(users[k], tk.File.FilePath())
			files[k] = d
		}
	}
	var removable []iceberg.DataFile
	for _, p := range slices.Sorted(maps.Keys(users)) {
		if !slices.ContainsFunc(users[p], func(u string) bool { return !replaced[u] }) {
			removable = append(removable, files[p])
		}
	}
	return removable, nil
}

func taskDeletes(t *table.FileScanTask) []iceberg.DataFile {
	return slices.Concat(t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles)
}

// deleteKey names one delete: its file's path, and for a deletion vector
// also the data file it applies to, since the vectors of many data files
// share one Puffin file and each goes with its own data file.
func deleteKey(d iceberg.DataFile) string {
	if ref := d.ReferencedDataFile(); ref != nil && d.FileFormat() == iceberg.PuffinFile {
		return d.FilePath() + "#" + *ref
	}
	return d.FilePath()
}

func deletePaths(t *table.FileScanTask) []string {
	var ps []string
	for _, d := range taskDeletes(t) {
		ps = append(ps, deleteKey(d))
	}
	slices.Sort(ps)
	return ps
}

// errDiverged reports that files this rewrite replaces changed under it.
func errDiverged(msg string, args ...any) error {
	return fmt.Errorf("%w: %s", catalogs.ErrConflict, fmt.Sprintf(msg, args...))
}

// PlanFiles turns scan tasks into the planner's view of them.
func PlanFiles(tbl *table.Table, tasks []table.FileScanTask) []format.PlanFile {
	out := make([]format.PlanFile, len(tasks))
	cols, colsErr := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	for i := range tasks {
		t := &tasks[i]
		out[i] = format.PlanFile{
			Path:        t.File.FilePath(),
			Size:        t.File.FileSizeBytes(),
			Records:     t.File.Count(),
			Partition:   partitionKey(tbl, t.File),
			DeleteFiles: len(t.DeleteFiles) + len(t.EqualityDeleteFiles) + len(t.DeletionVectorFiles),
			File:        t,
		}
		if colsErr == nil {
			out[i].Bound, out[i].HasBound = icebergspatial.FileBound(tbl.Schema(), cols, t.File.LowerBoundValues(), t.File.UpperBoundValues())
		}
	}
	return out
}

// partitionKey is PartitionPath's text for df. Files of an older spec
// are prefixed with it so they never share a group with the current
// spec's.
func partitionKey(tbl *table.Table, df iceberg.DataFile) string {
	key := PartitionPath(tbl.Metadata(), df)
	if key != "" && int(df.SpecID()) != tbl.Metadata().DefaultPartitionSpec() {
		key = "spec-" + strconv.Itoa(int(df.SpecID())) + ":" + key
	}
	return key
}

// PartitionPath renders df's partition the way Iceberg names partition
// directories ("ts_day=2026-01-01/device_id_bucket=3"), using the spec df
// was written with. It returns "" for an unpartitioned file, and the
// partition values in spec order when the spec is unknown to meta. It is
// the one rendering of a partition: plans, metrics and metadata tables all
// use it, so the same partition reads the same everywhere.
func PartitionPath(meta table.Metadata, df iceberg.DataFile) string {
	values := df.Partition()
	spec := meta.PartitionSpecByID(int(df.SpecID()))
	if spec == nil || spec.IsUnpartitioned() {
		if len(values) == 0 {
			return ""
		}
		return fmt.Sprint(values)
	}
	rec := make(partitionValues, 0, spec.NumFields())
	for _, f := range spec.Fields() {
		rec = append(rec, values[f.FieldID])
	}
	return spec.PartitionToPath(rec, meta.CurrentSchema())
}

// partitionValues is a partition tuple in spec field order.
type partitionValues []any

func (p partitionValues) Size() int        { return len(p) }
func (p partitionValues) Get(i int) any    { return p[i] }
func (p partitionValues) Set(i int, v any) { p[i] = v }

// checkFooters checks the footer of each task's data file against the
// file's size before iceberg-go reads it (see footer.Check): a footer
// declaring a column chunk larger than the file would otherwise make the
// reader allocate that much. Each file is checked once per Table.
func (t *Table) checkFooters(ctx context.Context, tasks []table.FileScanTask) error {
	var fsys iceio.IO
	for _, task := range tasks {
		p := task.File.FilePath()
		if _, ok := t.checked.Load(p); ok {
			continue
		}
		if fsys == nil {
			var err error
			if fsys, err = t.Table.FS(ctx); err != nil {
				return fmt.Errorf("no file system: %w", err)
			}
		}
		if err := footer.CheckFile(fsys.Open, p); err != nil {
			return err
		}
		t.checked.Store(p, true)
	}
	return nil
}

// nameBrokenInput adds to err, a failure reading tasks' data files, the
// path of the first file whose Parquet footer cannot be read, when err does
// not name any input file already. Parquet's own errors ("file is smaller
// than indicated metadata size") do not say which of a group's files is
// broken; the path is what a person needs to repair or remove it.
func nameBrokenInput(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	msg := err.Error()
	for _, t := range tasks {
		if strings.Contains(msg, trimScheme(t.File.FilePath())) {
			return err
		}
	}
	fsys, ferr := tbl.FS(ctx)
	if ferr != nil {
		return err
	}
	for _, t := range tasks {
		p := t.File.FilePath()
		f, oerr := fsys.Open(p)
		if oerr != nil {
			return fmt.Errorf("%w (data file %s: %v)", err, p, oerr)
		}
		r, perr := file.NewParquetReader(f)
		if perr == nil {
			r.Close()
		}
		f.Close()
		if perr != nil {
			return fmt.Errorf("%w (data file %s is not readable Parquet: %v)", err, p, perr)
		}
	}
	return err
}

// trimScheme drops a file:// prefix, as os errors print bare paths.
func trimScheme(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}
