package engine

import "fmt"

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

// PartitionLabel is a partition as messages name it: PartitionPath's text,
// or "(unpartitioned)" for the unpartitioned table.
func PartitionLabel(p string) string {
	if p == "" {
		return "(unpartitioned)"
	}
	return p
}
