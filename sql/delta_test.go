package sql

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseOne parses a one-statement script and checks its command.
func parseOne(t *testing.T, script, command string) Statement {
	t.Helper()
	sts, err := Parse(script)
	require.NoError(t, err)
	require.Len(t, sts, 1)
	assert.Equal(t, command, sts[0].Command())
	assert.Empty(t, sts[0].Procedure)
	return sts[0]
}

func TestParseVacuum(t *testing.T) {
	cases := []struct {
		name, script string
		want         Vacuum
	}{
		{"path only", "VACUUM delta.`/lake/pings`", Vacuum{Location: "/lake/pings"}},
		{"string form", "vacuum '/lake/pings'", Vacuum{Location: "/lake/pings"}},
		{"double-quoted string form", `VACUUM "s3://b/p"`, Vacuum{Location: "s3://b/p"}},
		{"upper-case DELTA", "VACUUM DELTA.`s3://b/p/t`;", Vacuum{Location: "s3://b/p/t"}},
		{"retain", "VACUUM delta.`/t` RETAIN 168 HOURS", Vacuum{Location: "/t", Retain: 168 * time.Hour, HasRetain: true}},
		{"retain zero", "VACUUM delta.`/t` RETAIN 0 HOURS", Vacuum{Location: "/t", HasRetain: true}},
		{"fractional retain", "VACUUM '/t' retain 1.5 hours", Vacuum{Location: "/t", Retain: 90 * time.Minute, HasRetain: true}},
		{"retain with a suffix", "VACUUM '/t' RETAIN 24L HOURS", Vacuum{Location: "/t", Retain: 24 * time.Hour, HasRetain: true}},
		{"dry run", "VACUUM delta.`/t` DRY RUN", Vacuum{Location: "/t", DryRun: true}},
		{"everything", "VACUUM delta.`/t` RETAIN 200 HOURS DRY RUN", Vacuum{Location: "/t", Retain: 200 * time.Hour, HasRetain: true, DryRun: true}},
		{"back-quote in the path", "VACUUM delta.`/a``b`", Vacuum{Location: "/a`b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := parseOne(t, tc.script, CommandVacuum)
			require.NotNil(t, st.Vacuum)
			assert.Nil(t, st.Optimize)
			assert.Equal(t, tc.want, *st.Vacuum)
		})
	}
}

func TestParseOptimize(t *testing.T) {
	cases := []struct {
		name, script string
		want         Optimize
		order        string
	}{
		{"bin-pack", "OPTIMIZE delta.`/lake/pings`", Optimize{Location: "/lake/pings"}, ""},
		{"string form", "optimize '/t';", Optimize{Location: "/t"}, ""},
		{"zorder", "OPTIMIZE delta.`/t` ZORDER BY (bbox_minx, bbox_miny)",
			Optimize{Location: "/t", Curve: "zorder", Columns: []string{"bbox_minx", "bbox_miny"}}, "zorder(bbox_minx, bbox_miny)"},
		{"zorder without parentheses", "OPTIMIZE '/t' zorder by a, b",
			Optimize{Location: "/t", Curve: "zorder", Columns: []string{"a", "b"}}, "zorder(a, b)"},
		{"hilbert on nested fields", "OPTIMIZE delta.`/t` HILBERT BY (bbox.xmin, `bbox`.ymin)",
			Optimize{Location: "/t", Curve: "hilbert", Columns: []string{"bbox.xmin", "bbox.ymin"}}, "hilbert(bbox.xmin, bbox.ymin)"},
		{"where", "OPTIMIZE delta.`/t` WHERE region = 'emea' AND day >= '2026-01-01'",
			Optimize{Location: "/t", Where: "region = 'emea' AND day >= '2026-01-01'", SparkWhere: "region = 'emea' AND day >= '2026-01-01'"}, ""},
		{"where then hilbert", "OPTIMIZE delta.`/t` WHERE `my col` == \"it's\" AND (x > 1 OR x < -1) HILBERT BY (bbox_minx, bbox_miny);",
			Optimize{Location: "/t", Where: `"my col" =  'it''s' AND (x > 1 OR x < -1)`, SparkWhere: "`my col` == \"it's\" AND (x > 1 OR x < -1)",
				Curve: "hilbert", Columns: []string{"bbox_minx", "bbox_miny"}}, "hilbert(bbox_minx, bbox_miny)"},
		{"keywords inside strings and comments stay in the predicate", "OPTIMIZE '/t' WHERE s = 'zorder; by' /* HILBERT */ AND zorder_id = 1 -- x\nZORDER BY (a)",
			Optimize{Location: "/t", Where: "s = 'zorder; by' AND zorder_id = 1", SparkWhere: "s = 'zorder; by' AND zorder_id = 1",
				Curve: "zorder", Columns: []string{"a"}}, "a"},
		{"bbox predicate", "OPTIMIZE '/t' WHERE bbox(0, 0, 10, 10)",
			Optimize{Location: "/t", Where: "bbox(0, 0, 10, 10)", SparkWhere: "bbox(0, 0, 10, 10)"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := parseOne(t, tc.script, CommandOptimize)
			require.NotNil(t, st.Optimize)
			assert.Nil(t, st.Vacuum)
			assert.Equal(t, tc.want, *st.Optimize)
			assert.Equal(t, tc.order, st.Optimize.SortOrder())
		})
	}
}

func TestParseReorgPurge(t *testing.T) {
	cases := []struct {
		name, script string
		want         Optimize
	}{
		{"purge", "REORG TABLE delta.`/lake/pings` APPLY (PURGE)", Optimize{Location: "/lake/pings", Purge: true}},
		{"string form, lower case", "reorg table '/t' apply (purge);", Optimize{Location: "/t", Purge: true}},
		{"where", "REORG TABLE delta.`/t` WHERE day >= '2026-01-01' APPLY (PURGE)",
			Optimize{Location: "/t", Where: "day >= '2026-01-01'", SparkWhere: "day >= '2026-01-01'", Purge: true}},
		{"apply inside a string stays in the predicate", "REORG TABLE '/t' WHERE s = 'APPLY (PURGE)' /* APPLY */ APPLY (PURGE)",
			Optimize{Location: "/t", Where: "s = 'APPLY (PURGE)'", SparkWhere: "s = 'APPLY (PURGE)'", Purge: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := parseOne(t, tc.script, CommandReorg)
			require.NotNil(t, st.Optimize)
			assert.Equal(t, tc.want, *st.Optimize)
			assert.Equal(t, "REORG TABLE", st.Optimize.Statement())
			assert.Empty(t, st.Optimize.SortOrder())
		})
	}
}

func TestParseReorgRefusals(t *testing.T) {
	cases := []struct {
		name, script string
		line, col    int
		want         string
	}{
		{"without TABLE", "REORG '/t' APPLY (PURGE)", 1, 7, "TABLE after REORG"},
		{"table name", "REORG TABLE events APPLY (PURGE)", 1, 13, "Delta tables are named by location, as in REORG TABLE delta."},
		{"without APPLY", "REORG TABLE '/t'", 1, 17, "WHERE or APPLY (PURGE)"},
		{"empty where", "REORG TABLE '/t' WHERE APPLY (PURGE)", 1, 18, "WHERE without a predicate"},
		{"uniform", "REORG TABLE '/t' APPLY (UPGRADE UNIFORM(ICEBERG_COMPAT_VERSION = 2))", 1, 25, "APPLY (UPGRADE UNIFORM …) is not supported"},
		{"other action", "REORG TABLE '/t' APPLY (COMPACT)", 1, 25, `unexpected "COMPACT", want PURGE`},
		{"unclosed", "REORG TABLE '/t' APPLY (PURGE", 1, 30, `")" after PURGE`},
		{"a curve", "REORG TABLE '/t' APPLY (PURGE) ZORDER BY (a)", 1, 32, "after APPLY (PURGE)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRefused(t, tc.script, tc.line, tc.col, tc.want) })
	}
}

func TestParseMixedScript(t *testing.T) {
	script := "CALL system.rewrite_manifests('a.b');\nOPTIMIZE delta.`/t` WHERE x = 1;\n  VACUUM '/t' DRY RUN;"
	sts, err := Parse(script)
	require.NoError(t, err)
	require.Len(t, sts, 3)
	assert.Equal(t, []string{CommandCall, CommandOptimize, CommandVacuum}, []string{sts[0].Command(), sts[1].Command(), sts[2].Command()})
	assert.Equal(t, [3]int{2, 2, 3}, [3]int{sts[1].Index, sts[1].Line, sts[2].Line})
	assert.Equal(t, "OPTIMIZE delta.`/t` WHERE x = 1", sts[1].Text)
	assert.Equal(t, "VACUUM '/t' DRY RUN", sts[2].Text)

	_, err = Bind(sts[2], script)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "VACUUM is a Delta Lake statement")
}

func TestParseDeltaRefusals(t *testing.T) {
	cases := []struct {
		name, script string
		line, col    int
		want         string
	}{
		{"table name", "VACUUM events", 1, 8, `Delta tables are named by location, as in VACUUM delta.`},
		{"qualified table name", "OPTIMIZE db.events", 1, 10, "Delta tables are named by location"},
		{"missing table", "VACUUM", 1, 7, "a Delta table"},
		{"unquoted path", "VACUUM delta./t", 1, 14, `unexpected character '/'`},
		{"path as a string after delta.", "VACUUM delta.'/t'", 1, 14, "a back-quoted location"},
		{"empty location", "VACUUM ''", 1, 8, "empty table location"},
		{"inventory", "VACUUM '/t' USING INVENTORY inv", 1, 13, "USING INVENTORY is not supported"},
		{"retain without a number", "VACUUM '/t' RETAIN HOURS", 1, 20, "a number of hours after RETAIN"},
		{"retain in days", "VACUUM '/t' RETAIN 7 DAYS", 1, 22, `unexpected "DAYS", want HOURS`},
		{"negative retain", "VACUUM '/t' RETAIN -1 HOURS", 1, 20, "cannot be negative"},
		{"huge retain", "VACUUM '/t' RETAIN 1e30 HOURS", 1, 20, "too long"},
		{"dry without run", "VACUUM '/t' DRY", 1, 16, "RUN after DRY"},
		{"out of order", "VACUUM '/t' DRY RUN RETAIN 1 HOURS", 1, 21, `want ";" between statements`},
		{"unknown clause", "VACUUM '/t' LITE", 1, 13, `unexpected "LITE", want RETAIN n HOURS, DRY RUN`},
		{"empty where", "OPTIMIZE '/t' WHERE ZORDER BY (a)", 1, 15, "WHERE without a predicate"},
		{"unclosed where", "OPTIMIZE '/t' WHERE (a = 1 ZORDER BY (a)", 1, 21, `unclosed "("`},
		{"unbalanced where", "OPTIMIZE '/t' WHERE a = 1) ZORDER BY (a)", 1, 26, `unbalanced ")"`},
		{"unterminated string in where", "OPTIMIZE '/t' WHERE a = 'x", 1, 25, "unterminated string"},
		{"zorder without by", "OPTIMIZE '/t' ZORDER (a)", 1, 22, "BY after ZORDER"},
		{"zorder without columns", "OPTIMIZE '/t' ZORDER BY ()", 1, 26, "a column name in ZORDER BY"},
		{"column twice", "OPTIMIZE '/t' HILBERT BY (a, b, A, a)", 1, 36, "column a is given twice"},
		{"five columns", "OPTIMIZE '/t' HILBERT BY (a, b, c, d, e)", 1, 39, "at most 4 columns"},
		{"unclosed columns", "OPTIMIZE '/t' ZORDER BY (a, b", 1, 30, `want "," or ")"`},
		{"dotted back-quoted column", "OPTIMIZE '/t' ZORDER BY (`a.b`)", 1, 26, "holding a dot"},
		{"both curves", "OPTIMIZE '/t' ZORDER BY (a) HILBERT BY (b)", 1, 29, `unexpected "HILBERT"`},
		{"full", "OPTIMIZE '/t' FULL", 1, 15, `unexpected "FULL", want WHERE`},
		{"other statement", "DELETE FROM t", 1, 1, "want CALL, VACUUM, OPTIMIZE, REORG TABLE or ALTER TABLE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRefused(t, tc.script, tc.line, tc.col, tc.want) })
	}
}
