package reliability

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
)

// ErrDigest marks a table whose rows cannot be digested (a column is
// missing or of an unexpected type).
var ErrDigest = errors.New("reliability: cannot digest table")

// Digest is an order-independent summary of a table's rows: two scans that
// return the same multiset of (id, geometry) rows have equal digests, in
// whatever files and order the rows sit.
type Digest struct {
	// Rows is the number of rows scanned.
	Rows int64
	// Sum is the sum (mod 2^64) of FNV-1a hashes of each row's id and WKB.
	Sum uint64
	// IDs counts how often each id was seen.
	IDs map[int64]int
}

// Equal reports whether d and o have the same row count and checksum.
func (d Digest) Equal(o Digest) bool { return d.Rows == o.Rows && d.Sum == o.Sum }

// Duplicates returns the ids seen more than once, sorted.
func (d Digest) Duplicates() []int64 {
	var dups []int64
	for id, n := range d.IDs {
		if n > 1 {
			dups = append(dups, id)
		}
	}
	slices.Sort(dups)
	return dups
}

// String prints the figures a failure message needs.
func (d Digest) String() string {
	return fmt.Sprintf("rows=%d sum=%016x distinct_ids=%d", d.Rows, d.Sum, len(d.IDs))
}

// TableDigest scans tbl (its current snapshot, or snapshotID when it is not
// zero) through iceberg-go, applying delete files, and digests the id and
// geometry columns of every row.
func TableDigest(ctx context.Context, tbl *table.Table, snapshotID int64) (Digest, error) {
	opts := []table.ScanOption{table.WithSelectedFields("id", "geometry")}
	if snapshotID != 0 {
		opts = append(opts, table.WithSnapshotID(snapshotID))
	}
	d := Digest{IDs: map[int64]int{}}
	if tbl.CurrentSnapshot() == nil && snapshotID == 0 {
		return d, nil
	}
	scan := tbl.Scan(opts...)
	defer scan.Close()
	_, batches, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return d, fmt.Errorf("scan %s: %w", tbl.Identifier(), err)
	}
	var idb [8]byte
	for rec, err := range batches {
		if err != nil {
			return d, fmt.Errorf("scan %s: %w", tbl.Identifier(), err)
		}
		err := digestBatch(&d, rec, idb[:])
		rec.Release()
		if err != nil {
			return d, err
		}
	}
	return d, nil
}

func digestBatch(d *Digest, rec arrow.RecordBatch, idb []byte) error {
	idCol, geomCol := column(rec, "id"), column(rec, "geometry")
	ids, ok := idCol.(*array.Int64)
	if !ok {
		return fmt.Errorf("%w: id column is %T, want int64", ErrDigest, idCol)
	}
	if ext, ok := geomCol.(array.ExtensionArray); ok {
		geomCol = ext.Storage()
	}
	geoms, ok := geomCol.(interface{ Value(int) []byte })
	if !ok {
		return fmt.Errorf("%w: geometry column is %T, want binary", ErrDigest, geomCol)
	}
	for i := range int(rec.NumRows()) {
		id := ids.Value(i)
		binary.LittleEndian.PutUint64(idb, uint64(id))
		h := fnv.New64a()
		h.Write(idb)
		h.Write(geoms.Value(i))
		d.Sum += h.Sum64()
		d.Rows++
		d.IDs[id]++
	}
	return nil
}

func column(rec arrow.RecordBatch, name string) arrow.Array {
	for i, f := range rec.Schema().Fields() {
		if f.Name == name {
			return rec.Column(i)
		}
	}
	return nil
}
