package maintain

import (
	"github.com/apache/iceberg-go"
)

// DeleteDebt is what the live deletes of a partition (or of the whole
// table) cost its readers: every scan of the partition reads these files
// or vectors and applies them to the data files' rows. Compacting the
// delete files (or purging the vectors) cuts the files read; rewriting the
// data files removes the debt.
type DeleteDebt struct {
	// PositionDeleteFiles are Iceberg position delete files (Parquet, Avro
	// or ORC), EqualityDeleteFiles Iceberg equality delete files, and
	// DeletionVectors Iceberg v3 deletion vectors (in Puffin files) or
	// Delta deletion vectors, one per data file that carries one.
	PositionDeleteFiles int64 `json:"position_delete_files"`
	EqualityDeleteFiles int64 `json:"equality_delete_files"`
	DeletionVectors     int64 `json:"deletion_vectors"`
	// DeleteBytes is the size of the delete files, and of each deletion
	// vector's blob (not of the Puffin file or Delta vector file holding
	// several).
	DeleteBytes int64 `json:"delete_bytes"`
	// DeletedRecords is the rows deleted by position: the records of the
	// position delete files and the cardinality of the vectors. A position
	// delete whose data file is gone still counts until the delete files
	// are rewritten.
	DeletedRecords int64 `json:"deleted_records"`
	// EqualityDeleteRecords is the records of the equality delete files:
	// the keys they delete, not the rows those keys match.
	EqualityDeleteRecords int64 `json:"equality_delete_records"`
	// DeletedFraction is DeletedRecords over the records of the data files
	// (before deletes), at most 1; 0 with no data records.
	DeletedFraction float64 `json:"deleted_fraction"`
}

// deleteTally adds deletes up per partition and over the table.
type deleteTally struct {
	parts map[string]*DeleteDebt
}

func newDeleteTally() *deleteTally { return &deleteTally{parts: map[string]*DeleteDebt{}} }

func (t *deleteTally) of(partition string) *DeleteDebt {
	d := t.parts[partition]
	if d == nil {
		d = &DeleteDebt{}
		t.parts[partition] = d
	}
	return d
}

// addIceberg counts an Iceberg delete file of partition.
func (t *deleteTally) addIceberg(partition string, df iceberg.DataFile) {
	d := t.of(partition)
	switch {
	case df.ContentType() == iceberg.EntryContentEqDeletes:
		d.EqualityDeleteFiles++
		d.EqualityDeleteRecords += df.Count()
		d.DeleteBytes += df.FileSizeBytes()
	case df.FileFormat() == iceberg.PuffinFile:
		d.DeletionVectors++
		d.DeletedRecords += df.Count()
		size := df.FileSizeBytes()
		if c, ok := df.(interface{ ContentSizeInBytes() *int64 }); ok && c.ContentSizeInBytes() != nil {
			size = *c.ContentSizeInBytes()
		}
		d.DeleteBytes += size
	default:
		d.PositionDeleteFiles++
		d.DeletedRecords += df.Count()
		d.DeleteBytes += df.FileSizeBytes()
	}
}

// addVector counts a deletion vector of partition (a Delta table's)
// that deletes rows records and takes bytes.
func (t *deleteTally) addVector(partition string, rows, bytes int64) {
	d := t.of(partition)
	d.DeletionVectors++
	d.DeletedRecords += rows
	d.DeleteBytes += bytes
}

// finish sets each partition's debt (with its fraction of records) and the
// table's sum; a table without deletes keeps a nil Deletes.
func (t *deleteTally) finish(m *TableMetrics, records map[string]int64) {
	if len(t.parts) == 0 {
		return
	}
	total := &DeleteDebt{}
	var all int64
	for i := range m.Partitions {
		p := &m.Partitions[i]
		all += records[p.Partition]
		d := t.parts[p.Partition]
		if d == nil {
			continue
		}
		d.DeletedFraction = fraction(d.DeletedRecords, records[p.Partition])
		p.Deletes = d
	}
	for _, d := range t.parts { // a partition with deletes and no data files counts in the total
		total.PositionDeleteFiles += d.PositionDeleteFiles
		total.EqualityDeleteFiles += d.EqualityDeleteFiles
		total.DeletionVectors += d.DeletionVectors
		total.DeleteBytes += d.DeleteBytes
		total.DeletedRecords += d.DeletedRecords
		total.EqualityDeleteRecords += d.EqualityDeleteRecords
	}
	total.DeletedFraction = fraction(total.DeletedRecords, all)
	m.Deletes = total
}

func fraction(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return min(1, float64(n)/float64(of))
}
