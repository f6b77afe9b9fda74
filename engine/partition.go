package engine

// PartitionLabel is a partition as messages name it: PartitionPath's text,
// or "(unpartitioned)" for the unpartitioned table.
func PartitionLabel(p string) string {
	if p == "" {
		return "(unpartitioned)"
	}
	return p
}
