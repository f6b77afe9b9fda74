package deltatable

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
)

// fileMetrics evaluates a bound --where predicate (NOTs rewritten away)
// on one file's statistics, inclusively, as Iceberg's inclusive metrics
// evaluation does on a data file's bounds: a predicate is false only when
// the statistics prove that no row of the file can match. A column the
// statistics do not describe may match anything.
type fileMetrics struct {
	cols map[int]*whereColumn
	mode delta.ColumnMapping
	file table.PlanFile
	// stats are the file's statistics, nil without; records is their
	// numRecords, -1 when they do not say.
	stats   *delta.Stats
	records int64
}

var (
	_ iceberg.BoundBooleanExprVisitor[bool]    = (*fileMetrics)(nil)
	_ iceberg.BoundGeospatialExprVisitor[bool] = (*fileMetrics)(nil)
)

// colStats is what one file's statistics say of one column: bounds (nil
// when unknown), its null count when known, and whether every row is null.
type colStats struct {
	lower, upper iceberg.Literal
	nulls        int64
	hasNulls     bool
	allNull      bool
}

// column returns what the file's statistics say of t's column.
func (m *fileMetrics) column(t iceberg.BoundTerm) colStats {
	c := m.cols[t.Ref().Field().ID]
	if c == nil {
		return colStats{}
	}
	if c.partition {
		return m.partitionColumn(c, t.Type())
	}
	if m.stats == nil {
		return colStats{}
	}
	var cs colStats
	if v, ok := m.stats.Min(c.physical...); ok {
		cs.lower = statLiteral(v, c.typ, t.Type(), false)
	}
	if v, ok := m.stats.Max(c.physical...); ok {
		cs.upper = statLiteral(v, c.typ, t.Type(), true)
	}
	cs.nulls, cs.hasNulls = m.stats.Nulls(c.physical...)
	cs.allNull = cs.hasNulls && m.records > 0 && cs.nulls >= m.records
	return cs
}

// partitionColumn is a partition column's one value in the file.
func (m *fileMetrics) partitionColumn(c *whereColumn, typ iceberg.Type) colStats {
	raw := add(m.file).PartitionValues[c.field.PhysicalName(m.mode)]
	v, err := delta.ParsePartitionValue(raw, c.typ)
	if err != nil {
		return colStats{}
	}
	if v == nil {
		return colStats{nulls: m.records, hasNulls: m.records >= 0, allNull: true}
	}
	lit := valueLiteral(v, c.typ, typ)
	return colStats{lower: lit, upper: lit, hasNulls: true}
}

// compare compares two literals of one type; ok is false when it cannot.
func compare(a, b iceberg.Literal) (c int, ok bool) {
	switch a := a.(type) {
	case iceberg.TypedLiteral[int32]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[int64]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[float32]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[float64]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[string]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[bool]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[iceberg.Date]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[iceberg.Timestamp]:
		return typedCompare(a, b)
	case iceberg.TypedLiteral[iceberg.Decimal]:
		return typedCompare(a, b)
	}
	return 0, false
}

func typedCompare[T iceberg.LiteralType](a iceberg.TypedLiteral[T], b iceberg.Literal) (int, bool) {
	tb, ok := b.(iceberg.TypedLiteral[T])
	if !ok {
		return 0, false
	}
	return a.Comparator()(a.Value(), tb.Value()), true
}

// below reports whether bound is known to be below lit (strictly, or
// equal too when orEqual): false when either is unknown.
func below(bound, lit iceberg.Literal, orEqual bool) bool {
	if bound == nil {
		return false
	}
	c, ok := compare(bound, lit)
	return ok && (c < 0 || orEqual && c == 0)
}

// above reports whether bound is known to be above lit.
func above(bound, lit iceberg.Literal, orEqual bool) bool {
	if bound == nil {
		return false
	}
	c, ok := compare(bound, lit)
	return ok && (c > 0 || orEqual && c == 0)
}

func (m *fileMetrics) VisitTrue() bool                            { return true }
func (m *fileMetrics) VisitFalse() bool                           { return false }
func (m *fileMetrics) VisitNot(bool) bool                         { return true } // NOTs are rewritten away first
func (m *fileMetrics) VisitAnd(l, r bool) bool                    { return l && r }
func (m *fileMetrics) VisitOr(l, r bool) bool                     { return l || r }
func (m *fileMetrics) VisitUnbound(iceberg.UnboundPredicate) bool { return true }
func (m *fileMetrics) VisitBound(p iceberg.BoundPredicate) bool {
	return iceberg.VisitBoundPredicate(p, m)
}

func (m *fileMetrics) VisitIsNull(t iceberg.BoundTerm) bool {
	cs := m.column(t)
	return !cs.hasNulls || cs.nulls > 0
}

func (m *fileMetrics) VisitNotNull(t iceberg.BoundTerm) bool { return !m.column(t).allNull }

// VisitIsNan may match unless the column holds nulls only: Delta's
// statistics count no NaNs.
func (m *fileMetrics) VisitIsNan(t iceberg.BoundTerm) bool { return !m.column(t).allNull }
func (m *fileMetrics) VisitNotNan(iceberg.BoundTerm) bool  { return true }

// mayMatch is a comparison's test on t's column: false when its values
// are all null or the bounds rule lit out.
func (m *fileMetrics) mayMatch(t iceberg.BoundTerm, rulesOut func(colStats) bool) bool {
	cs := m.column(t)
	return !cs.allNull && !rulesOut(cs)
}

func (m *fileMetrics) VisitLess(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	return m.mayMatch(t, func(cs colStats) bool { return above(cs.lower, lit, true) })
}

func (m *fileMetrics) VisitLessEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	return m.mayMatch(t, func(cs colStats) bool { return above(cs.lower, lit, false) })
}

func (m *fileMetrics) VisitGreater(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	return m.mayMatch(t, func(cs colStats) bool { return below(cs.upper, lit, true) })
}

func (m *fileMetrics) VisitGreaterEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	return m.mayMatch(t, func(cs colStats) bool { return below(cs.upper, lit, false) })
}

func (m *fileMetrics) VisitEqual(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	return m.mayMatch(t, func(cs colStats) bool { return outside(cs, lit) })
}

// outside reports whether lit is known to lie outside cs's bounds.
func outside(cs colStats, lit iceberg.Literal) bool {
	return above(cs.lower, lit, false) || below(cs.upper, lit, false)
}

// VisitNotEqual may match: bounds cannot show every value equals lit.
func (m *fileMetrics) VisitNotEqual(iceberg.BoundTerm, iceberg.Literal) bool { return true }

func (m *fileMetrics) VisitIn(t iceberg.BoundTerm, s iceberg.Set[iceberg.Literal]) bool {
	return m.mayMatch(t, func(cs colStats) bool {
		for _, lit := range s.Members() {
			if !outside(cs, lit) {
				return false
			}
		}
		return true
	})
}

func (m *fileMetrics) VisitNotIn(iceberg.BoundTerm, iceberg.Set[iceberg.Literal]) bool { return true }

// VisitStartsWith compares the prefix with the bounds cut to its length.
func (m *fileMetrics) VisitStartsWith(t iceberg.BoundTerm, lit iceberg.Literal) bool {
	cs := m.column(t)
	if cs.allNull {
		return false
	}
	p, ok := lit.(iceberg.TypedLiteral[string])
	if !ok {
		return true
	}
	prefix := p.Value()
	if lo, ok := cs.lower.(iceberg.TypedLiteral[string]); ok && cut(lo.Value(), len(prefix)) > prefix {
		return false
	}
	if hi, ok := cs.upper.(iceberg.TypedLiteral[string]); ok && cut(hi.Value(), len(prefix)) < prefix {
		return false
	}
	return true
}

func cut(s string, n int) string { return s[:min(n, len(s))] }

func (m *fileMetrics) VisitNotStartsWith(iceberg.BoundTerm, iceberg.Literal) bool { return true }

// VisitBBoxIntersects tests the file's bound, from its bbox column
// statistics: a file without one may intersect; touching boxes intersect.
func (m *fileMetrics) VisitBBoxIntersects(_ iceberg.BoundTerm, box iceberg.BoundingBox) bool {
	if !m.file.HasBound {
		return true
	}
	return m.file.Bound.Intersects(spatial.Bound{MinX: box.MinX, MinY: box.MinY, MaxX: box.MaxX, MaxY: box.MaxY})
}

func (m *fileMetrics) VisitBBoxNotIntersects(iceberg.BoundTerm, iceberg.BoundingBox) bool {
	return true
}

// statLiteral is a min (or max, isMax) statistic v of a column of Delta
// type dt as a literal of Iceberg type typ, or nil when it does not bound
// the column's values. A string max of statsPrefix characters or more may
// be a truncated prefix, which is no upper bound. A timestamp max is
// widened to the end of its millisecond, as writers cut timestamps to
// milliseconds.
func statLiteral(v any, dt delta.DataType, typ iceberg.Type, isMax bool) iceberg.Literal {
	if _, ok := dt.(*delta.DecimalType); ok {
		return fromString(strings.TrimSpace(stringOf(v, dt)), typ)
	}
	p, ok := dt.(*delta.PrimitiveType)
	if !ok {
		return nil
	}
	switch p.Name {
	case "byte", "short", "integer", "long", "float", "double":
		f, ok := delta.Float(v)
		if !ok || math.IsNaN(f) {
			return nil
		}
		return fromString(stringOf(v, dt), typ)
	case "string":
		s, ok := v.(string)
		if !ok || isMax && utf8.RuneCountInString(s) >= statsPrefix {
			return nil
		}
		return iceberg.NewLiteral(s)
	case "boolean":
		if b, ok := v.(bool); ok {
			return iceberg.NewLiteral(b)
		}
	case "date":
		return fromString(stringOf(v, dt), typ)
	case "timestamp", "timestamp_ntz":
		return timestampStat(stringOf(v, dt), isMax)
	}
	return nil
}

// statsPrefix is the string prefix Delta writers keep in statistics by
// default (delta.dataSkippingStringPrefixLength).
const statsPrefix = 32

// stringOf is a statistic or partition value as text.
func stringOf(v any, dt delta.DataType) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int64:
		return strconv.FormatInt(v, 10)
	case decimal128.Num:
		if d, ok := dt.(*delta.DecimalType); ok {
			return v.ToString(d.Scale)
		}
	case interface{ String() string }:
		return v.String()
	}
	return ""
}

// fromString converts s to a literal of typ, nil when it does not fit.
func fromString(s string, typ iceberg.Type) iceberg.Literal {
	if s == "" {
		return nil
	}
	lit, err := iceberg.StringLiteral(s).To(typ)
	if err != nil {
		return nil
	}
	return lit
}

// statTimestampLayouts are the forms of timestamp statistics: with an
// offset (Z, -08:00) for timestamp, without for timestamp_ntz (UTC).
var statTimestampLayouts = []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"}

func timestampStat(s string, isMax bool) iceberg.Literal {
	for _, l := range statTimestampLayouts {
		t, err := time.ParseInLocation(l, s, time.UTC)
		if err != nil {
			continue
		}
		us := t.UnixMicro()
		if isMax && us%1000 == 0 {
			us += 999
		}
		return iceberg.NewLiteral(iceberg.Timestamp(us))
	}
	return nil
}

// valueLiteral is a parsed partition value as a literal of typ.
func valueLiteral(v delta.PartitionValue, dt delta.DataType, typ iceberg.Type) iceberg.Literal {
	if _, ok := dt.(*delta.DecimalType); ok {
		return fromString(stringOf(v, dt), typ)
	}
	p, _ := dt.(*delta.PrimitiveType)
	if p == nil {
		return nil
	}
	switch v := icebergValue(v, p.Name).(type) {
	case string:
		return iceberg.NewLiteral(v)
	case bool:
		return iceberg.NewLiteral(v)
	case int32:
		return iceberg.NewLiteral(v)
	case int64:
		return iceberg.NewLiteral(v)
	case float32:
		return iceberg.NewLiteral(v)
	case float64:
		return iceberg.NewLiteral(v)
	case iceberg.Date:
		return iceberg.NewLiteral(v)
	case iceberg.Timestamp:
		return iceberg.NewLiteral(v)
	}
	return nil
}
