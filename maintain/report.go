package maintain

import (
	"encoding/json"

	"github.com/geocompact/geocompact/table"
)

// FormatDelta is Report.Format and TableMetrics.Format for a Delta table
// (Run, Measure).
const FormatDelta = table.FormatDelta

// deltaTableMetrics is TableMetrics as a Delta table's metrics encode it:
// the same fields, with the snapshot figures named for what they count on
// a Delta table, the versions whose commits are still in its log. Its
// fields must stay those of TableMetrics, in order (a conversion checks).
type deltaTableMetrics struct {
	Format                    string             `json:"format,omitempty"`
	FileCount                 int64              `json:"file_count"`
	AvgFileBytes              int64              `json:"avg_file_bytes"`
	TotalBytes                int64              `json:"total_bytes"`
	TotalRecords              int64              `json:"total_records"`
	SnapshotCount             int                `json:"version_count"`
	OldestSnapshotAgeSeconds  float64            `json:"oldest_version_age_seconds"`
	CurrentSnapshotAgeSeconds float64            `json:"current_version_age_seconds"`
	ManifestCount             int                `json:"manifest_count"`
	DeleteFileCount           int64              `json:"delete_file_count"`
	Deletes                   *DeleteDebt        `json:"deletes,omitempty"`
	RowGroups                 *RowGroupHealth    `json:"row_groups,omitempty"`
	Partitions                []PartitionMetrics `json:"partitions"`
}

// tableMetricsJSON is TableMetrics without its methods, for encoding it.
type tableMetricsJSON TableMetrics

// MarshalJSON encodes the metrics. A Delta table's (Format FormatDelta)
// names its version figures version_count, oldest_version_age_seconds and
// current_version_age_seconds, where an Iceberg table's name snapshots.
func (m TableMetrics) MarshalJSON() ([]byte, error) {
	if m.Format != FormatDelta {
		return json.Marshal(tableMetricsJSON(m))
	}
	return json.Marshal(deltaTableMetrics(m))
}

// UnmarshalJSON decodes metrics MarshalJSON encoded, of either format.
func (m *TableMetrics) UnmarshalJSON(b []byte) error {
	var plain tableMetricsJSON
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	if plain.Format == FormatDelta {
		var d deltaTableMetrics
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		plain = tableMetricsJSON(d)
	}
	*m = TableMetrics(plain)
	return nil
}

// reportJSON is Report without its methods, for encoding it.
type reportJSON Report

// MarshalJSON encodes the report. A Delta table's (Format FormatDelta)
// encodes its metrics and its rewrite as a Delta table's, whose figures
// and commits are named versions (TableMetrics.MarshalJSON,
// engine.Result.MarshalJSON); they decode with that format.
func (r Report) MarshalJSON() ([]byte, error) {
	if r.Format == FormatDelta {
		r.Before, r.After = r.Before.inFormat(r.Format), r.After.inFormat(r.Format)
		if r.Rewrite != nil {
			rw := *r.Rewrite
			rw.Format = r.Format
			r.Rewrite = &rw
		}
	}
	return json.Marshal(reportJSON(r))
}

// inFormat returns a copy of m with the given format; nil for nil.
func (m *TableMetrics) inFormat(format string) *TableMetrics {
	if m == nil {
		return nil
	}
	c := *m
	c.Format = format
	return &c
}
