package cluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOrder(t *testing.T) {
	tests := []struct {
		expr  string
		want  Order
		canon string
	}{
		{"ts", Order{Fields: []Field{{"ts", Asc, NullsFirst}}}, "ts ASC NULLS FIRST"},
		{"ts desc", Order{Fields: []Field{{"ts", Desc, NullsLast}}}, "ts DESC NULLS LAST"},
		{"ts DESC NULLS FIRST, id", Order{Fields: []Field{{"ts", Desc, NullsFirst}, {"id", Asc, NullsFirst}}},
			"ts DESC NULLS FIRST, id ASC NULLS FIRST"},
		{"  a  asc  nulls  last ,b desc", Order{Fields: []Field{{"a", Asc, NullsLast}, {"b", Desc, NullsLast}}},
			"a ASC NULLS LAST, b DESC NULLS LAST"},
		{`"my col" ASC, "say ""hi"""`, Order{Fields: []Field{{"my col", Asc, NullsFirst}, {`say "hi"`, Asc, NullsFirst}}},
			`"my col" ASC NULLS FIRST, "say ""hi""" ASC NULLS FIRST`},
		{`"desc"`, Order{Fields: []Field{{"desc", Asc, NullsFirst}}}, `"desc" ASC NULLS FIRST`},
		{"zorder(lon, lat)", Order{Curve: CurveZOrder, Columns: []string{"lon", "lat"}}, "zorder(lon, lat)"},
		{"HILBERT( a,b , c,d )", Order{Curve: CurveHilbert, Columns: []string{"a", "b", "c", "d"}}, "hilbert(a, b, c, d)"},
		{"hilbert()", Order{Curve: CurveHilbert}, "hilbert()"},
		{"hilbert(geometry)", Order{Curve: CurveHilbert, Columns: []string{"geometry"}}, "hilbert(geometry)"},
		{"zorder DESC", Order{Fields: []Field{{"zorder", Desc, NullsLast}}}, `"zorder" DESC NULLS LAST`},
		{"bbox.xmin", Order{Fields: []Field{{"bbox.xmin", Asc, NullsFirst}}}, "bbox.xmin ASC NULLS FIRST"},
		{"str()", Order{Curve: CurveSTR}, "str()"},
		{"STR( bbox )", Order{Curve: CurveSTR, Columns: []string{"bbox"}}, "str(bbox)"},
		{"str", Order{Fields: []Field{{"str", Asc, NullsFirst}}}, `"str" ASC NULLS FIRST`},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			got, err := ParseOrder(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("ParseOrder (-want +got):\n%s", diff)
			}
			if s := got.String(); s != tc.canon {
				t.Fatalf("String() = %q, want %q", s, tc.canon)
			}
			again, err := ParseOrder(got.String())
			if err != nil || !cmp.Equal(again, got) {
				t.Fatalf("String() does not round-trip: %v, %v", again, err)
			}
		})
	}
}

func TestParseOrderErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"", "cluster: sort order: empty expression"},
		{"ts DESCC", `cluster: sort order: unexpected token "DESCC" after column "ts"`},
		{"ts ASC NULLS", `cluster: sort order: expected FIRST or LAST after NULLS for column "ts", got end of expression`},
		{"ts NULLS MIDDLE", `cluster: sort order: expected FIRST or LAST after NULLS for column "ts", got token "MIDDLE"`},
		{"ts,", `cluster: sort order: expected a column after the comma following "ts", got end of expression`},
		{"ts, ts DESC", `cluster: sort order: column "ts" listed twice`},
		{"ASC", `cluster: sort order: expected a column at the start, got token "ASC"`},
		{"hilbert(a, b", `cluster: sort order: unexpected end of expression after column "b" in hilbert`},
		{"zorder(a, b, c, d, e)", `cluster: sort order: zorder takes at most 4 columns, got more at "e"`},
		{"hilbert(a, b), c", `cluster: sort order: unexpected token "," after hilbert(...); a curve must be the whole order`},
		{"zorder(a, a)", `cluster: sort order: column "a" listed twice in zorder`},
		{"str(a, b)", `cluster: sort order: str takes at most 1 column, got more at "b"`},
		{"ts;", `cluster: sort order: unexpected token ";" after column "ts"`},
		{`"open`, `cluster: sort order: expected a column at the start, got token "\"open"`},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := ParseOrder(tc.expr)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrSortOrder) {
				t.Errorf("error %v does not wrap ErrSortOrder", err)
			}
			if err.Error() != tc.want {
				t.Fatalf("error\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestCurveOrder(t *testing.T) {
	tests := []struct{ curve, want string }{
		{"linear", "bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST"},
		{"ZOrder", "zorder()"},
		{"hilbert", "hilbert()"},
		{" STR ", "str()"},
	}
	for _, tc := range tests {
		o, err := CurveOrder(tc.curve)
		if err != nil {
			t.Fatal(err)
		}
		if o.String() != tc.want {
			t.Errorf("CurveOrder(%q) = %q, want %q", tc.curve, o, tc.want)
		}
	}
	if _, _, err := ParseCurve("peano"); err == nil || !strings.Contains(err.Error(), `"peano"`) {
		t.Errorf("ParseCurve(peano) = %v", err)
	}
}

func FuzzParseOrder(f *testing.F) {
	for _, s := range []string{
		"ts", "ts DESC NULLS FIRST, id ASC", "zorder(a, b)", "hilbert()", "hilbert(geometry)",
		`"a""b" desc`, "a,,b", "hilbert(a,b,c,d,e)", "zorder", "x NULLS", "\xff", `"`, "é DESC",
		"str()", "str(bbox)", "str(a, b)", "str DESC",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		o, err := ParseOrder(expr)
		if err != nil {
			if !errors.Is(err, ErrSortOrder) {
				t.Fatalf("error %v does not wrap ErrSortOrder", err)
			}
			return
		}
		again, err := ParseOrder(o.String())
		if err != nil {
			t.Fatalf("ParseOrder(%q) = %q, which does not parse: %v", expr, o, err)
		}
		if !cmp.Equal(o, again) {
			t.Fatalf("round trip of %q: %#v != %#v", expr, o, again)
		}
	})
}

func ExampleParseOrder() {
	for _, expr := range []string{"ts desc, id", "hilbert(lon, lat)", "ts DESCC"} {
		o, err := ParseOrder(expr)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(o)
	}
	// Output:
	// ts DESC NULLS LAST, id ASC NULLS FIRST
	// hilbert(lon, lat)
	// cluster: sort order: unexpected token "DESCC" after column "ts"
}
