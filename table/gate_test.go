package table_test

import (
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table"
)

func TestGateRows(t *testing.T) {
	g := table.Gate{Op: "ingest", Table: "gis.pings", Roots: []string{"file:///w/gis.db/pings"}}
	f := func(n int64) table.GateFile {
		return table.GateFile{Path: "file:///w/gis.db/pings/data/a.parquet", Records: n}
	}
	for _, tc := range []struct {
		name   string
		groups []table.GateGroup
		msg    string
	}{
		{"equal", []table.GateGroup{{Read: 50, Files: []table.GateFile{f(20), f(30)}}}, ""},
		{"equal per group", []table.GateGroup{{Name: "g0", Read: 5, Files: []table.GateFile{f(5)}}, {Name: "g1", Read: 0}}, ""},
		{"fewer", []table.GateGroup{{Read: 50, Files: []table.GateFile{f(10), f(10), f(5)}}},
			"commit gate: ingest of gis.pings wrote 25 rows in 3 files, read 50: nothing committed"},
		{"more", []table.GateGroup{{Read: 1, Files: []table.GateFile{f(2)}}}, "wrote 2 rows in 1 files, read 1"},
		{"one group of two differs", []table.GateGroup{{Name: "g0", Read: 5, Files: []table.GateFile{f(5)}}, {Name: "g1", Read: 3, Files: []table.GateFile{f(2)}}},
			"ingest of gis.pings (g1) wrote 2 rows"},
		{"rows moved between groups", []table.GateGroup{{Name: "g0", Read: 5, Files: []table.GateFile{f(4)}}, {Name: "g1", Read: 3, Files: []table.GateFile{f(4)}}},
			"(g0) wrote 4 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := g.Check(tc.groups)
			if tc.msg == "" {
				require.NoError(t, err)
				return
			}
			ge, ok := errors.AsType[*table.GateError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, table.GateRows, ge.Kind)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestGatePlaces(t *testing.T) {
	ice := table.Gate{Op: "ingest", Table: "gis.pings", Roots: []string{"file:///w/gis.db/pings"}}
	s3 := table.Gate{Op: "rewrite", Roots: []string{"s3://bucket/wh/t"}}
	dataPath := table.Gate{Roots: []string{"file:///w/gis.db/pings", "s3://other/data"}}
	delta := table.Gate{Op: "ingest", Style: table.RelativePaths, Roots: []string{"file:///w/d"}}
	for _, tc := range []struct {
		name string
		g    table.Gate
		path string
		ok   bool
		msg  string
	}{
		{"inside", ice, "file:///w/gis.db/pings/data/region=a/x.parquet", true, ""},
		{"inside as a plain path", ice, "/w/gis.db/pings/data/x.parquet", true, ""},
		{"inside, encoded value", ice, "file:///w/gis.db/pings/data/region=a%2Fb/x.parquet", true, ""},
		{"outside", ice, "file:///w/OUT2/x.parquet", false, "commit gate: file:///w/OUT2/x.parquet lies outside the table location file:///w/gis.db/pings"},
		{"sibling with the root as prefix", ice, "file:///w/gis.db/pings2/x.parquet", false, "lies outside"},
		{"the root itself", ice, "file:///w/gis.db/pings/", false, "names the root"},
		{"dot-dot literal", ice, "file:///w/gis.db/pings/data/region=x/../../../OUT/x.parquet", false, `".." segment`},
		{"dot literal", ice, "file:///w/gis.db/pings/./data/x.parquet", false, `"." segment`},
		// Iceberg's readers take a path literally: an escaped value is one
		// directory name, as Java and Spark write it.
		{"dot-dot encoded, one name", ice, "file:///w/gis.db/pings/data/%2e%2e/%2E%2E/x.parquet", true, ""},
		{"slash-dot-dot encoded, one name", ice, "file:///w/gis.db/pings/data/region=x%2F..%2F..%2Fy/x.parquet", true, ""},
		{"double slash", ice, "file:///w/gis.db/pings/data//x.parquet", false, "empty segment"},
		{"encoded slash, one name", ice, "file:///w/gis.db/pings/data/%2F/x.parquet", true, ""},
		{"backslash", ice, `file:///w/gis.db/pings/data/..\..\x.parquet`, false, "backslash"},
		{"encoded backslash, one name", ice, `file:///w/gis.db/pings/data/%5C..%5Cx.parquet`, true, ""},
		{"relative refused for Iceberg", ice, "data/x.parquet", false, "not an absolute path"},
		{"s3 inside", s3, "s3://bucket/wh/t/data/x.parquet", true, ""},
		{"s3 outside", s3, "s3://bucket/wh/other/x.parquet", false, "lies outside"},
		{"s3 other bucket", s3, "s3://bucket2/wh/t/data/x.parquet", false, "lies outside"},
		{"write.data.path", dataPath, "s3://other/data/x.parquet", true, ""},
		{"delta relative", delta, "region=a/part-0.parquet", true, ""},
		{"delta relative encoded colon", delta, "ts=2024-01-01T00%3A00%3A00/part-0.parquet", true, ""},
		{"delta bare colon first segment", delta, "ts=2024-01-01T00:00:00/part-0.parquet", false, "percent-encoded"},
		{"delta bare colon later segment", delta, "a/b:c.parquet", false, "percent-encoded"},
		{"delta space", delta, "region=a b/part-0.parquet", false, "percent-encoded"},
		{"delta dot-dot", delta, "../escape.parquet", false, `".." segment`},
		{"delta encoded dot-dot", delta, "region=%2E%2E%2F%2E%2E/x.parquet", false, `decoded (as Delta readers read it) to "region=../../x.parquet", it holds a ".." segment`},
		{"delta encoded value, one name", delta, "region=x%252F..%252F..%252FOUT/x.parquet", true, ""},
		{"delta encoded double slash", delta, "data/%2F/x.parquet", false, `to "data///x.parquet", it holds an empty segment`},
		{"delta encoded backslash", delta, `data/%5C..%5Cx.parquet`, false, "backslash"},
		{"delta bad escape", delta, "data/%zz.parquet", false, "percent-escape"},
		{"delta absolute uri encoded dot-dot", delta, "file:///w/d/%2E%2E/x.parquet", false, `".." segment`},
		{"delta absolute path", delta, "/w/d/x.parquet", false, "relative to the table root"},
		{"delta absolute uri inside", delta, "file:///w/d/x.parquet", true, ""},
		{"delta absolute uri outside", delta, "file:///w/e/x.parquet", false, "lies outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.Place(tc.path)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			ge, ok := errors.AsType[*table.GateError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, table.GatePlace, ge.Kind)
			assert.Equal(t, tc.path, ge.Path)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestWriteScope(t *testing.T) {
	ctx := table.WithWriteScope(t.Context(), "file:///w/t")
	roots := table.WriteScope(ctx)
	require.NoError(t, table.CheckWrite(roots, "/w/t/data/x.parquet"))
	require.Error(t, table.CheckWrite(roots, "/w/t/data/../../x.parquet"))
	require.NoError(t, table.CheckWrite(table.WriteScope(t.Context()), "/anywhere"), "no scope, no check")
}

// FuzzGatePlaces builds a path from a partition-value-like string under
// a root and checks that the gate never accepts one whose reading leaves
// the root or is not canonical: literal for an Iceberg path, literal and
// once-decoded for a Delta one.
func FuzzGatePlaces(f *testing.F) {
	for _, s := range []string{"ok", "x/../y", "%2e%2e", "..%2F..%2Fy", "a//b", `a\b`, "%252e%252e", "", ".", "a%2", "%2F", "x:y"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	const root = "/w/gis.db/t"
	f.Fuzz(func(t *testing.T, value string, relative bool) {
		style, p := table.AbsolutePaths, "file://"+root+"/data/region="+value+"/f.parquet"
		if relative {
			style, p = table.RelativePaths, "region="+value+"/f.parquet"
		}
		g := table.Gate{Style: style, Roots: []string{"file://" + root}}
		if g.Place(p) != nil {
			return
		}
		lit := strings.TrimPrefix(p, "file://")
		if relative {
			lit = root + "/" + p
		}
		readings := []string{lit}
		if relative {
			dec, err := url.PathUnescape(lit)
			if err != nil {
				t.Fatalf("accepted %q, whose escapes do not decode", p)
			}
			readings = append(readings, dec)
		}
		for _, s := range readings {
			if strings.ContainsRune(s, '\\') || path.Clean(s) != s || !strings.HasPrefix(s, root+"/") {
				t.Fatalf("accepted %q: %q is not canonical under %s", p, s, root)
			}
		}
	})
}
