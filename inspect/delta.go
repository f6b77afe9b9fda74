package inspect

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
)

// DeltaKinds are the kinds DeltaRows reads.
var DeltaKinds = []Kind{Files, History}

// DeltaRows reads a Delta table's files or history as rows, keyed like the
// Iceberg metadata tables Rows reads where they agree, so scripts work on
// both.
//
// Files has one row per live file of the latest version: file_path (the
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
func DeltaRows(ctx context.Context, tbl *delta.Table, kind Kind) ([]Row, error) {
	switch kind {
	case Files:
		s, err := tbl.Snapshot(ctx)
		if err != nil {
			return nil, err
		}
		return deltaFiles(s), nil
	case History:
		h, err := tbl.History(ctx)
		if err != nil {
			return nil, err
		}
		return deltaHistory(h), nil
	}
	return nil, fmt.Errorf("%w %q for a Delta table, want files or history", ErrKind, kind)
}

func deltaFiles(s *delta.Snapshot) []Row {
	cols, _ := s.SpatialColumns("")
	mode := s.ColumnMapping()
	rows := make([]Row, 0, len(s.Files))
	for _, f := range s.Files {
		part := Row{}
		for _, name := range s.Metadata.PartitionColumns {
			key := name
			if sf := s.Schema.Field(name); sf != nil {
				key = sf.PhysicalName(mode)
			}
			var v any
			if raw := f.PartitionValues[key]; raw != nil {
				v = *raw
			}
			part = append(part, Field{Key: name, Value: v})
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
		rows = append(rows, Row{
			{"file_path", name}, {"partition", part}, {"record_count", records},
			{"file_size_in_bytes", f.Size}, {"modification_time", time.UnixMilli(f.ModificationTime).UTC()},
			{"bbox", bbox}, {"deletion_vector_cardinality", dv},
		})
	}
	return rows
}

func deltaHistory(h []delta.VersionInfo) []Row {
	rows := make([]Row, 0, len(h))
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
		rows = append(rows, Row{
			{"version", v.Version}, {"timestamp", v.Timestamp}, {"operation", op},
			{"operation_parameters", params}, {"operation_metrics", metrics},
			{"read_version", readVersion}, {"is_blind_append", blind}, {"engine_info", engine},
		})
	}
	return rows
}

// DeltaSchema describes a Delta table's latest version as Schema describes
// an Iceberg table: Table is name, Format the protocol versions,
// FormatVersion 0; column ids are column mapping ids, else positions from 1;
// the geometry is what delta.Snapshot.SpatialColumns finds. Delta tables
// have no sort order; LastRewrite is the latest commit's operation when it
// is an OPTIMIZE, with its parameters.
func DeltaSchema(s *delta.Snapshot, name string) TableSchema {
	out := TableSchema{
		Table:         name,
		Format:        fmt.Sprintf("delta (reader v%d, writer v%d)", s.Protocol.MinReaderVersion, s.Protocol.MinWriterVersion),
		Columns:       []Column{},
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
		out.Columns = append(out.Columns, Column{ID: id, Name: f.Name, Type: delta.TypeString(f.Type), Required: !f.Nullable})
	}
	cols, err := s.SpatialColumns("")
	if err != nil {
		out.GeometryProblem = err.Error()
	} else {
		out.Geometry = geometryOf(cols)
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

// geometryOf is the Geometry of resolved columns: the flat bbox columns,
// or a covering's fields as column.field.
func geometryOf(cols spatial.Columns) *Geometry {
	g := &Geometry{Column: cols.Geometry, Encoding: cols.Encoding, CRS: cols.CRS, CRSSource: cols.CRSSource, BBoxColumns: []string{}}
	for _, b := range cols.BBox {
		if b != "" {
			g.BBoxColumns = append(g.BBoxColumns, b)
		}
	}
	if len(g.BBoxColumns) == 0 && cols.Covering != "" {
		for _, f := range cols.CoveringFields {
			g.BBoxColumns = append(g.BBoxColumns, cols.Covering+"."+f)
		}
	}
	return g
}
