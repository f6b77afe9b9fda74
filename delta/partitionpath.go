package delta

import (
	"net/url"
	"strings"
)

// NullPartition is how a null partition value appears in partition paths,
// as Hive-style directory names write it.
const NullPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionPath names the partition of a live file the way Delta writers
// name partition directories: "col=value/col2=value2" in partition column
// order, with logical column names (under column mapping too) and
// path-escaped values; a null value is NullPartition. It is "" for an
// unpartitioned table.
func (s *Snapshot) PartitionPath(add *Add) string {
	mode := s.ColumnMapping()
	parts := make([]string, 0, len(s.Metadata.PartitionColumns))
	for _, name := range s.Metadata.PartitionColumns {
		key := name
		if f := s.Schema.Field(name); f != nil {
			key = f.PhysicalName(mode)
		}
		v := NullPartition
		if raw := add.PartitionValues[key]; raw != nil {
			v = url.PathEscape(*raw)
		}
		parts = append(parts, url.PathEscape(name)+"="+v)
	}
	return strings.Join(parts, "/")
}
