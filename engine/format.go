package engine

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// FormatBytes renders n in binary units ("1.2 GiB") for messages and
// human-readable output.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
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

// PartitionLabel is a partition as messages name it: PartitionPath's text,
// or "(unpartitioned)" for the unpartitioned table.
func PartitionLabel(p string) string {
	if p == "" {
		return "(unpartitioned)"
	}
	return p
}
