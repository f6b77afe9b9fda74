package delta

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Defaults of the data skipping table properties.
const (
	defaultNumIndexedCols = 32
	statsStringPrefix     = 32
)

// StatsCollector computes a data file's stats from the batches written to
// it: numRecords, and min, max and null count for the columns the table
// indexes (delta.dataSkippingStatsColumns, else the first
// delta.dataSkippingNumIndexedCols leaf columns, 32 by default, -1 for all).
// Batches are in the logical schema of Snapshot.ArrowSchema; stats are keyed
// by physical names. Booleans, binaries, arrays and maps get null counts only;
// strings are cut to a 32-character prefix (the max then ends in U+10FFFF so
// it stays an upper bound); timestamps are cut to milliseconds, the max
// rounded up.
type StatsCollector struct {
	leaves []*leafStats
	rows   int64
}

type leafStats struct {
	logical  []string // logical path from the top-level column
	physical []string
	dt       DataType
	nulls    int64
	min, max any
}

// newStatsCollector returns a collector for data files of the snapshot's table.
func newStatsCollector(s *Snapshot) *StatsCollector {
	mode := s.ColumnMapping()
	parts := map[string]bool{}
	for _, p := range s.Metadata.PartitionColumns {
		parts[p] = true
	}
	var all []*leafStats
	for _, f := range s.Schema.Fields {
		if !parts[f.Name] {
			all = collectLeaves(all, f, nil, nil, mode)
		}
	}
	c := &StatsCollector{}
	if cols := s.Config("delta.dataSkippingStatsColumns", ""); cols != "" {
		want := map[string]bool{}
		for _, name := range strings.Split(cols, ",") {
			want[strings.Trim(strings.TrimSpace(name), "`")] = true
		}
		for _, l := range all {
			if selected(l.logical, want) {
				c.leaves = append(c.leaves, l)
			}
		}
		return c
	}
	n := defaultNumIndexedCols
	if v, err := strconv.Atoi(s.Config("delta.dataSkippingNumIndexedCols", "")); err == nil {
		n = v
	}
	if n < 0 || n > len(all) {
		n = len(all)
	}
	c.leaves = all[:n]
	return c
}

// selected says whether a leaf or one of its enclosing structs is listed.
func selected(path []string, want map[string]bool) bool {
	for i := range path {
		if want[strings.Join(path[:i+1], ".")] {
			return true
		}
	}
	return false
}

func collectLeaves(dst []*leafStats, f *StructField, logical, physical []string, mode ColumnMapping) []*leafStats {
	lp := append(append([]string(nil), logical...), f.Name)
	pp := append(append([]string(nil), physical...), f.PhysicalName(mode))
	if st, ok := f.Type.(*StructType); ok {
		for _, c := range st.Fields {
			dst = collectLeaves(dst, c, lp, pp, mode)
		}
		return dst
	}
	return append(dst, &leafStats{logical: lp, physical: pp, dt: f.Type})
}

// Add accumulates one batch.
func (c *StatsCollector) Add(rec arrow.RecordBatch) {
	c.rows += rec.NumRows()
	for _, l := range c.leaves {
		idx := rec.Schema().FieldIndices(l.logical[0])
		if len(idx) == 0 {
			l.nulls += rec.NumRows()
			continue
		}
		l.add(rec.Column(idx[0]), l.logical[1:])
	}
}

func (l *leafStats) add(arr arrow.Array, rest []string) {
	if len(rest) > 0 {
		sa, ok := arr.(*array.Struct)
		if !ok {
			return
		}
		st := sa.DataType().(*arrow.StructType)
		i, ok := st.FieldIdx(rest[0])
		if !ok {
			l.nulls += int64(arr.Len())
			return
		}
		child := sa.Field(i)
		for r := 0; r < arr.Len(); r++ {
			if sa.IsNull(r) && !child.IsNull(r) {
				l.nulls++ // a null parent makes the leaf null
			}
		}
		l.add(child, rest[1:])
		return
	}
	l.nulls += int64(arr.NullN())
	if lo, hi, typed := extremes(arr); typed {
		if lo != nil {
			l.update(lo)
			l.update(hi)
		}
		return
	}
	for r := 0; r < arr.Len(); r++ {
		if arr.IsNull(r) {
			continue
		}
		if v, ok := statValue(arr, r); ok {
			l.update(v)
		}
	}
}

// extremes returns the least and the greatest of arr's values that
// statValue gives (nulls and NaNs skipped), as it gives them, for the
// types whose order is their values': a typed pass over the batch instead
// of a comparison of boxed values per row. typed is false for other
// types; lo and hi are nil for a batch without such a value.
func extremes(arr arrow.Array) (lo, hi any, typed bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return boxed(ordered(arr, a.Value, nil), func(v int8) any { return int64(v) })
	case *array.Int16:
		return boxed(ordered(arr, a.Value, nil), func(v int16) any { return int64(v) })
	case *array.Int32:
		return boxed(ordered(arr, a.Value, nil), func(v int32) any { return int64(v) })
	case *array.Int64:
		return boxed(ordered(arr, a.Value, nil), func(v int64) any { return v })
	case *array.Date32:
		return boxed(ordered(arr, a.Value, nil), func(v arrow.Date32) any { return int64(v) })
	case *array.Float32:
		return boxed(ordered(arr, a.Value, func(v float32) bool { return v != v }), func(v float32) any { return float64(v) })
	case *array.Float64:
		return boxed(ordered(arr, a.Value, math.IsNaN), func(v float64) any { return v })
	case *array.String:
		return boxed(ordered(arr, a.Value, nil), func(v string) any { return strings.Clone(v) })
	case *array.LargeString:
		return boxed(ordered(arr, a.Value, nil), func(v string) any { return strings.Clone(v) })
	case *array.Timestamp:
		// A later instant is a larger value in any unit, and UnixMicro
		// keeps the order (it floors).
		unit := a.DataType().(*arrow.TimestampType).Unit
		return boxed(ordered(arr, a.Value, nil), func(v arrow.Timestamp) any { return v.ToTime(unit).UnixMicro() })
	}
	return nil, nil, false
}

// span is the least and greatest of a batch's values, ok when it has one.
type span[T cmp.Ordered] struct {
	lo, hi T
	ok     bool
}

// ordered is the span of arr's non-null values at(r), skip(v) left out.
// Of equal values the first is kept, as update keeps it.
func ordered[T cmp.Ordered](arr arrow.Array, at func(int) T, skip func(T) bool) span[T] {
	var s span[T]
	nulls := arr.NullN() > 0
	for r := range arr.Len() {
		if nulls && arr.IsNull(r) {
			continue
		}
		v := at(r)
		switch {
		case skip != nil && skip(v):
		case !s.ok:
			s = span[T]{v, v, true}
		case v < s.lo:
			s.lo = v
		case v > s.hi:
			s.hi = v
		}
	}
	return s
}

func boxed[T cmp.Ordered](s span[T], box func(T) any) (lo, hi any, typed bool) {
	if !s.ok {
		return nil, nil, true
	}
	return box(s.lo), box(s.hi), true
}

// statValue returns a comparable value: int64, float64, string,
// decimal128.Num (with the type's scale), or false for types without min/max.
func statValue(arr arrow.Array, r int) (any, bool) {
	switch a := arr.(type) {
	case *array.Int8:
		return int64(a.Value(r)), true
	case *array.Int16:
		return int64(a.Value(r)), true
	case *array.Int32:
		return int64(a.Value(r)), true
	case *array.Int64:
		return a.Value(r), true
	case *array.Float32:
		f := float64(a.Value(r))
		return f, !math.IsNaN(f)
	case *array.Float64:
		f := a.Value(r)
		return f, !math.IsNaN(f)
	case *array.String:
		return a.Value(r), true
	case *array.LargeString:
		return a.Value(r), true
	case *array.Date32:
		return int64(a.Value(r)), true
	case *array.Timestamp:
		return a.Value(r).ToTime(a.DataType().(*arrow.TimestampType).Unit).UnixMicro(), true
	case *array.Decimal128:
		return a.Value(r), true
	}
	return nil, false
}

func less(a, b any) bool {
	switch a := a.(type) {
	case int64:
		return a < b.(int64)
	case float64:
		return a < b.(float64)
	case string:
		return a < b.(string)
	case decimal128.Num:
		return a.Less(b.(decimal128.Num))
	}
	return false
}

func (l *leafStats) update(v any) {
	if l.min == nil || less(v, l.min) {
		l.min = v
	}
	if l.max == nil || less(l.max, v) {
		l.max = v
	}
}

// Stats returns the stats of everything added so far.
func (c *StatsCollector) Stats() *Stats {
	st := &Stats{NumRecords: c.rows, MinValues: map[string]any{}, MaxValues: map[string]any{}, NullCount: map[string]any{}}
	for _, l := range c.leaves {
		put(st.NullCount, l.physical, l.nulls)
		if l.min == nil {
			continue
		}
		put(st.MinValues, l.physical, render(l.min, l.dt, false))
		put(st.MaxValues, l.physical, render(l.max, l.dt, true))
	}
	return st
}

func put(m map[string]any, path []string, v any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

// render turns a collected value into its stats JSON form for type dt.
func render(v any, dt DataType, isMax bool) any {
	if d, ok := dt.(*DecimalType); ok {
		return json.Number(v.(decimal128.Num).ToString(d.Scale))
	}
	name := dt.typeName()
	switch name {
	case "date":
		return time.Unix(v.(int64)*86400, 0).UTC().Format("2006-01-02")
	case "timestamp", "timestamp_ntz":
		us := v.(int64)
		ms := us / 1000 // truncates toward zero: floor the min, ceil the max
		switch {
		case us%1000 != 0 && !isMax && us < 0:
			ms--
		case us%1000 != 0 && isMax && us > 0:
			ms++
		}
		ts := time.UnixMilli(ms).UTC()
		if name == "timestamp" {
			return ts.Format("2006-01-02T15:04:05.000Z07:00")
		}
		return ts.Format("2006-01-02T15:04:05.000")
	case "string":
		return truncateStat(v.(string), isMax)
	}
	return v
}

func truncateStat(s string, isMax bool) string {
	if utf8.RuneCountInString(s) <= statsStringPrefix {
		return s
	}
	runes := []rune(s)[:statsStringPrefix]
	if isMax {
		return string(runes) + string(utf8.MaxRune)
	}
	return string(runes)
}
