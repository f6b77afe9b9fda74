package maintain

import (
	"encoding/json"
)

// FormatDelta is Report.Format for a Delta table's run (RunDelta).
const FormatDelta = "delta"

// deltaTableMetrics is TableMetrics as a Delta table's report encodes it:
// the same fields, with the snapshot figures named for what they count on
// a Delta table, the versions whose commits are still in its log. Its
// fields must stay those of TableMetrics, in order (a conversion checks).
type deltaTableMetrics struct {
	FileCount                 int64              `json:"file_count"`
	AvgFileBytes              int64              `json:"avg_file_bytes"`
	TotalBytes                int64              `json:"total_bytes"`
	TotalRecords              int64              `json:"total_records"`
	SnapshotCount             int                `json:"version_count"`
	OldestSnapshotAgeSeconds  float64            `json:"oldest_version_age_seconds"`
	CurrentSnapshotAgeSeconds float64            `json:"current_version_age_seconds"`
	ManifestCount             int                `json:"manifest_count"`
	DeleteFileCount           int64              `json:"delete_file_count"`
	Partitions                []PartitionMetrics `json:"partitions"`
}

// reportJSON is Report without its methods, for encoding it.
type reportJSON Report

// deltaReportJSON is a Delta table's report as encoded: its metrics name
// versions (deltaTableMetrics), not snapshots.
type deltaReportJSON struct {
	reportJSON
	Before *deltaTableMetrics `json:"before"`
	After  *deltaTableMetrics `json:"after,omitempty"`
}

// MarshalJSON encodes the report. A Delta table's (Format FormatDelta)
// names its version figures version_count, oldest_version_age_seconds and
// current_version_age_seconds, where an Iceberg table's name snapshots.
func (r Report) MarshalJSON() ([]byte, error) {
	if r.Format != FormatDelta {
		return json.Marshal(reportJSON(r))
	}
	return json.Marshal(deltaReportJSON{reportJSON: reportJSON(r), Before: toDeltaMetrics(r.Before), After: toDeltaMetrics(r.After)})
}

// UnmarshalJSON decodes a report MarshalJSON encoded, of either format.
func (r *Report) UnmarshalJSON(b []byte) error {
	var plain reportJSON
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	if plain.Format == FormatDelta {
		d := deltaReportJSON{reportJSON: plain}
		if err := json.Unmarshal(b, &d); err != nil {
			return err
		}
		plain = d.reportJSON
		plain.Before, plain.After = fromDeltaMetrics(d.Before), fromDeltaMetrics(d.After)
	}
	*r = Report(plain)
	return nil
}

func toDeltaMetrics(m *TableMetrics) *deltaTableMetrics {
	if m == nil {
		return nil
	}
	d := deltaTableMetrics(*m)
	return &d
}

func fromDeltaMetrics(d *deltaTableMetrics) *TableMetrics {
	if d == nil {
		return nil
	}
	m := TableMetrics(*d)
	return &m
}
