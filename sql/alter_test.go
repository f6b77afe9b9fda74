package sql

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
)

func TestParseAlter(t *testing.T) {
	cases := []struct {
		name, script string
		want         Alter
	}{
		{"set", "ALTER TABLE db.t SET TBLPROPERTIES ('write.target-file-size-bytes' = '128MiB', 'owner'='gis')",
			Alter{Table: []string{"db", "t"}, Set: map[string]string{"write.target-file-size-bytes": "128MiB", "owner": "gis"}}},
		{"set without = and unquoted keys", "alter table cat.db.`my t` set tblproperties (gc.enabled true, owner 4L, x \"y\")",
			Alter{Table: []string{"cat", "db", "my t"}, Set: map[string]string{"gc.enabled": "true", "owner": "4", "x": "y"}}},
		{"adjacent strings", "ALTER TABLE db.t SET TBLPROPERTIES ('a' = 'b' 'c')", Alter{Table: []string{"db", "t"}, Set: map[string]string{"a": "bc"}}},
		{"unset", "ALTER TABLE db.t UNSET TBLPROPERTIES ('owner', 'geocompact.layout')",
			Alter{Table: []string{"db", "t"}, Unset: []string{"owner", "geocompact.layout"}}},
		{"unset if exists", "ALTER TABLE db.t UNSET TBLPROPERTIES IF EXISTS (owner)",
			Alter{Table: []string{"db", "t"}, Unset: []string{"owner"}, IfExists: true}},
		{"ordered by columns", "ALTER TABLE db.t WRITE ORDERED BY ts, device_id DESC, x ASC NULLS LAST, y DESC NULLS FIRST",
			Alter{Table: []string{"db", "t"}, SortOrder: "ts ASC NULLS FIRST, device_id DESC NULLS LAST, x ASC NULLS LAST, y DESC NULLS FIRST"}},
		{"ordered by in parentheses", "ALTER TABLE db.t WRITE LOCALLY ORDERED BY (a, b.c DESC)",
			Alter{Table: []string{"db", "t"}, SortOrder: "a ASC NULLS FIRST, b.c DESC NULLS LAST"}},
		{"zorder", "ALTER TABLE db.t WRITE ORDERED BY zorder(bbox_minx, bbox_miny)", Alter{Table: []string{"db", "t"}, SortOrder: "zorder(bbox_minx, bbox_miny)"}},
		{"hilbert over the position", "ALTER TABLE db.t WRITE ORDERED BY HILBERT()", Alter{Table: []string{"db", "t"}, SortOrder: "hilbert()"}},
		{"kd", "ALTER TABLE db.t WRITE ORDERED BY kd(geometry)", Alter{Table: []string{"db", "t"}, SortOrder: "kd(geometry)"}},
		{"str in parentheses", "ALTER TABLE db.t WRITE ORDERED BY (str(geometry));", Alter{Table: []string{"db", "t"}, SortOrder: "str(geometry)"}},
		{"unordered", "ALTER TABLE db.t WRITE UNORDERED", Alter{Table: []string{"db", "t"}, Unordered: true}},
		{"delta", "ALTER TABLE delta.`/lake/pings` SET TBLPROPERTIES ('delta.targetFileSize' = '128MiB')",
			Alter{Location: "/lake/pings", Set: map[string]string{"delta.targetFileSize": "128MiB"}}},
		{"delta by string", "ALTER TABLE '/lake/pings' WRITE ORDERED BY hilbert()", Alter{Location: "/lake/pings", SortOrder: "hilbert()"}},
		{"namespace called delta", "ALTER TABLE delta.events WRITE UNORDERED", Alter{Table: []string{"delta", "events"}, Unordered: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := parseOne(t, tc.script, CommandAlter)
			require.NotNil(t, st.Alter)
			assert.Equal(t, tc.want, *st.Alter)
			if o := st.Alter.SortOrder; o != "" {
				back, err := cluster.ParseOrder(o)
				require.NoError(t, err)
				assert.Equal(t, o, back.String(), "the order is canonical")
			}
			_, err := Bind(st, tc.script)
			require.ErrorIs(t, err, ErrInvalid, "ALTER TABLE is not a procedure call")
		})
	}
}

func TestParseAlterInScript(t *testing.T) {
	script := "ALTER TABLE db.t WRITE ORDERED BY hilbert();\n CALL system.rewrite_data_files('db.t');\nALTER TABLE db.t WRITE UNORDERED"
	sts, err := Parse(script)
	require.NoError(t, err)
	require.Len(t, sts, 3)
	assert.Equal(t, []string{CommandAlter, CommandCall, CommandAlter}, []string{sts[0].Command(), sts[1].Command(), sts[2].Command()})
	assert.Equal(t, "ALTER TABLE db.t WRITE ORDERED BY hilbert()", sts[0].Text)
	assert.Equal(t, "ALTER TABLE db.t WRITE UNORDERED", sts[2].Text)
	assert.Equal(t, 3, sts[2].Line)
	assert.Equal(t, "db.t", sts[0].Alter.TableName())
}

func TestParseAlterRefusals(t *testing.T) {
	cases := []struct {
		name, script string
		line, col    int
		want         string
	}{
		{"alter view", "ALTER VIEW v SET TBLPROPERTIES ('a' = 'b')", 1, 7, `unexpected "VIEW", want TABLE after ALTER`},
		{"one-part name", "ALTER TABLE t SET TBLPROPERTIES ('a' = 'b')", 1, 13, "want a namespace and a name"},
		{"add column", "ALTER TABLE db.t ADD COLUMN x int", 1, 18, "SET TBLPROPERTIES, UNSET TBLPROPERTIES or WRITE"},
		{"set location", "ALTER TABLE db.t SET LOCATION '/x'", 1, 22, "TBLPROPERTIES after SET"},
		{"empty set", "ALTER TABLE db.t SET TBLPROPERTIES ()", 1, 36, "is empty"},
		{"no parenthesis", "ALTER TABLE db.t SET TBLPROPERTIES 'a' = 'b'", 1, 36, `"(" after SET TBLPROPERTIES`},
		{"no value", "ALTER TABLE db.t SET TBLPROPERTIES ('a', 'b' = 'c')", 1, 37, `property "a" has no value`},
		{"no value after =", "ALTER TABLE db.t SET TBLPROPERTIES ('a' =)", 1, 37, `property "a" has no value`},
		{"map value", "ALTER TABLE db.t SET TBLPROPERTIES ('a' = map('b', 'c'))", 1, 43, "a property value"},
		{"key twice", "ALTER TABLE db.t SET TBLPROPERTIES ('a' = '1',\n  'a' = '2')", 2, 3, `property "a" is given twice`},
		{"unquoted dashed key", "ALTER TABLE db.t SET TBLPROPERTIES (write.target-file-size-bytes = 1)", 1, 49, `unexpected character '-'`},
		{"empty key", "ALTER TABLE db.t SET TBLPROPERTIES ('' = 'x')", 1, 37, "empty property key"},
		{"unset with a value", "ALTER TABLE db.t UNSET TBLPROPERTIES ('a' = 'b')", 1, 43, "takes keys only"},
		{"unset key twice", "ALTER TABLE db.t UNSET TBLPROPERTIES (a, a)", 1, 42, "given twice"},
		{"if without exists", "ALTER TABLE db.t UNSET TBLPROPERTIES IF ('a')", 1, 41, "EXISTS after IF"},
		{"unclosed list", "ALTER TABLE db.t SET TBLPROPERTIES ('a' = 'b'", 1, 46, `want "," or ")"`},
		{"write without order", "ALTER TABLE db.t WRITE", 1, 23, "ORDERED BY or UNORDERED after WRITE"},
		{"ordered without by", "ALTER TABLE db.t WRITE ORDERED ts", 1, 32, "BY after ORDERED"},
		{"distributed", "ALTER TABLE db.t WRITE DISTRIBUTED BY PARTITION ORDERED BY ts", 1, 24, "WRITE DISTRIBUTED BY is not supported"},
		{"distributed after the order", "ALTER TABLE db.t WRITE ORDERED BY ts DISTRIBUTED BY PARTITION", 1, 38, "DISTRIBUTED BY is not supported"},
		{"transform", "ALTER TABLE db.t WRITE ORDERED BY id, bucket(16, id)", 1, 39, "after other fields"},
		{"transform alone", "ALTER TABLE db.t WRITE ORDERED BY days(ts)", 1, 35, "days(…) is not supported"},
		{"curve with more fields", "ALTER TABLE db.t WRITE ORDERED BY hilbert(a, b), c", 1, 48, "a curve is the whole order"},
		{"curve with a direction", "ALTER TABLE db.t WRITE ORDERED BY zorder(a, b) DESC", 1, 48, "has no direction"},
		{"five curve columns", "ALTER TABLE db.t WRITE ORDERED BY hilbert(a, b, c, d, e)", 1, 55, "at most 4 columns"},
		{"str over two", "ALTER TABLE db.t WRITE ORDERED BY str(a, b)", 1, 42, "at most 1 columns"},
		{"kd over two", "ALTER TABLE db.t WRITE ORDERED BY kd(a, b)", 1, 41, "at most 1 columns"},
		{"linear is no function", "ALTER TABLE db.t WRITE ORDERED BY linear(a)", 1, 35, "linear(…) is not supported: geocompact orders by columns, zorder(a, b), hilbert(a, b), str(geometry) or kd(geometry)"},
		{"column twice", "ALTER TABLE db.t WRITE ORDERED BY a, b DESC, a", 1, 46, "column a is given twice"},
		{"nulls without place", "ALTER TABLE db.t WRITE ORDERED BY a NULLS", 1, 42, "FIRST or LAST after NULLS"},
		{"trailing text", "ALTER TABLE db.t WRITE UNORDERED please", 1, 34, `";" or the end of the script`},
		{"empty delta location", "ALTER TABLE delta.`` WRITE UNORDERED", 1, 19, "empty quoted identifier"},
		{"empty location string", "ALTER TABLE '' WRITE UNORDERED", 1, 13, "empty table location"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRefused(t, tc.script, tc.line, tc.col, tc.want) })
	}
}
