package procedure_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/sql/procedure"
	"github.com/geocompact/geocompact/table/optval"
)

// deltaTable copies Delta's golden table basic-with-inserts-deletes-checkpoint
// (14 data files, seven of them removed in 2023) into a temporary
// directory, every file aged 30 days, past the default 7-day retention.
func deltaTable(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testenv.DeltaGolden(t), "basic-with-inserts-deletes-checkpoint")
	_, err := os.Stat(src)
	require.NoError(t, err, "Delta golden table %s", src)
	dst := filepath.Join(t.TempDir(), "pings")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	old := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, filepath.WalkDir(dst, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
	return dst
}

// deltaState is the number of parquet files at dir and the rows the
// table reads.
func deltaState(t *testing.T, dir string) (files int, rows int64) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	require.NoError(t, err)
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		return nil
	}))
	return len(m), rows
}

func TestDeltaVacuum(t *testing.T) {
	dir := deltaTable(t)
	_, rows := deltaState(t, dir)
	script := "VACUUM delta.`" + dir + "` DRY RUN;\nVACUUM '" + dir + "' RETAIN 200 HOURS;\nvacuum '" + dir + "'"
	res, err := run(t, script, procedure.Catalogs{}, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 3)

	dry := res[0]
	assert.Equal(t, "VACUUM", dry.Command)
	assert.Equal(t, dir, dry.Location)
	assert.True(t, dry.DryRun)
	assert.Equal(t, []string{"path"}, dry.Columns)
	require.Len(t, dry.Rows, 7, "the seven files removed in 2023")
	assert.Equal(t, dir+"/", dry.Rows[0].Values[0].(string)[:len(dir)+1], "full paths, as Delta lists them")
	detail, ok := dry.Detail.(*delta.VacuumResult)
	require.True(t, ok, "%T", dry.Detail)
	assert.Equal(t, 0, detail.DeletedCount)

	real := res[1]
	assert.False(t, real.DryRun)
	require.Len(t, real.Rows, 1)
	assert.Equal(t, dir, real.Rows[0].Values[0], "a real run returns the table's location, as in Delta")
	detail = real.Detail.(*delta.VacuumResult)
	assert.Equal(t, 7, detail.DeletedCount)
	assert.Equal(t, (200 * time.Hour).Milliseconds(), detail.RetainMillis)
	files, after := deltaState(t, dir)
	assert.Equal(t, 7, files, "the seven live files remain")
	assert.Equal(t, rows, after, "vacuum never changes what the table reads")

	assert.Empty(t, res[2].Detail.(*delta.VacuumResult).Files, "nothing is left to vacuum")
}

func TestDeltaVacuumFloor(t *testing.T) {
	dir := deltaTable(t)
	cats, cat := warehouse(t, 3)
	script := "CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', '2'));\nVACUUM delta.`" + dir + "` RETAIN 1 HOURS"
	_, err := run(t, script, cats, procedure.Options{})
	require.ErrorIs(t, err, procedure.ErrCall)
	se, ok := errors.AsType[*procedure.StatementError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 2, se.Statement)
	assert.Equal(t, "VACUUM", se.Procedure)
	assert.Contains(t, err.Error(), "RETAIN 1 HOURS is below the table's delta.deletedFileRetentionDuration of 168 HOURS")
	assert.Contains(t, err.Error(), "those files: retain at least 168 HOURS, leave RETAIN out, or force it "+
		"(as Spark's spark.databricks.delta.retentionDurationCheck.enabled=false does)")
	c, ok := errors.AsType[remedy.Carrier](err)
	require.True(t, ok, "the error carries its remedy")
	assert.Equal(t, remedy.Advice{Kind: procedure.RemedyRetain, Value: "168"}, c.Remedy())
	n, _ := deltaState(t, dir)
	assert.Equal(t, 14, n, "nothing deleted")
	files, _ := content(t, cat)
	assert.Equal(t, 3, files, "the statement before did not run")

	// --force lowers the floor, as Spark's retentionDurationCheck does; the
	// script-wide dry run still deletes nothing.
	res, err := run(t, "VACUUM '"+dir+"' RETAIN 0 HOURS", cats, procedure.Options{Force: true, DryRun: true})
	require.NoError(t, err)
	assert.True(t, res[0].DryRun)
	assert.Len(t, res[0].Rows, 7)
	n, _ = deltaState(t, dir)
	assert.Equal(t, 14, n)
}

// TestDeltaOptimize runs OPTIMIZE on a copy of a golden table through a
// script: the files become one, the rows stay, the result row names the
// table and the counts; refusals (a WHERE on a column the table lacks, a
// curve column the table lacks, a path that is no Delta table) stop the
// script before its first statement runs.
func TestDeltaOptimize(t *testing.T) {
	dir := deltaTable(t)
	_, rows := deltaState(t, dir)
	cases := []struct {
		name, script string
		is           error
		want         string
	}{
		{"where unknown column", "OPTIMIZE delta.`" + dir + "` WHERE nope > 3 ZORDER BY (id)", optval.ErrBad, `unknown column "nope" (columns: id)`},
		{"unknown column", "OPTIMIZE '" + dir + "' HILBERT BY (id, nope)", procedure.ErrCall, "the table has no column nope"},
		{"not a Delta table", "VACUUM '" + t.TempDir() + "'", nil, "_delta_log"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, "VACUUM '"+dir+"';\n"+tc.script, procedure.Catalogs{}, procedure.Options{})
			require.Error(t, err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			assert.Contains(t, err.Error(), "statement 2 (line 2")
			assert.Contains(t, err.Error(), tc.want)
			n, _ := deltaState(t, dir)
			assert.Equal(t, 14, n, "the VACUUM before did not run")
		})
	}

	res, err := run(t, "OPTIMIZE delta.`"+dir+"` ZORDER BY (id)", procedure.Catalogs{}, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Len(t, res[0].Rows, 1)
	assert.Equal(t, []any{dir, int64(7), int64(1), res[0].Detail.(*engine.Result).RewrittenBytesCount, int64(0), int64(0)}, res[0].Rows[0].Values)
	_, after := deltaState(t, dir)
	assert.Equal(t, rows, after)
}

// TestDeltaOptimizeWhereData runs OPTIMIZE WHERE on a data column, as
// rewrite --delta --where does: of the golden table's seven files (ids
// 0-4, 10-14, …, 40-44, 50-59, 60-65 by Spark's statistics), the five
// whose id ranges may hold 22 <= id < 61 are rewritten into one, the two
// others stay, and the rows are unchanged.
func TestDeltaOptimizeWhereData(t *testing.T) {
	dir := deltaTable(t)
	_, rows := deltaState(t, dir)
	res, err := run(t, "OPTIMIZE delta.`"+dir+"` WHERE id >= 22 AND id < 61 ZORDER BY (id)", procedure.Catalogs{}, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Len(t, res[0].Rows, 1)
	assert.Equal(t, []any{dir, int64(5), int64(1)}, res[0].Rows[0].Values[:3], res[0].NoopReason)
	_, after := deltaState(t, dir)
	assert.Equal(t, rows, after)
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, s.Files, 3, "two untouched files and the rewritten one")
	var kept []string
	for _, a := range s.Files {
		kept = append(kept, a.Path[:len("part-00000-ca2d0b26")])
	}
	assert.Subset(t, kept, []string{"part-00000-ca2d0b26", "part-00000-c92cba9e"}, "the files of ids 0-4 and 10-14")
}

// TestDeltaOptimizeUnwritableRefusedFirst names, in the second statement,
// a table whose protocol asks for a writer feature this engine does not
// honour: the script is refused before its first statement runs.
func TestDeltaOptimizeUnwritableRefusedFirst(t *testing.T) {
	dir, odd := deltaTable(t), deltaTable(t)
	tbl, err := delta.OpenLocal(odd)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	proto := &delta.Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{"appendOnlyButNewer"}}
	require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, []delta.Action{delta.NewCommitInfo("UPGRADE PROTOCOL", nil, s.Version, nil), {Protocol: proto}}))

	_, err = run(t, "VACUUM '"+dir+"';\nOPTIMIZE delta.`"+odd+"` ZORDER BY (id)", procedure.Catalogs{}, procedure.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "statement 2 (line 2")
	assert.Contains(t, err.Error(), "appendOnlyButNewer")
	n, _ := deltaState(t, dir)
	assert.Equal(t, 14, n, "the VACUUM before did not run")

	// A dry run writes nothing, so it may plan the table.
	res, err := run(t, "OPTIMIZE delta.`"+odd+"` ZORDER BY (id)", procedure.Catalogs{}, procedure.Options{DryRun: true})
	require.NoError(t, err)
	assert.True(t, res[0].DryRun)
}

// TestDeltaOptimizePlannedOnce checks an OPTIMIZE when the script is
// prepared and runs what it planned then: the rewrite is planned once.
// When an earlier statement of the script changed the table, the
// statement is planned again on the table as it is.
func TestDeltaOptimizePlannedOnce(t *testing.T) {
	dir := deltaTable(t)
	_, rows := deltaState(t, dir)
	var log logCount
	opts := procedure.Options{Logger: slog.New(&log)}
	res, err := run(t, "OPTIMIZE delta.`"+dir+"` ZORDER BY (id)", procedure.Catalogs{}, opts)
	require.NoError(t, err)
	assert.Equal(t, int64(7), res[0].Rows[0].Values[1])
	assert.Equal(t, 1, log.count("rewrite planned"), "planned once, when the script was prepared")

	// The first OPTIMIZE folds the files; the second, planned on the
	// table as the first left it, has nothing left to do.
	dir = deltaTable(t)
	res, err = run(t, "OPTIMIZE delta.`"+dir+"`;\nOPTIMIZE delta.`"+dir+"`", procedure.Catalogs{}, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, int64(7), res[0].Rows[0].Values[1])
	assert.Equal(t, int64(0), res[1].Rows[0].Values[1])
	assert.NotEmpty(t, res[1].NoopReason)
	_, after := deltaState(t, dir)
	assert.Equal(t, rows, after)
}

// logCount counts log records by message.
type logCount struct {
	mu   sync.Mutex
	msgs map[string]int
}

func (l *logCount) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCount) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msgs == nil {
		l.msgs = map[string]int{}
	}
	l.msgs[r.Message]++
	return nil
}
func (l *logCount) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCount) WithGroup(string) slog.Handler      { return l }
func (l *logCount) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msgs[msg]
}
