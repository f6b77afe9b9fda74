package cluster

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// columnKeys writes the key of a linear field for every row of a: the
// order-preserving encoding, inverted for DESC (so NaN, last for ASC, comes
// first for DESC, as Java's Double.compare reversed does). Strings give
// their first 8 bytes, big-endian.
func columnKeys(dst []uint64, valid []bool, a arrow.Array, f linearField) error {
	if f.str {
		for i := range dst {
			valid[i] = a.IsValid(i)
			var buf [8]byte
			if valid[i] {
				copy(buf[:], stringValue(a, i))
			}
			dst[i] = binary.BigEndian.Uint64(buf[:])
		}
	} else if err := encodeColumn(dst, valid, a, false); err != nil {
		return fmt.Errorf("column %q: %w", f.Column, err)
	}
	if f.Direction == Desc {
		for i := range dst {
			dst[i] = ^dst[i]
		}
	}
	return nil
}

// fieldKeys is columnKeys for the field's column of rec, or, for the
// bbox-corner fields of the linear shorthand on a table without bbox
// columns, the corner of each row's box taken from its spatial column.
func (s *Sorter) fieldKeys(dst []uint64, valid []bool, rec arrow.RecordBatch, f linearField, sc *scratch) error {
	if !f.corner {
		return columnKeys(dst, valid, rec.Column(f.col), f)
	}
	xs, ys, err := s.spatial[0].corners(rec, sc)
	if err != nil {
		return err
	}
	vals := xs
	if f.axis == 1 {
		vals = ys
	}
	for i, v := range vals {
		valid[i] = v == v
		dst[i] = OrderedFloat64(v)
		if f.Direction == Desc {
			dst[i] = ^dst[i]
		}
	}
	return nil
}

// stringValue returns value i of a string or binary array.
func stringValue(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.StringView:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.LargeBinary:
		return string(a.Value(i))
	case *array.BinaryView:
		return string(a.Value(i))
	}
	return ""
}

// linearPermutation sorts by the fields one at a time from the least
// significant to the most; each pass is stable, so the result is
// lexicographic. Numeric fields use the radix sort, strings a stable
// comparison sort. Nulls are split off before each pass and put first or
// last, keeping their current order.
func (s *Sorter) linearPermutation(recs []arrow.RecordBatch, total int) ([]int32, error) {
	perm := iota32(total)
	var sc scratch
	for fi := len(s.fields) - 1; fi >= 0; fi-- {
		f := s.fields[fi]
		keys := make([]uint64, total)
		valid := make([]bool, total)
		var strs []string
		if f.str {
			strs = make([]string, total)
		}
		off := 0
		for _, rec := range recs {
			n := int(rec.NumRows())
			if err := s.fieldKeys(keys[off:off+n], valid[off:off+n], rec, f, &sc); err != nil {
				return nil, err
			}
			if f.str {
				for i := range n {
					if valid[off+i] {
						strs[off+i] = stringValue(rec.Column(f.col), i)
					}
				}
			}
			off += n
		}
		var rows, nulls []int32
		for _, r := range perm {
			if valid[r] {
				rows = append(rows, r)
			} else {
				nulls = append(nulls, r)
			}
		}
		if f.str {
			desc := f.Direction == Desc
			slices.SortStableFunc(rows, func(a, b int32) int {
				c := strings.Compare(strs[a], strs[b])
				if desc {
					return -c
				}
				return c
			})
		} else {
			rk := make([]uint64, len(rows))
			for j, r := range rows {
				rk[j] = keys[r]
			}
			keys = nil
			rank := iota32(len(rows))
			SortKeys(rk, rank)
			sorted := make([]int32, len(rows))
			for j, k := range rank {
				sorted[j] = rows[k]
			}
			rows = sorted
		}
		perm = perm[:0]
		if f.Nulls == NullsFirst {
			perm = append(perm, nulls...)
		}
		perm = append(perm, rows...)
		if f.Nulls == NullsLast {
			perm = append(perm, nulls...)
		}
	}
	return perm, nil
}
