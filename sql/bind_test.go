package sql

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
)

func TestBind(t *testing.T) {
	ts := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name, script string
		want         Call
	}{
		{"rewrite by name",
			`CALL system.rewrite_data_files(table => 'gis.t', strategy => 'SORT', sort_order => 'hilbert(bbox_minx, bbox_miny)',
			  options => map('min-input-files', 2, 'rewrite-all', true), where => 'name = "O\'Brien" AND ` + "`My Col`" + ` == 1')`,
			Call{Procedure: RewriteDataFiles, Table: "gis.t", Strategy: "sort", SortOrder: "hilbert(bbox_minx, bbox_miny)",
				Options: map[string]string{"min-input-files": "2", "rewrite-all": "true"},
				Where:   `name = 'O''Brien' AND "My Col" =  1`, SparkWhere: "name = \"O'Brien\" AND `My Col` == 1"}},
		{"rewrite by position", `CALL lake.system.rewrite_data_files('gis.t', 'sort', 'id DESC NULLS LAST, name', map(), 'id > 3')`,
			Call{Procedure: RewriteDataFiles, Catalog: "lake", Table: "gis.t", Strategy: "sort", SortOrder: "id DESC NULLS LAST, name",
				Options: map[string]string{}, Where: "id > 3", SparkWhere: "id > 3"}},
		{"rewrite zorder without strategy", `CALL system.rewrite_data_files(table => 'gis.t', sort_order => 'zorder(a,b)')`, Call{}},
		{"back-quoted table", "CALL system.rewrite_manifests('`gis`.`my table`')",
			Call{Procedure: RewriteManifests, Table: "gis.my table"}},
		{"expire by position", `CALL system.expire_snapshots('gis.t', TIMESTAMP '2026-01-02 00:00:00', 10, 4)`,
			Call{Procedure: ExpireSnapshots, Table: "gis.t", OlderThan: ts, RetainLast: 10,
				Ignored: []string{"max_concurrent_deletes: " + ignoredPool}}},
		{"expire older_than as a string, dry run", `CALL system.expire_snapshots(table => 'gis.t', older_than => '2026-01-02', dry_run => true)`,
			Call{Procedure: ExpireSnapshots, Table: "gis.t", OlderThan: ts, DryRun: true}},
		{"orphans by position", `CALL system.remove_orphan_files('gis.t', TIMESTAMP '2026-01-02', 's3://b/wh/gis/t/data', true)`,
			Call{Procedure: RemoveOrphanFiles, Table: "gis.t", OlderThan: ts, Location: "s3://b/wh/gis/t/data", DryRun: true}},
		{"manifests", `CALL system.rewrite_manifests(table => 'gis.t', use_caching => false, target_manifest_size_bytes => 8388608L)`,
			Call{Procedure: RewriteManifests, Table: "gis.t", TargetManifestSizeBytes: 8 << 20,
				Ignored: []string{"use_caching: accepted and ignored: there is no Spark cache"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := bind(t, tc.script)
			require.NoError(t, err)
			if tc.want.Procedure == "" {
				return // only that it binds
			}
			got.Statement = Statement{}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestBindRefusals(t *testing.T) {
	cases := []struct {
		name, script string
		col          int
		want         []string
	}{
		{"unknown procedure", "CALL system.rewrite_data_file('a.b')", 1, []string{"unknown procedure system.rewrite_data_file", "did you mean rewrite_data_files?"}},
		{"other Iceberg procedure", "CALL system.rollback_to_snapshot('a.b', 1)", 1, []string{"Iceberg's, but geocompact does not run it"}},
		{"unknown argument", "CALL system.expire_snapshots(table => 'a.b', retain_lst => 2)", 46, []string{"expire_snapshots has no argument retain_lst", "did you mean retain_last?"}},
		{"missing table", "CALL system.rewrite_manifests()", 1, []string{"rewrite_manifests: argument table is required"}},
		{"too many positional", "CALL system.rewrite_data_files('a.b', 'sort', 'id', map(), 'id > 1', 6)", 70, []string{"at most 5 positional arguments (table, strategy, sort_order, options, where)", "name the others"}},
		{"refused positional", "CALL system.rewrite_manifests('a.b', false, 1)", 45, []string{"argument spec_id is not supported"}},
		{"wrong type", "CALL system.expire_snapshots(table => 'a.b', retain_last => '5')", 61, []string{"expire_snapshots: argument retain_last: want an integer, got a string"}},
		{"int out of range", "CALL system.expire_snapshots(table => 'a.b', retain_last => 9999999999)", 61, []string{"out of range for a 32-bit integer"}},
		{"fraction for an int", "CALL system.expire_snapshots(table => 'a.b', retain_last => 1.5)", 61, []string{"want an integer, got 1.5"}},
		{"max_concurrent_deletes zero", "CALL system.remove_orphan_files(table => 'a.b', max_concurrent_deletes => 0)", 75, []string{"max_concurrent_deletes: 0: want at least 1"}},
		{"retain_last zero", "CALL system.expire_snapshots(table => 'a.b', retain_last => 0)", 61, []string{"retain_last: 0: want at least 1"}},
		{"bad timestamp string", "CALL system.expire_snapshots(table => 'a.b', older_than => 'yesterday')", 60, []string{"older_than", "yesterday"}},
		{"number for a timestamp", "CALL system.remove_orphan_files(table => 'a.b', older_than => 5)", 63, []string{"want a timestamp (TIMESTAMP"}},
		{"refused argument", "CALL system.expire_snapshots(table => 'a.b', snapshot_ids => array(1))", 46, []string{"argument snapshot_ids is not supported"}},
		{"table without namespace", "CALL system.rewrite_data_files('t')", 32, []string{"argument table", "'db.sample'"}},
		{"table with empty part", "CALL system.rewrite_data_files('a..t')", 32, []string{"empty part"}},
		{"table not a string", "CALL system.rewrite_data_files(table => 5)", 41, []string{"argument table: want a string, got a number"}},
		{"bad strategy", "CALL system.rewrite_data_files('a.b', 'zorder')", 39, []string{`strategy: "zorder": want binpack or sort`}},
		{"binpack with order", "CALL system.rewrite_data_files('a.b', 'binpack', 'id')", 50, []string{"binpack takes no sort order"}},
		{"bad sort order", "CALL system.rewrite_data_files('a.b', 'sort', 'zorder(')", 47, []string{"sort_order"}},
		{"options not a map", "CALL system.rewrite_data_files(table => 'a.b', options => array('a'))", 59, []string{"want a map('key', 'value', …), got an array"}},
		{"duplicate option", "CALL system.rewrite_data_files(table => 'a.b', options => map('a', '1', 'a', '2'))", 59, []string{`map key "a" is given twice`}},
		{"where unterminated", `CALL system.rewrite_data_files(table => 'a.b', where => 'name = "x')`, 57, []string{"argument where", "unterminated string"}},
		{"empty location", "CALL system.remove_orphan_files(table => 'a.b', location => ' ')", 61, []string{"location: empty"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := bind(t, tc.script)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalid)
			e, ok := errors.AsType[*Error](err)
			require.True(t, ok, "%v is not an *Error", err)
			for _, w := range tc.want {
				assert.Contains(t, e.Reason, w)
			}
			assert.Equal(t, tc.col, e.Col, "column of %v", err)
		})
	}
}

func TestWhereText(t *testing.T) {
	cases := []struct{ spark, want string }{
		{`id = 3 and name = "foo"`, `id = 3 and name = 'foo'`},
		{`name = 'O\'Brien'`, `name = 'O''Brien'`},
		{`name = "it's"`, `name = 'it''s'`},
		{"`my col` = 'a\\\\b'", `"my col" = 'a\b'`},
		{"`a``b` = 1", "\"a`b\" = 1"},
		{"`say \"x\"` = 1", `"say ""x""" = 1`},
		{`a == 1 AND b <= 2 AND c >= 3`, `a =  1 AND b <= 2 AND c >= 3`},
		{`s = '=='`, `s = '=='`},
		{`ts >= TIMESTAMP '2026-01-02 00:00:00'`, `ts >= TIMESTAMP '2026-01-02 00:00:00'`},
	}
	for _, tc := range cases {
		got, err := WhereText(tc.spark)
		require.NoError(t, err, tc.spark)
		assert.Equal(t, tc.want, got, tc.spark)
	}
	for _, bad := range []string{`name = 'x`, "`col = 1", `a = "\`} {
		_, err := WhereText(bad)
		assert.Error(t, err, bad)
	}
}

// FuzzParse checks that Parse and Bind never panic, that every error is
// an *Error with a position inside the script, and that parsing is
// deterministic; an ALTER TABLE's order is one cluster.ParseOrder reads.
// The seeds cover CALL, VACUUM, OPTIMIZE and ALTER TABLE.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"CALL system.rewrite_data_files('a.b')",
		`CALL lake.system.rewrite_data_files(table => 'a.b', strategy => 'sort', sort_order => 'zorder(x, y)', options => map('min-input-files', '2'), where => 'x > 1 and n = "a"')`,
		"CALL system.expire_snapshots('a.b', TIMESTAMP '2026-01-02 00:00:00+02:00', 5);",
		"call system.remove_orphan_files(table => \"a.b\", dry_run => true, location => 's3://b/p') ; CALL system.rewrite_manifests('a.b')",
		"/* c /* d */ */ -- x\nCALL `c`.system.p(x => array(1L, 2.5D, -3e4))", "CALL system.p('\\u00e9\\101\\'')",
		"CALL", "CALL system.p(", "'", "\"", "`", "/*", "CALL system.p(map('a'))", "\x00", "CALL system.p(TIMESTAMP '')",
		"VACUUM delta.`/lake/pings` RETAIN 168 HOURS DRY RUN", "vacuum '/t' retain 1.5D hours;", "VACUUM '/t' USING INVENTORY x",
		"VACUUM delta.`/t` RETAIN -1 HOURS", "VACUUM events", "VACUUM delta.", "VACUUM '/t' DRY",
		"OPTIMIZE delta.`/t` WHERE region = 'emea' AND (x > 1 OR `y` == \"a;b\") ZORDER BY (bbox_minx, bbox_miny)",
		"OPTIMIZE '/t' HILBERT BY bbox.xmin, bbox.ymin; VACUUM '/t'", "OPTIMIZE '/t' WHERE ((a) ZORDER BY (a)",
		"OPTIMIZE '/t' WHERE /* zorder */ a = 1 -- x\n", "OPTIMIZE '/t' WHERE", "OPTIMIZE '/t' ZORDER BY (a, a)",
		"ALTER TABLE a.b SET TBLPROPERTIES ('k' = 'v', x.y 1, z TRUE)", "ALTER TABLE a.b UNSET TBLPROPERTIES IF EXISTS ('k', x.y)",
		"ALTER TABLE c.a.`b` WRITE LOCALLY ORDERED BY (ts DESC NULLS FIRST, `x y`)", "ALTER TABLE delta.`/t` WRITE ORDERED BY hilbert(a, b)",
		"ALTER TABLE '/t' WRITE UNORDERED;", "ALTER TABLE a.b WRITE ORDERED BY str()", "ALTER TABLE a.b SET TBLPROPERTIES ('k' =)",
		"ALTER TABLE a.b WRITE ORDERED BY zorder(a, b), c", "ALTER TABLE a", "ALTER TABLE a.b WRITE DISTRIBUTED BY PARTITION",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sts, err := Parse(s)
		if err != nil {
			checkFuzzError(t, s, err)
			return
		}
		again, err := Parse(s)
		require.NoError(t, err)
		require.Equal(t, sts, again, "Parse(%q) is not deterministic", s)
		for _, st := range sts {
			if _, err := Bind(st, s); err != nil {
				checkFuzzError(t, s, err)
			}
			if st.Alter != nil && st.Alter.SortOrder != "" {
				_, err := cluster.ParseOrder(st.Alter.SortOrder)
				require.NoError(t, err, "Parse(%q): order %q", s, st.Alter.SortOrder)
			}
		}
	})
}

func checkFuzzError(t *testing.T, s string, err error) {
	t.Helper()
	e, ok := errors.AsType[*Error](err)
	if !ok || !errors.Is(err, ErrInvalid) || e.Pos < 0 || e.Pos > len(s) || e.Line < 1 || e.Col < 1 {
		t.Fatalf("Parse(%q): error %v is not an *Error with a position inside the script", s, err)
	}
}
