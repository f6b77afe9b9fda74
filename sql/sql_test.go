package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bind parses a one-statement script and binds it.
func bind(t *testing.T, script string) (Call, error) {
	t.Helper()
	sts, err := Parse(script)
	if err != nil {
		return Call{}, err
	}
	require.Len(t, sts, 1)
	return Bind(sts[0], script)
}

func TestParseScript(t *testing.T) {
	script := `-- nightly maintenance
CALL lake.system.rewrite_data_files(table => 'gis.parcels', strategy => 'sort', sort_order => 'zorder(bbox_minx, bbox_miny)');
/* expire, then /* nested */ orphans */
call SYSTEM.Expire_Snapshots('gis.parcels', TIMESTAMP '2026-01-02 03:04:05', 10);;
CALL ` + "`lake`" + `.system.remove_orphan_files(table => "gis.parcels", dry_run => true)
`
	sts, err := Parse(script)
	require.NoError(t, err)
	require.Len(t, sts, 3)

	assert.Equal(t, 1, sts[0].Index)
	assert.Equal(t, 2, sts[0].Line)
	assert.Equal(t, "lake", sts[0].Catalog)
	assert.Equal(t, "rewrite_data_files", sts[0].Procedure)
	require.Len(t, sts[0].Args, 3)
	assert.Equal(t, "sort_order", sts[0].Args[2].Name)
	assert.Equal(t, "zorder(bbox_minx, bbox_miny)", sts[0].Args[2].Value.Text)
	assert.Contains(t, sts[0].Text, "CALL lake.system.rewrite_data_files(")

	assert.Equal(t, "", sts[1].Catalog, "system.proc runs on the current catalog")
	assert.Equal(t, 4, sts[1].Line)
	require.Len(t, sts[1].Args, 3)
	assert.Equal(t, KindTimestamp, sts[1].Args[1].Value.Kind)
	assert.Equal(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), sts[1].Args[1].Value.Time)
	assert.Equal(t, "10", sts[1].Args[2].Value.Text)

	assert.Equal(t, 3, sts[2].Index)
	assert.Equal(t, "lake", sts[2].Catalog)
	assert.Equal(t, "gis.parcels", sts[2].Args[0].Value.Text, "a double-quoted literal is a string")
	assert.True(t, sts[2].Args[1].Value.Bool)
}

func TestParseValues(t *testing.T) {
	cases := []struct {
		name, value string
		want        Value
	}{
		{"single-quoted escapes", `'it\'s a\tb\\c\u00e9\101'`, Value{Kind: KindString, Text: "it's a\tb\\cé" + "A"}},
		{"double-quoted", `"say \"hi\" 'x'"`, Value{Kind: KindString, Text: `say "hi" 'x'`}},
		{"adjacent strings concatenate", `'a' "b" 'c'`, Value{Kind: KindString, Text: "abc"}},
		{"LIKE escapes keep their backslash", `'a\%b\_'`, Value{Kind: KindString, Text: `a\%b\_`}},
		{"unknown escape is the character", `'\q'`, Value{Kind: KindString, Text: "q"}},
		{"negative number", `-12`, Value{Kind: KindNumber, Text: "-12"}},
		{"long suffix", `100L`, Value{Kind: KindNumber, Text: "100L"}},
		{"decimal exponent", `1.5e3`, Value{Kind: KindNumber, Text: "1.5e3"}},
		{"bigdecimal suffix", `2.5BD`, Value{Kind: KindNumber, Text: "2.5BD"}},
		{"false", `False`, Value{Kind: KindBool}},
		{"timestamp with offset", `TIMESTAMP '2026-01-02T03:04:05+02:00'`, Value{Kind: KindTimestamp, Time: time.Date(2026, 1, 2, 1, 4, 5, 0, time.UTC)}},
		{"timestamp spaced offset", `timestamp '2026-01-02 03:04:05.250 -0500'`, Value{Kind: KindTimestamp, Time: time.Date(2026, 1, 2, 8, 4, 5, 250e6, time.UTC)}},
		{"timestamp date only", `TIMESTAMP '2026-01-02'`, Value{Kind: KindTimestamp, Time: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}},
		{"timestamp Z", `TIMESTAMP "2026-01-02 03:04Z"`, Value{Kind: KindTimestamp, Time: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}},
		{"timestamp UTC word", `TIMESTAMP '2026-01-02 03:04:05 UTC'`, Value{Kind: KindTimestamp, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{"date", `DATE '2026-01-02'`, Value{Kind: KindTimestamp, Time: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}},
		{"map", `map('a', '1', "b", 2)`, Value{Kind: KindMap, Items: []Value{{Kind: KindString, Text: "a"}, {Kind: KindString, Text: "1"}, {Kind: KindString, Text: "b"}, {Kind: KindNumber, Text: "2"}}}},
		{"empty array", `ARRAY()`, Value{Kind: KindArray, Items: []Value{}}},
		{"array", `array(1, 2)`, Value{Kind: KindArray, Items: []Value{{Kind: KindNumber, Text: "1"}, {Kind: KindNumber, Text: "2"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sts, err := Parse("CALL system.p(x => " + tc.value + ")")
			require.NoError(t, err)
			got := sts[0].Args[0].Value
			clearPos(&got)
			assert.Equal(t, tc.want, got)
		})
	}
}

func clearPos(v *Value) {
	v.Pos = 0
	for i := range v.Items {
		clearPos(&v.Items[i])
	}
}

func TestParseRefusals(t *testing.T) {
	cases := []struct {
		name, script string
		line, col    int
		want         string
	}{
		{"empty script", "  -- nothing\n", 2, 1, "no statement in the script"},
		{"not a CALL", "SELECT 1", 1, 1, `unexpected "SELECT", want CALL`},
		{"missing system", "CALL cat.rewrite_data_files('a.b')", 1, 6, `namespace "cat"`},
		{"too many name parts", "CALL a.b.system.p()", 1, 6, "4 parts"},
		{"one name part", "CALL p()", 1, 6, "1 parts"},
		{"no parenthesis", "CALL system.p", 1, 14, `"(" after the procedure name`},
		{"unclosed arguments", "CALL system.p('a'", 1, 18, `want "," or ")"`},
		{"missing separator", "CALL system.p() CALL system.p()", 1, 17, `";" between statements`},
		{"mixed arguments", "CALL system.p('a', b => 1)", 1, 20, "cannot be mixed"},
		{"argument twice", "CALL system.p(a => 1, A => 2)", 1, 23, "given twice"},
		{"unterminated string", "CALL system.p('abc)", 1, 15, "unterminated string"},
		{"unterminated double-quoted string", "CALL system.p(\"abc)", 1, 15, "unterminated string"},
		{"unterminated comment", "CALL system.p() /* x", 1, 17, "unterminated /* comment"},
		{"unterminated nested comment", "/* a /* b */ CALL system.p()", 1, 1, "unterminated /* comment"},
		{"bad unicode escape", `CALL system.p('\u12')`, 1, 16, `\u`},
		{"bad timestamp", "CALL system.p(TIMESTAMP '2026-13-01')", 1, 25, "want yyyy-mm-dd"},
		{"timestamp without literal", "CALL system.p(TIMESTAMP 5)", 1, 25, "a quoted literal after TIMESTAMP"},
		{"unknown typed literal", "CALL system.p(INTERVAL '1' DAY)", 1, 15, `unexpected "INTERVAL"`},
		{"null", "CALL system.p(a => NULL)", 1, 20, "leave the argument out"},
		{"odd map", "CALL system.p(map('a'))", 1, 22, "pairs"},
		{"nested map", "CALL system.p(map('a', map()))", 1, 24, "plain literals only"},
		{"malformed number", "CALL system.p(12abc)", 1, 15, `malformed number "12abc"`},
		{"stray character", "CALL system.p(#)", 1, 15, `unexpected character '#'`},
		{"empty back-quote", "CALL ``.system.p()", 1, 6, "empty quoted identifier"},
		{"position on a later line", "CALL system.p();\n  CALL system.p(,)", 2, 17, `unexpected ","`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assertRefused(t, tc.script, tc.line, tc.col, tc.want) })
	}
}

// assertRefused checks that Parse refuses script with an *Error at line
// and col whose reason contains want.
func assertRefused(t *testing.T, script string, line, col int, want string) {
	t.Helper()
	_, err := Parse(script)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalid)
	e, ok := errors.AsType[*Error](err)
	require.True(t, ok, "%v is not an *Error", err)
	assert.Contains(t, e.Reason, want)
	assert.Equal(t, [2]int{line, col}, [2]int{e.Line, e.Col}, "position of %v", err)
}
