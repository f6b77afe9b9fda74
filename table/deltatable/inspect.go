package deltatable

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/table"
)

// MetadataTables are the metadata tables a Delta table has: its live
// files and its commits.
var MetadataTables = []string{"files", "history"}

// MetadataRows reads f's table's files or history as rows, keyed like
// Iceberg's metadata tables where they agree, so scripts work on both.
//
// Files has one row per live file of the version: file_path (the
// file's name on disk: the log's path percent-decoded, relative to the
// table or absolute as the log names it; the stored form when it does not
// decode), partition (a Row of the
// partition columns' logical names and their values as the log writes
// them; null stays nil), record_count (numRecords, nil without stats),
// file_size_in_bytes, modification_time, bbox (delta.Snapshot.FileBound,
// nil without bbox statistics) and deletion_vector_cardinality (rows the
// file's deletion vector removes, 0 without one).
//
// History has one row per commit still in the log, oldest first: version,
// timestamp, operation, operation_parameters, operation_metrics,
// read_version, is_blind_append and engine_info (nil when the commit has
// no commitInfo or the writer left them out).
func (f *format) MetadataRows(ctx context.Context, name string) ([]table.Row, error) {
	switch name {
	case "files":
		return deltaFiles(f.snap), nil
	case "history":
		h, err := f.t.History(ctx)
		if err != nil {
			return nil, fmt.Errorf("inspect %s: %w", f.name, err)
		}
		return deltaHistory(h), nil
	}
	return nil, fmt.Errorf("%w %q for a Delta table, want files or history", table.ErrMetadataTable, name)
}

// TableSchema describes f's table as an Iceberg table is described:
// Table is its name, Format the protocol versions, FormatVersion 0;
// column ids are column mapping ids, else positions from 1; the geometry
// is what delta.Snapshot.SpatialColumns finds. Delta tables have no sort
// order; LastRewrite is the latest commit's operation when it is an
// OPTIMIZE, with its parameters.
func (f *format) TableSchema() table.TableSchema { return deltaSchema(f.snap, f.name) }

func deltaFiles(s *delta.Snapshot) []table.Row {
	cols, _ := s.SpatialColumns("")
	mode := s.ColumnMapping()
	rows := make([]table.Row, 0, len(s.Files))
	for _, f := range s.Files {
		part := table.Row{}
		for _, name := range s.Metadata.PartitionColumns {
			key := name
			if sf := s.Schema.Field(name); sf != nil {
				key = sf.PhysicalName(mode)
			}
			var v any
			if raw := f.PartitionValues[key]; raw != nil {
				v = *raw
			}
			part = append(part, table.Field{Key: name, Value: v})
		}
		var records, bbox, dv any = nil, nil, int64(0)
		if st, err := f.ParsedStats(); err == nil && st != nil {
			records = st.NumRecords
		}
		if b, ok := s.FileBound(f, cols); ok {
			bbox = b
		}
		if f.DeletionVector != nil {
			dv = f.DeletionVector.Cardinality
		}
		name, err := f.DecodedPath()
		if err != nil {
			name = f.Path
		}
		rows = append(rows, table.Row{
			{Key: "file_path", Value: name}, {Key: "partition", Value: part}, {Key: "record_count", Value: records},
			{Key: "file_size_in_bytes", Value: f.Size}, {Key: "modification_time", Value: time.UnixMilli(f.ModificationTime).UTC()},
			{Key: "bbox", Value: bbox}, {Key: "deletion_vector_cardinality", Value: dv},
		})
	}
	return rows
}

func deltaHistory(h []delta.VersionInfo) []table.Row {
	rows := make([]table.Row, 0, len(h))
	for _, v := range h {
		var op, params, metrics, readVersion, blind, engine any
		if ci := v.Info; ci != nil {
			op, engine = ci.Operation, ci.EngineInfo
			if ci.OperationParameters != nil {
				params = ci.OperationParameters
			}
			if ci.OperationMetrics != nil {
				metrics = ci.OperationMetrics
			}
			if ci.ReadVersion != nil {
				readVersion = *ci.ReadVersion
			}
			if ci.IsBlindAppend != nil {
				blind = *ci.IsBlindAppend
			}
		}
		rows = append(rows, table.Row{
			{Key: "version", Value: v.Version}, {Key: "timestamp", Value: v.Timestamp}, {Key: "operation", Value: op},
			{Key: "operation_parameters", Value: params}, {Key: "operation_metrics", Value: metrics},
			{Key: "read_version", Value: readVersion}, {Key: "is_blind_append", Value: blind}, {Key: "engine_info", Value: engine},
		})
	}
	return rows
}

func deltaSchema(s *delta.Snapshot, name string) table.TableSchema {
	out := table.TableSchema{
		Table:         name,
		Format:        fmt.Sprintf("delta (reader v%d, writer v%d)", s.Protocol.MinReaderVersion, s.Protocol.MinWriterVersion),
		Columns:       []table.SchemaColumn{},
		Properties:    maps.Clone(s.Metadata.Configuration),
		PartitionSpec: strings.Join(s.Metadata.PartitionColumns, ", "),
		SortOrder:     "unsorted",
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	if out.PartitionSpec == "" {
		out.PartitionSpec = "unpartitioned"
	}
	for i, f := range s.Schema.Fields {
		id, ok := f.FieldID()
		if !ok {
			id = i + 1
		}
		out.Columns = append(out.Columns, table.SchemaColumn{ID: id, Name: f.Name, Type: delta.TypeString(f.Type), Required: !f.Nullable})
	}
	cols, err := s.SpatialColumns("")
	if err != nil {
		out.GeometryProblem = err.Error()
	} else {
		out.Geometry = table.GeometryOf(cols)
	}
	if ci := s.CommitInfo; ci != nil && ci.Operation == "OPTIMIZE" {
		var params []string
		for _, k := range slices.Sorted(maps.Keys(ci.OperationParameters)) {
			params = append(params, fmt.Sprintf("%s=%v", k, ci.OperationParameters[k]))
		}
		out.LastRewrite = strings.TrimSpace("OPTIMIZE " + strings.Join(params, " "))
	}
	return out
}
