package icebergtable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// Appender is the Iceberg table name ("ns.t") of cat as an ingest
// appends to it. Each commit records the sha256 and name of every file it appends
// in its snapshot summary (SourcesKey), which is how a later ingest knows
// them. A table made for an ingest is created before the data is written,
// and dropped again when the ingest fails before its commit.
func Appender(cat catalog.Catalog, name string) format.Appender {
	a := &icebergAppender{name: name}
	a.cat = &dedupCatalog{Catalog: catalogs.Wrap(cat), pending: &a.pending}
	return a
}

// icebergAppender is one ingest's Iceberg table.
type icebergAppender struct {
	name    string
	cat     *dedupCatalog
	spec    format.AppendSpec
	tbl     *table.Table // as loaded; nil for a table to create
	log     *slog.Logger
	sources []format.Source // the files being appended
	pending []format.Source // the files commits check the history for
	wrote   int64           // the rows of the files last written, as the commit gate counted them
	// dataFiles counts the files last written; retries is the commit
	// retry budget.
	dataFiles, retries int
}

var _ format.Appender = (*icebergAppender)(nil)

func (a *icebergAppender) Name() string { return a.name }

func (a *icebergAppender) CheckAppend(spec format.AppendSpec) error {
	if _, err := catalogs.ParseIdentifier(a.name); err != nil {
		return err
	}
	if spec.FormatVersion != 0 && spec.FormatVersion != 2 && spec.FormatVersion != 3 {
		return fmt.Errorf("format version %d: want 2 or 3", spec.FormatVersion)
	}
	if !spec.Create && (spec.PartitionBy != "" || spec.FormatVersion > 2) {
		return errors.New("a partition spec and a format version apply only when creating the table")
	}
	return nil
}

// Load loads the table, or finds none to create, and refuses a partition
// spec that differs from the existing table's, naming both, rather than
// ignoring it.
func (a *icebergAppender) Load(ctx context.Context, spec format.AppendSpec) (format.Loaded, error) {
	a.spec, a.log = spec, spec.Logger()
	a.cat.log = a.log
	ident, _ := catalogs.ParseIdentifier(a.name)
	tbl, err := a.cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) && !spec.Create:
		if hint := catalogs.TableHint(ctx, a.cat, a.name); strings.HasPrefix(hint, "; did you mean") {
			return format.Loaded{}, fmt.Errorf("table %s does not exist%s Or %w", a.name, hint, format.ErrNoTable)
		}
		return format.Loaded{}, fmt.Errorf("table %s does not exist (%w)", a.name, format.ErrNoTable)
	case errors.Is(err, catalog.ErrNoSuchTable):
		a.tbl = nil
		return format.Loaded{}, nil
	case err != nil:
		return format.Loaded{}, fmt.Errorf("load table %s: %w", a.name, err)
	}
	if spec.PartitionBy != "" {
		want, err := ParsePartitionSpec(spec.PartitionBy, tbl.Schema())
		if err != nil {
			return format.Loaded{}, err
		}
		if have := tbl.Spec(); !SamePartitioning(want, have) {
			return format.Loaded{}, fmt.Errorf("table %s exists partitioned by %s, not by %s as asked; %w to append with the table's spec",
				a.name, FormatPartitionSpec(have, tbl.Schema()), FormatPartitionSpec(want, tbl.Schema()), format.ErrPartitioning)
		}
	}
	a.tbl = tbl
	loaded := format.Loaded{Exists: true}
	if s := tbl.CurrentSnapshot(); s != nil {
		loaded.Commit = s.SnapshotID
	}
	return loaded, nil
}

func (a *icebergAppender) Ingested(srcs []format.Source) []format.Skipped {
	return ingested(a.tbl.Metadata(), srcs, a.log)
}

func (a *icebergAppender) Columns(string) (spatial.Columns, error) {
	return icebergspatial.Columns(a.tbl.Schema(), a.tbl.Properties(), "")
}

func (a *icebergAppender) Schema() (*arrow.Schema, error) { return a.arrowSchema(a.tbl) }

// arrowSchema is the Arrow schema of tbl's rows.
func (a *icebergAppender) arrowSchema(tbl *table.Table) (*arrow.Schema, error) {
	sc, err := table.SchemaToArrowSchemaWithOptions(tbl.Schema(), table.ArrowSchemaOptions{TableProperties: tbl.Properties()})
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", a.name, err)
	}
	return sc, nil
}

// Append creates the table when there is none, adds the columns asked
// for, then writes and commits the sources. A commit that finds some of
// them ingested concurrently is redone without them.
func (a *icebergAppender) Append(ctx context.Context, req format.AppendRequest) (*format.Appended, error) {
	out := &format.Appended{}
	if a.tbl == nil {
		if err := a.create(ctx, req); err != nil {
			return nil, err
		}
		out.Created = true
	}
	sc, err := a.arrowSchema(a.tbl)
	if err != nil {
		return nil, a.dropCreated(ctx, out, err)
	}
	if len(req.AddColumns) > 0 {
		if sc, err = a.addColumns(ctx, req.CommitRetries, req.AddColumns); err != nil {
			return nil, a.dropCreated(ctx, out, err)
		}
		out.AddedColumns = fieldNames(req.AddColumns)
	}
	a.setSources(req.Sources, req.AllowDuplicates)
	for {
		snapID, err := a.commit(ctx, req, sc)
		if dup, ok := errors.AsType[*duplicateError](err); ok {
			out.Skipped = append(out.Skipped, dup.found...)
			srcs := format.Unskipped(a.sources, dup.found)
			if len(srcs) == 0 {
				return out, nil
			}
			a.setSources(srcs, req.AllowDuplicates)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("ingest into %s: %w", a.name, a.dropCreated(ctx, out, err))
		}
		out.Committed, out.Commit = true, snapID
		out.Files, out.DataFiles, out.Rows = len(a.sources), a.dataFiles, a.wrote
		return out, nil
	}
}

// create makes the table from the request's schema: its columns, the
// geometry column as WKB binary (v2) or the geometry type with the data's
// CRS (v3), and spatial properties.
func (a *icebergAppender) create(ctx context.Context, req format.AppendRequest) error {
	fv := max(a.spec.FormatVersion, 2)
	isc, err := table.ArrowSchemaToIcebergWithFreshIDs(req.Schema, true)
	if err != nil {
		return fmt.Errorf("derive schema from %s: %w", req.Sources[0].Path, err)
	}
	if fv >= 3 {
		gt, err := iceberg.GeometryTypeOf(req.Columns.CRS)
		if err != nil {
			return fmt.Errorf("geometry type for CRS %s: %w", req.Columns.CRS, err)
		}
		out := make([]iceberg.NestedField, 0, len(isc.Fields()))
		for _, f := range isc.Fields() {
			if f.Name == req.Columns.Geometry {
				f.Type = gt
			}
			out = append(out, f)
		}
		isc = iceberg.NewSchema(0, out...)
	}
	tbl, err := CreateTable(ctx, a.cat, a.name, isc, a.spec.PartitionBy, SpatialTableProps(fv, req.Columns))
	if errors.Is(err, catalog.ErrTableAlreadyExists) {
		return format.ErrCreatedMeanwhile
	}
	if err != nil {
		return err
	}
	a.tbl = tbl
	return nil
}

// dropCreated drops the table a failed first ingest created, so none is
// left behind empty, and returns err.
//
// Only a table that no snapshot was committed to is dropped: another
// ingest that found the table this one created may have appended to it.
func (a *icebergAppender) dropCreated(ctx context.Context, out *format.Appended, err error) error {
	if !out.Created {
		return err
	}
	ident, _ := catalogs.ParseIdentifier(a.name)
	ctx = context.WithoutCancel(ctx)
	if tbl, lerr := a.cat.LoadTable(ctx, ident); lerr != nil || tbl.CurrentSnapshot() != nil {
		a.log.Warn("keep table created by a failed ingest", "table", a.name, "reason", "it has a snapshot, or does not load", "error", lerr)
		return err
	}
	if derr := a.cat.DropTable(ctx, ident); derr != nil {
		a.log.Warn("drop table after failed ingest", "table", a.name, "error", derr)
	}
	return err
}

// setSources makes srcs the files this ingest writes, and, unless
// duplicates are allowed, the files its commits check the history for.
func (a *icebergAppender) setSources(srcs []format.Source, allowDuplicates bool) {
	a.sources = srcs
	if !allowDuplicates {
		a.pending = srcs
	}
}

// addColumns adds fields to the table's schema as optional columns, in a
// commit of its own, and returns the table's new Arrow schema.
func (a *icebergAppender) addColumns(ctx context.Context, retries int, fields []arrow.Field) (*arrow.Schema, error) {
	for i := range fields {
		fields[i].Nullable = true
	}
	isc, err := table.ArrowSchemaToIcebergWithFreshIDs(arrow.NewSchema(fields, nil), true)
	if err != nil {
		return nil, fmt.Errorf("add columns %s to %s: %w", strings.Join(fieldNames(fields), ", "), a.name, err)
	}
	var tbl *table.Table
	err = catalogs.CommitRetried(ctx, a.cat, a.name, retries, func(ctx context.Context) (*table.Table, error) {
		cur, err := catalogs.LoadTable(ctx, a.cat, a.name)
		if err != nil {
			return nil, err
		}
		tx := cur.NewTransaction()
		u := tx.UpdateSchema(true, false)
		for _, f := range isc.Fields() {
			if _, ok := cur.Schema().FindFieldByName(f.Name); !ok {
				u.AddColumn([]string{f.Name}, f.Type, f.Doc, false, nil)
			}
		}
		if err := u.Commit(); err != nil {
			return nil, err
		}
		tbl, err = tx.Commit(ctx)
		return tbl, err
	})
	if err != nil {
		return nil, fmt.Errorf("add columns %s to %s: %w", strings.Join(fieldNames(fields), ", "), a.name, err)
	}
	a.log.Info("ingest added columns", "table", a.name, "columns", fieldNames(fields))
	a.tbl = tbl
	return a.arrowSchema(tbl)
}

func fieldNames(fields []arrow.Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}
