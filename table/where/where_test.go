package where

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
)

// whereSchema has one column of each type Parse types literals for,
// plus the bbox columns of a v2 spatial table. Row positions follow the
// field order.
func whereSchema(tb testing.TB) *iceberg.Schema {
	tb.Helper()
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "n", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 3, Name: "f", Type: iceberg.PrimitiveTypes.Float32},
		iceberg.NestedField{ID: 4, Name: "d", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 5, Name: "name", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 6, Name: "flag", Type: iceberg.PrimitiveTypes.Bool},
		iceberg.NestedField{ID: 7, Name: "day", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 8, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 9, Name: "lts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 10, Name: "My Col", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 11, Name: "and", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 12, Name: "geometry", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 13, Name: "bbox_minx", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 14, Name: "bbox_miny", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 15, Name: "bbox_maxx", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 16, Name: "bbox_maxy", Type: iceberg.PrimitiveTypes.Float64},
	)
}

// whereV3Schema is an Iceberg v3 spatial table: a native geometry column
// and no bbox columns.
func whereV3Schema(tb testing.TB) *iceberg.Schema {
	tb.Helper()
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "ts", Type: iceberg.PrimitiveTypes.TimestampTz},
		iceberg.NestedField{ID: 3, Name: "geom", Type: iceberg.GeometryType{}},
	)
}

// whereRow is a row for iceberg.ExpressionEvaluator.
type whereRow []any

func (r whereRow) Size() int          { return len(r) }
func (r whereRow) Get(i int) any      { return r[i] }
func (r whereRow) Set(i int, val any) { r[i] = val }

// row builds a whereSchema row from column values by name; the others
// are null.
func row(tb testing.TB, sc *iceberg.Schema, vals map[string]any) whereRow {
	tb.Helper()
	r := make(whereRow, len(sc.Fields()))
	for name, v := range vals {
		i := -1
		for j, f := range sc.Fields() {
			if f.Name == name {
				i = j
			}
		}
		if i < 0 {
			tb.Fatalf("row: no column %q", name)
		}
		r[i] = v
	}
	return r
}

func mustParseWhere(tb testing.TB, s string, sc *iceberg.Schema) iceberg.BooleanExpression {
	tb.Helper()
	e, err := Parse(s, sc)
	if err != nil {
		tb.Fatalf("Parse(%q): %v", s, err)
	}
	return e
}

func ref(name string) iceberg.Reference { return iceberg.Reference(name) }

func TestParseWhereExpr(t *testing.T) {
	sc := whereSchema(t)
	eq := func(c string, v int64) iceberg.BooleanExpression { return iceberg.EqualTo(ref(c), v) }
	tests := []struct {
		name, in string
		want     iceberg.BooleanExpression
	}{
		{"empty", "", iceberg.AlwaysTrue{}},
		{"blank", " \t\n", iceberg.AlwaysTrue{}},
		{"eq", "id = 5", eq("id", 5)},
		{"neq", "id != 5", iceberg.NotEqualTo(ref("id"), int64(5))},
		{"neq sql", "id <> 5", iceberg.NotEqualTo(ref("id"), int64(5))},
		{"lt", "id < 5", iceberg.LessThan(ref("id"), int64(5))},
		{"lte", "id <= 5", iceberg.LessThanEqual(ref("id"), int64(5))},
		{"gt", "id > 5", iceberg.GreaterThan(ref("id"), int64(5))},
		{"gte", "id>=5", iceberg.GreaterThanEqual(ref("id"), int64(5))},
		{"negative", "id > -5", iceberg.GreaterThan(ref("id"), int64(-5))},
		{"flip lt", "5 < id", iceberg.GreaterThan(ref("id"), int64(5))},
		{"flip lte", "5 <= id", iceberg.GreaterThanEqual(ref("id"), int64(5))},
		{"flip gt", "5 > id", iceberg.LessThan(ref("id"), int64(5))},
		{"flip gte", "5 >= id", iceberg.LessThanEqual(ref("id"), int64(5))},
		{"flip eq", "5 = id", eq("id", 5)},
		{"flip neq", "'x' <> name", iceberg.NotEqualTo(ref("name"), "x")},
		{"int", "n = 7", iceberg.EqualTo(ref("n"), int32(7))},
		{"int from integral float", "n = 7.0", iceberg.EqualTo(ref("n"), int32(7))},
		{"long exponent", "id < 1e3", iceberg.LessThan(ref("id"), int64(1000))},
		{"long quoted", "id = '42'", eq("id", 42)},
		{"float", "f > 1.5", iceberg.GreaterThan(ref("f"), float32(1.5))},
		{"double", "d <= -2.5e-3", iceberg.LessThanEqual(ref("d"), -2.5e-3)},
		{"double from int", "d = 3", iceberg.EqualTo(ref("d"), 3.0)},
		{"double leading dot", "d = .5", iceberg.EqualTo(ref("d"), 0.5)},
		{"string", "name = 'a b'", iceberg.EqualTo(ref("name"), "a b")},
		{"string escape", "name = 'O''Brien'", iceberg.EqualTo(ref("name"), "O'Brien")},
		{"string keeps case and keywords", "name = 'AND or'", iceberg.EqualTo(ref("name"), "AND or")},
		{"bool true", "flag = TRUE", iceberg.EqualTo(ref("flag"), true)},
		{"bool false lower", "flag = false", iceberg.EqualTo(ref("flag"), false)},
		{"bare bool column", "flag", iceberg.EqualTo(ref("flag"), true)},
		{"bare bool column and", "flag AND id = 1", iceberg.NewAnd(iceberg.EqualTo(ref("flag"), true), eq("id", 1))},
		{"date", "day >= '2026-01-02'", iceberg.GreaterThanEqual(ref("day"), iceberg.Date(20455))},
		{"date literal", "day = DATE '1969-12-31'", iceberg.EqualTo(ref("day"), iceberg.Date(-1))},
		{"quoted ident", `"My Col" = 'v'`, iceberg.EqualTo(ref("My Col"), "v")},
		{"quoted reserved ident", `"and" = 1`, eq("and", 1)},
		{"back-quoted ident, as Spark writes it", "`My Col` = 'v'", iceberg.EqualTo(ref("My Col"), "v")},
		{"two back-quoted idents", "`and` = 1 AND `id` > 2", iceberg.NewAnd(eq("and", 1), iceberg.GreaterThan(ref("id"), int64(2)))},
		{"ident any case", "ID = 1", eq("id", 1)},
		{"keywords any case", "id = 1 and not id = 2 Or id = 3",
			iceberg.NewOr(iceberg.NewAnd(eq("id", 1), iceberg.NewNot(eq("id", 2))), eq("id", 3))},
		{"and", "id = 1 AND n = 2", iceberg.NewAnd(eq("id", 1), iceberg.EqualTo(ref("n"), int32(2)))},
		{"precedence", "id = 1 OR id = 2 AND id = 3",
			iceberg.NewOr(eq("id", 1), iceberg.NewAnd(eq("id", 2), eq("id", 3)))},
		{"precedence left", "id = 1 AND id = 2 OR id = 3",
			iceberg.NewOr(iceberg.NewAnd(eq("id", 1), eq("id", 2)), eq("id", 3))},
		{"parens", "(id = 1 OR id = 2) AND id = 3",
			iceberg.NewAnd(iceberg.NewOr(eq("id", 1), eq("id", 2)), eq("id", 3))},
		{"left assoc", "id = 1 OR id = 2 OR id = 3",
			iceberg.NewOr(iceberg.NewOr(eq("id", 1), eq("id", 2)), eq("id", 3))},
		{"not binds tighter than and", "NOT id = 1 AND id = 2",
			iceberg.NewAnd(iceberg.NewNot(eq("id", 1)), eq("id", 2))},
		{"not parens", "NOT (id = 1 OR id = 2)", iceberg.NewNot(iceberg.NewOr(eq("id", 1), eq("id", 2)))},
		{"in", "id IN (1, 2, 3)", iceberg.IsIn(ref("id"), int64(1), 2, 3)},
		{"in one", "id IN (1)", eq("id", 1)},
		{"not in", "name NOT IN ('a', 'b')", iceberg.NotIn(ref("name"), "a", "b")},
		{"is null", "name IS NULL", iceberg.IsNull(ref("name"))},
		{"is not null", "name is not null", iceberg.NotNull(ref("name"))},
		{"between", "id BETWEEN 1 AND 5 AND n = 2", iceberg.NewAnd(
			iceberg.NewAnd(iceberg.GreaterThanEqual(ref("id"), int64(1)), iceberg.LessThanEqual(ref("id"), int64(5))),
			iceberg.EqualTo(ref("n"), int32(2)))},
		{"not between", "id NOT BETWEEN 1 AND 5", iceberg.NewOr(
			iceberg.LessThan(ref("id"), int64(1)), iceberg.GreaterThan(ref("id"), int64(5)))},
		{"true", "TRUE", iceberg.AlwaysTrue{}},
		{"false or", "FALSE OR id = 1", eq("id", 1)},
		{"bbox columns", "bbox(0, 1, 10, 11)", iceberg.NewAnd(
			iceberg.GreaterThanEqual(ref("bbox_maxx"), 0.0),
			iceberg.LessThanEqual(ref("bbox_minx"), 10.0),
			iceberg.GreaterThanEqual(ref("bbox_maxy"), 1.0),
			iceberg.LessThanEqual(ref("bbox_miny"), 11.0))},
		{"bbox and ts", "BBOX(-1.5, -2, 3, 4e1) AND ts >= '2026-01-02'", iceberg.NewAnd(iceberg.NewAnd(
			iceberg.GreaterThanEqual(ref("bbox_maxx"), -1.5),
			iceberg.LessThanEqual(ref("bbox_minx"), 3.0),
			iceberg.GreaterThanEqual(ref("bbox_maxy"), -2.0),
			iceberg.LessThanEqual(ref("bbox_miny"), 40.0)),
			iceberg.GreaterThanEqual(ref("ts"), iceberg.Timestamp(1767312000000000)))},
		{"bbox point window", "bbox(2, 2, 2, 2)", iceberg.NewAnd(
			iceberg.GreaterThanEqual(ref("bbox_maxx"), 2.0),
			iceberg.LessThanEqual(ref("bbox_minx"), 2.0),
			iceberg.GreaterThanEqual(ref("bbox_maxy"), 2.0),
			iceberg.LessThanEqual(ref("bbox_miny"), 2.0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustParseWhere(t, tc.in, sc)
			if !got.Equals(tc.want) {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseWhereV3Geometry(t *testing.T) {
	sc := whereV3Schema(t)
	tests := []struct {
		name, in string
		want     iceberg.BooleanExpression
	}{
		{"bbox", "bbox(0, 1, 10, 11)",
			iceberg.BBoxIntersects(ref("geom"), iceberg.BoundingBox{MinX: 0, MinY: 1, MaxX: 10, MaxY: 11})},
		{"bbox named column", "bbox(geom, -180, -90, 180, 90)",
			iceberg.BBoxIntersects(ref("geom"), iceberg.BoundingBox{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90})},
		{"bbox and ts", "bbox(0,0,10,10) AND ts < '2026-01-03'", iceberg.NewAnd(
			iceberg.BBoxIntersects(ref("geom"), iceberg.BoundingBox{MaxX: 10, MaxY: 10}),
			iceberg.LessThan(ref("ts"), iceberg.Timestamp(1767398400000000)))},
		{"geometry is not null", "geom IS NOT NULL", iceberg.NotNull(ref("geom"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mustParseWhere(t, tc.in, sc)
			if !got.Equals(tc.want) {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestParseWhereEval evaluates parsed predicates on rows, so the meaning of
// precedence, NOT, IN and NULL handling is checked, not just the shape.
func TestParseWhereEval(t *testing.T) {
	sc := whereSchema(t)
	r := func(vals map[string]any) whereRow { return row(t, sc, vals) }
	type rowWant struct {
		row  whereRow
		want bool
	}
	tests := []struct {
		name, in string
		rows     []rowWant
	}{
		{"or and precedence", "id = 1 OR id = 2 AND n = 3", []rowWant{
			{r(map[string]any{"id": int64(1), "n": int32(0)}), true},
			{r(map[string]any{"id": int64(2), "n": int32(0)}), false},
			{r(map[string]any{"id": int64(2), "n": int32(3)}), true},
		}},
		{"not", "NOT id > 5", []rowWant{
			{r(map[string]any{"id": int64(5)}), true},
			{r(map[string]any{"id": int64(6)}), false},
		}},
		{"in", "name IN ('a', 'c')", []rowWant{
			{r(map[string]any{"name": "a"}), true},
			{r(map[string]any{"name": "b"}), false},
			{r(map[string]any{"name": "c"}), true},
		}},
		{"not in", "id NOT IN (1, 2)", []rowWant{
			{r(map[string]any{"id": int64(1)}), false},
			{r(map[string]any{"id": int64(3)}), true},
		}},
		{"is null", "name IS NULL", []rowWant{
			{r(map[string]any{"name": "a"}), false},
			{r(map[string]any{}), true},
		}},
		{"between inclusive", "d BETWEEN 1 AND 2", []rowWant{
			{r(map[string]any{"d": 0.999}), false},
			{r(map[string]any{"d": 1.0}), true},
			{r(map[string]any{"d": 2.0}), true},
			{r(map[string]any{"d": 2.001}), false},
		}},
		{"float", "f >= 0.1", []rowWant{
			{r(map[string]any{"f": float32(0.1)}), true},
			{r(map[string]any{"f": float32(0.09)}), false},
		}},
		{"date", "day < DATE '2026-01-02'", []rowWant{
			{r(map[string]any{"day": iceberg.Date(20454)}), true},
			{r(map[string]any{"day": iceberg.Date(20455)}), false},
		}},
		{"bool", "flag = false", []rowWant{
			{r(map[string]any{"flag": false}), true},
			{r(map[string]any{"flag": true}), false},
		}},
		{"timestamp without zone", "lts >= '2026-01-02 12:00'", []rowWant{
			{r(map[string]any{"lts": iceberg.Timestamp(1767355200000000)}), true},
			{r(map[string]any{"lts": iceberg.Timestamp(1767355199999999)}), false},
		}},
		{"bbox touching and disjoint", "bbox(0, 0, 10, 10)", []rowWant{
			// a file box touching the window's right edge intersects it
			{r(map[string]any{"bbox_minx": 10.0, "bbox_miny": 0.0, "bbox_maxx": 20.0, "bbox_maxy": 5.0}), true},
			// touching the bottom-left corner
			{r(map[string]any{"bbox_minx": -5.0, "bbox_miny": -5.0, "bbox_maxx": 0.0, "bbox_maxy": 0.0}), true},
			// inside
			{r(map[string]any{"bbox_minx": 1.0, "bbox_miny": 1.0, "bbox_maxx": 2.0, "bbox_maxy": 2.0}), true},
			// containing
			{r(map[string]any{"bbox_minx": -100.0, "bbox_miny": -100.0, "bbox_maxx": 100.0, "bbox_maxy": 100.0}), true},
			// right of the window
			{r(map[string]any{"bbox_minx": 10.5, "bbox_miny": 0.0, "bbox_maxx": 20.0, "bbox_maxy": 5.0}), false},
			// left
			{r(map[string]any{"bbox_minx": -3.0, "bbox_miny": 0.0, "bbox_maxx": -0.5, "bbox_maxy": 5.0}), false},
			// above
			{r(map[string]any{"bbox_minx": 0.0, "bbox_miny": 10.1, "bbox_maxx": 5.0, "bbox_maxy": 20.0}), false},
			// below
			{r(map[string]any{"bbox_minx": 0.0, "bbox_miny": -9.0, "bbox_maxx": 5.0, "bbox_maxy": -0.1}), false},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eval, err := iceberg.ExpressionEvaluator(sc, mustParseWhere(t, tc.in, sc), true)
			if err != nil {
				t.Fatal(err)
			}
			for i, rw := range tc.rows {
				got, err := eval(rw.row)
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				if got != rw.want {
					t.Errorf("%q on row %d %v = %v, want %v", tc.in, i, rw.row, got, rw.want)
				}
			}
		})
	}
}

// boundLiteral binds e, a single comparison, and returns its literal.
func boundLiteral(tb testing.TB, sc *iceberg.Schema, e iceberg.BooleanExpression) iceberg.Literal {
	tb.Helper()
	b, err := iceberg.BindExpr(sc, e, true)
	if err != nil {
		tb.Fatal(err)
	}
	p, ok := b.(iceberg.BoundLiteralPredicate)
	if !ok {
		tb.Fatalf("%s is %T, want a bound literal predicate", b, b)
	}
	return p.Literal()
}

// setLocal replaces time.Local for the test, so a parser that leaned on
// the local zone would be caught.
func setLocal(tb testing.TB, loc *time.Location) {
	tb.Helper()
	old := time.Local
	time.Local = loc
	tb.Cleanup(func() { time.Local = old })
}

func TestParseWhereTimestamps(t *testing.T) {
	setLocal(t, time.FixedZone("X", 5*3600))
	sc := whereSchema(t)
	tests := []struct {
		in   string
		want iceberg.Literal
	}{
		// 2026-01-02T00:00:00Z = 1767312000 s
		{"ts >= '2026-01-02'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"ts >= '2026-01-02 00:00:00'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"ts >= '2026-01-02T00:00'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"ts >= '2026-01-02T00:00:00Z'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"ts >= TIMESTAMP '2026-01-02 00:00:00'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"ts >= timestamp '2026-01-02'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"ts >= DATE '2026-01-02'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		{"lts >= '2026-01-02'", iceberg.NewLiteral(iceberg.Timestamp(1767312000000000))},
		// 06:00+02:00 is 04:00Z
		{"ts < '2026-01-02T06:00:00+02:00'", iceberg.NewLiteral(iceberg.Timestamp(1767326400000000))},
		{"ts < '2026-01-02 06:00:00 +02:00'", iceberg.NewLiteral(iceberg.Timestamp(1767326400000000))},
		{"ts < '2026-01-02T06:00+02'", iceberg.NewLiteral(iceberg.Timestamp(1767326400000000))},
		// 05:00-05:00 is 10:00Z
		{"ts < '2026-01-02T05:00:00-0500'", iceberg.NewLiteral(iceberg.Timestamp(1767348000000000))},
		{"ts = '2026-01-02T12:34:56.789012Z'", iceberg.NewLiteral(iceberg.Timestamp(1767357296789012))},
		{"ts = '2026-01-02 12:34:56.789012'", iceberg.NewLiteral(iceberg.Timestamp(1767357296789012))},
		{"day = '2026-01-02'", iceberg.NewLiteral(iceberg.Date(20455))},
		{"day = DATE '1970-01-01'", iceberg.NewLiteral(iceberg.Date(0))},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := boundLiteral(t, sc, mustParseWhere(t, tc.in, sc))
			if !got.Equals(tc.want) {
				t.Errorf("Parse(%q) literal = %v (%v), want %v (%v)", tc.in, got, got.Any(), tc.want, tc.want.Any())
			}
		})
	}
}

// TestParseWhereUTCDay checks that a day range selects exactly the UTC day,
// which is what Iceberg's day partitions hold, whatever time.Local is.
func TestParseWhereUTCDay(t *testing.T) {
	for _, loc := range []*time.Location{time.FixedZone("plus5", 5*3600), time.FixedZone("minus8", -8*3600)} {
		t.Run(loc.String(), func(t *testing.T) {
			setLocal(t, loc)
			sc := whereSchema(t)
			eval, err := iceberg.ExpressionEvaluator(sc,
				mustParseWhere(t, "ts >= '2026-01-02' AND ts < '2026-01-03'", sc), true)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				at   string
				want bool
			}{
				{"2026-01-01T23:59:59.999999Z", false},
				{"2026-01-02T00:00:00Z", true},
				{"2026-01-02T23:59:59.999999Z", true},
				{"2026-01-03T00:00:00Z", false},
			} {
				at, err := time.Parse(time.RFC3339Nano, tc.at)
				if err != nil {
					t.Fatal(err)
				}
				got, err := eval(row(t, sc, map[string]any{"ts": iceberg.Timestamp(at.UnixMicro())}))
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("row at %s matched = %v, want %v", tc.at, got, tc.want)
				}
			}
		})
	}
}

func TestParseWhereErrors(t *testing.T) {
	sc := whereSchema(t)
	v3 := whereV3Schema(t)
	noSpatial := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	twoGeoms := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.GeometryType{}},
		iceberg.NestedField{ID: 2, Name: "b", Type: iceberg.GeometryType{}})
	tests := []struct {
		name, in string
		sc       *iceberg.Schema
		pos      int
		want     []string // substrings of the message
	}{
		{"trailing garbage", "id = 1 AMD n = 2", sc, 7, []string{`at 7: unexpected "AMD", want AND, OR or end of input`}},
		{"unknown column", "idd = 1", sc, 0, []string{`unknown column "idd"`, "columns: id, n, f, d, name"}},
		{"unknown quoted column wrong case", `"ID" = 1`, sc, 0, []string{`unknown column "ID"`, `did you mean "id"`}},
		{"bad literal long", "id = 'abc'", sc, 5, []string{`'abc' does not fit column "id" of type long`}},
		{"fraction for int", "n = 3.5", sc, 4, []string{`3.5 does not fit column "n" of type int`}},
		{"int out of range", "n = 3000000000", sc, 4, []string{`3000000000 does not fit column "n"`, "in range"}},
		{"long out of range", "id = 1e19", sc, 5, []string{`1e19 does not fit column "id"`, "in range"}},
		{"float out of range", "f = 1e39", sc, 4, []string{`1e39 does not fit column "f"`}},
		{"double overflow", "d = 1e999", sc, 4, []string{`1e999 does not fit column "d"`}},
		{"number for string", "name = 5", sc, 7, []string{`5 does not fit column "name" of type string`}},
		{"string for bool", "flag = 'yes'", sc, 7, []string{`'yes' does not fit column "flag" of type boolean`}},
		{"bad timestamp", "ts >= '2026-13-01'", sc, 6, []string{`'2026-13-01' does not fit column "ts" of type timestamptz`}},
		{"bad date", "day = '2026-01-02 10:00'", sc, 6, []string{`does not fit column "day" of type date`}},
		{"timestamp for date", "day = TIMESTAMP '2026-01-02'", sc, 16, []string{`does not fit column "day"`}},
		{"bad DATE literal", "day = DATE '2026-02-30'", sc, 11, []string{"bad DATE literal '2026-02-30'"}},
		{"sub-micro timestamp", "ts = '2026-01-02T00:00:00.0000001Z'", sc, 5, []string{"microsecond"}},
		{"missing close paren", "(id = 1 OR n = 2", sc, 16, []string{`unexpected end of input, want AND, OR or ")" to close the "(" at 0`}},
		{"extra close paren", "id = 1)", sc, 6, []string{`unbalanced ")": no "(" to close`}},
		{"empty parens", "()", sc, 1, []string{`unexpected ")", want a column or a literal`}},
		{"unterminated string", "name = 'abc", sc, 7, []string{"unterminated string"}},
		{"unterminated ident", `"name = 1`, sc, 0, []string{"unterminated quoted column name"}},
		{"unterminated back-quoted ident", "`name = 1", sc, 0, []string{"unterminated quoted column name"}},
		{"bad char", "id = 1 ; drop", sc, 7, []string{`unexpected character ';'`}},
		{"lone bang", "id ! 1", sc, 3, []string{`want "!="`}},
		{"malformed number", "id = 12abc", sc, 5, []string{`malformed number "12abc"`}},
		{"two columns", "id = n", sc, 5, []string{`cannot compare column "id" with column "n"`}},
		{"two literals", "1 = 1", sc, 0, []string{"compares two literals"}},
		{"null comparison", "name = NULL", sc, 7, []string{"IS [NOT] NULL"}},
		{"null in list", "id IN (1, NULL)", sc, 10, []string{"NULL in an IN list"}},
		{"empty in list", "id IN ()", sc, 7, []string{`unexpected ")", want a column or a literal`}},
		{"in list missing comma", "id IN (1 2)", sc, 9, []string{`want "," or ")" in the IN list`}},
		{"column in list", "id IN (n)", sc, 7, []string{`unexpected "n", want a literal`}},
		{"between missing and", "id BETWEEN 1 OR 2", sc, 13, []string{"AND in BETWEEN"}},
		{"is without null", "id IS 5", sc, 6, []string{"NULL or NOT NULL after IS"}},
		{"column without predicate", "id", sc, 2, []string{`a comparison, IN, BETWEEN or IS after column "id"`}},
		{"dangling and", "id = 1 AND", sc, 10, []string{"unexpected end of input, want a column or a literal"}},
		{"keyword as column", "AND = 1", sc, 0, []string{`unexpected "AND", want a column or a literal`}},
		{"not alone", "NOT", sc, 3, []string{"unexpected end of input"}},
		{"binary column", "geometry = 'x'", sc, 0, []string{`column "geometry" has type binary`}},
		{"geometry comparison", "geom = 'x'", v3, 0, []string{`column "geom" is geometry`, "bbox("}},
		{"bbox miny > maxy", "bbox(0, 10, 5, 9)", v3, 0, []string{"bbox miny 10 > maxy 9"}},
		{"bbox too few", "bbox(0, 0, 1)", sc, 12, []string{`unexpected ")", want "," in bbox(`}},
		{"bbox too many", "bbox(0, 0, 1, 1, 2)", sc, 15, []string{`want ")" in bbox`}},
		{"bbox string arg", "bbox(0, '0', 1, 1)", sc, 8, []string{"a number for miny"}},
		{"bbox no spatial columns", "bbox(0, 0, 1, 1)", noSpatial, 0, []string{"bbox_minx, bbox_miny, bbox_maxx, bbox_maxy", "geometry column", "columns: id"}},
		{"bbox two geometries", "bbox(0, 0, 1, 1)", twoGeoms, 0, []string{"several geometry columns (a, b)"}},
		{"bbox named non-geometry", "bbox(id, 0, 0, 1, 1)", v3, 5, []string{`bbox needs a geometry column, and "id" is long`}},
		{"bbox unknown column", "bbox(g, 0, 0, 1, 1)", v3, 5, []string{`unknown column "g"`, "columns: id, ts, geom"}},
		{"deep nesting", strings.Repeat("(", 500) + "id = 1" + strings.Repeat(")", 500), sc, maxDepth,
			[]string{"nested deeper than"}},
		{"deep not", strings.Repeat("NOT ", 500) + "id = 1", sc, 4 * maxDepth, []string{"nested deeper than"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(tc.in, tc.sc)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tc.in, e)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not match ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), "where: invalid predicate: at ") {
				t.Errorf("error %q lacks the prefix", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			we, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("error %v is not a *Error", err)
			}
			if we.Pos != tc.pos {
				t.Errorf("Pos = %d, want %d (%q)", we.Pos, tc.pos, err)
			}
		})
	}
}

func TestParseWhereNilSchema(t *testing.T) {
	if _, err := Parse("id = 1", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Parse with a nil schema: err = %v, want ErrInvalid", err)
	}
	if e, err := Parse("  ", nil); err != nil || !e.Equals(iceberg.AlwaysTrue{}) {
		t.Errorf("Parse of blank input with a nil schema = %v, %v; want AlwaysTrue", e, err)
	}
}

func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{
		"", "id = 1", "id = 1 AMD n = 2", "(id = 1 OR n = 2) AND NOT name IS NULL",
		"name IN ('a', 'b''c')", "id NOT BETWEEN -1 AND 1e3", `"My Col" <> 'x'`,
		"ts >= '2026-01-02' AND ts < '2026-01-02T06:00:00+02:00'", "day = DATE '2026-01-02'",
		"ts > TIMESTAMP '2026-01-02 00:00:00 -0500'", "bbox(0, 0, 10, 10) AND flag", "bbox(1e308, 0, -1e308, 0)",
		"f < 1e39", "n = 2147483648", "5 >= id", "'", `"`, "((((", "NOT NOT NOT id = 1", "id IN ()",
		"d = .5", "d = -.5e-3", "é = 1", "bbox(", "id = ''", "bbox(0, 0, 1, 1", "\x00", "id = 1 OR", "bbox(geometry, 0, 0, 1, 1)",
		"ts >= now() - interval '1 day'", "day = current_date + INTERVAL '2 weeks'", "ts < current_timestamp - interval '2 hours' - interval '1 hour'",
		"bbox(170, 50, -170, 60)", "ts > now() - 1",
	} {
		f.Add(s)
	}
	sc := whereSchema(f)
	now := time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseAt(s, sc, now)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q): error %v does not match ErrInvalid", s, err)
			}
			we, ok := errors.AsType[*Error](err)
			if !ok || we.Pos < 0 || we.Pos > len(s) {
				t.Fatalf("Parse(%q): error %v has no position within the input", s, err)
			}
			return
		}
		if _, err := iceberg.BindExpr(sc, e, true); err != nil {
			t.Fatalf("Parse(%q) = %s, which does not bind: %v", s, e, err)
		}
		again, err := ParseAt(s, sc, now)
		if err != nil || !again.Equals(e) {
			t.Fatalf("Parse(%q) is not deterministic: %s then %v, %v", s, e, again, err)
		}
	})
}

// TestParseWhereOtherTypes covers the column types typed through
// iceberg-go's own string conversion, and nanosecond timestamps.
func TestParseWhereOtherTypes(t *testing.T) {
	setLocal(t, time.FixedZone("X", -3*3600))
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "amount", Type: iceberg.DecimalTypeOf(9, 2)},
		iceberg.NestedField{ID: 2, Name: "uid", Type: iceberg.PrimitiveTypes.UUID},
		iceberg.NestedField{ID: 3, Name: "tod", Type: iceberg.PrimitiveTypes.Time},
		iceberg.NestedField{ID: 4, Name: "tsn", Type: iceberg.PrimitiveTypes.TimestampTzNs},
	)
	tests := []struct {
		in   string
		want string // the bound literal's String()
	}{
		{"amount >= 12.34", "12.34"},
		{"amount < '7'", "7.00"},
		{"uid = '0f8fad5b-d9cb-469f-a165-70867728950e'", "0f8fad5b-d9cb-469f-a165-70867728950e"},
		{"tod > '06:30:00'", "06:30:00.000000"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := boundLiteral(t, sc, mustParseWhere(t, tc.in, sc)).String(); got != tc.want {
				t.Errorf("Parse(%q) literal = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	t.Run("nanosecond timestamp", func(t *testing.T) {
		got := boundLiteral(t, sc, mustParseWhere(t, "tsn >= '2026-01-02 00:00:00.000000001+02:00'", sc))
		// 2026-01-01T22:00:00.000000001Z
		if want := iceberg.NewLiteral(iceberg.TimestampNano(1767304800000000001)); !got.Equals(want) {
			t.Errorf("literal = %v (%v), want %v", got, got.Any(), want.Any())
		}
	})
	for _, in := range []string{"amount = 'abc'", "uid = 'nope'", "tod = 5.5.5", "tsn = '2300-01-01'"} {
		t.Run(in, func(t *testing.T) {
			if _, err := Parse(in, sc); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "does not fit column") &&
				!strings.Contains(err.Error(), "malformed number") {
				t.Errorf("Parse(%q) err = %v, want a misfit", in, err)
			}
		})
	}
}
