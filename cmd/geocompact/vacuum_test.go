package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

// copyDeltaTable copies golden table name into a temporary directory and
// ages every file by age, as if it had been written that long ago.
func copyDeltaTable(t *testing.T, name string, age time.Duration) string {
	t.Helper()
	src := filepath.Join(testenv.DeltaGolden(t), name)
	_, err := os.Stat(src)
	require.NoError(t, err, "Delta golden table %s", src)
	dst := t.TempDir()
	copyTree(t, src, dst)
	old := time.Now().Add(-age)
	err = filepath.WalkDir(dst, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	require.NoError(t, err)
	return dst
}

// deltaRows counts the live rows of the Delta table at dir.
func deltaRows(t *testing.T, dir string) int64 {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var n int64
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		n += rec.NumRows()
		return nil
	}))
	return n
}

func parquetNames(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	require.NoError(t, err)
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func TestVacuumDelta(t *testing.T) {
	// Seven of the table's fourteen data files were removed in 2023; the
	// copy is aged 30 days, beyond the default 7-day retention.
	dir := copyDeltaTable(t, "basic-with-inserts-deletes-checkpoint", 30*24*time.Hour)
	old := time.Now().Add(-30 * 24 * time.Hour)
	oldOrphan := filepath.Join(dir, "part-99999-crashed-writer.snappy.parquet")
	require.NoError(t, os.WriteFile(oldOrphan, []byte("x"), 0o644))
	require.NoError(t, os.Chtimes(oldOrphan, old, old))
	youngOrphan := filepath.Join(dir, "part-99998-in-flight.snappy.parquet")
	require.NoError(t, os.WriteFile(youngOrphan, []byte("x"), 0o644))
	staged := filepath.Join(dir, "_staging", "keep.parquet")
	require.NoError(t, os.MkdirAll(filepath.Dir(staged), 0o755))
	require.NoError(t, os.WriteFile(staged, []byte("x"), 0o644))
	require.NoError(t, os.Chtimes(staged, old, old))
	rows := deltaRows(t, dir)
	before := parquetNames(t, dir)
	require.Len(t, before, 16)

	r := runCLI(t, "", false, "vacuum", "--delta", dir, "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "dry run: 8 files")
	assert.Contains(t, r.Stdout, "part-99999-crashed-writer.snappy.parquet")
	assert.NotContains(t, r.Stdout, "in-flight")
	assert.Equal(t, before, parquetNames(t, dir), "a dry run deletes nothing")

	r = runCLI(t, "", false, "vacuum", "--delta", dir, "--retain", "1h")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "below the table's delta.deletedFileRetentionDuration of 7d")
	assert.Contains(t, r.Stderr, "--force")
	assert.Equal(t, before, parquetNames(t, dir), "a refused vacuum deletes nothing")

	r = runCLI(t, "", false, "--json", "vacuum", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res delta.VacuumResult
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, 8, res.DeletedCount)
	assert.Equal(t, int64(13), res.Version)
	assert.Equal(t, (7 * 24 * time.Hour).Milliseconds(), res.RetainMillis)
	assert.Len(t, parquetNames(t, dir), 8, "seven live files and the young orphan remain")
	assert.FileExists(t, youngOrphan)
	assert.FileExists(t, staged)
	assert.NoFileExists(t, oldOrphan)
	assert.Equal(t, rows, deltaRows(t, dir), "vacuum never changes what the table reads")

	r = runCLI(t, "", false, "vacuum", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.True(t, strings.HasPrefix(r.Stdout, "nothing to vacuum at version 13"), r.Stdout)

	// With --force, a zero retention takes the young orphan too.
	r = runCLI(t, "", false, "vacuum", "--delta", dir, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NoFileExists(t, youngOrphan)
	assert.Equal(t, rows, deltaRows(t, dir))
}

func TestVacuumDeltaS3(t *testing.T) {
	srv := reliability.UseS3(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	loc := "s3://" + srv.Bucket + "/" + srv.Prefix + "/pings"
	st, err := delta.NewS3Storage(t.Context(), loc)
	require.NoError(t, err)
	src := filepath.Join(testenv.DeltaGolden(t), "basic-with-inserts-deletes-checkpoint")
	require.NoError(t, filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return st.Put(t.Context(), filepath.ToSlash(rel), b)
	}))

	// Just uploaded, every object is young: only a forced zero retention
	// reaches the seven files removed in 2023.
	r := runCLI(t, "", false, "vacuum", "--delta", loc, "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "nothing to vacuum at version 13")
	r = runCLI(t, "", false, "--json", "vacuum", "--delta", loc, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res delta.VacuumResult
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, 7, res.DeletedCount)
	live, err := st.List(t.Context(), "", false)
	require.NoError(t, err)
	assert.Len(t, live, 7, "the seven live data files remain")
}

func TestVacuumDeltaRefusals(t *testing.T) {
	r := runCLI(t, "", false, "vacuum", "--delta", t.TempDir())
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "_delta_log")

	r = runCLI(t, "", false, "vacuum", "--delta", t.TempDir(), "--retain", "soon")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--retain")
}

// TestVacuumDeltaLeftovers: the temporary commit and checkpoint files a
// killed writer left in _delta_log are listed by a dry run, counted and
// deleted by a vacuum once past the retention; a fresh one, which a live
// writer may own, stays even with a forced zero retention.
func TestVacuumDeltaLeftovers(t *testing.T) {
	dir := copyDeltaTable(t, "basic-with-inserts-deletes-checkpoint", 30*24*time.Hour)
	old := time.Now().Add(-30 * 24 * time.Hour)
	logDir := filepath.Join(dir, "_delta_log")
	leftovers := []string{".00000000000000000014.json.tmp-8812", ".00000000000000000020.checkpoint.parquet.tmp-3"}
	for _, name := range leftovers {
		p := filepath.Join(logDir, name)
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o644))
		require.NoError(t, os.Chtimes(p, old, old))
	}
	fresh := filepath.Join(logDir, ".00000000000000000014.json.tmp-9")
	require.NoError(t, os.WriteFile(fresh, []byte("{}"), 0o644))
	rows := deltaRows(t, dir)

	r := runCLI(t, "", false, "vacuum", "--delta", dir, "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "dry run: 9 files")
	assert.Contains(t, r.Stdout, "2 of them temporary files of killed writers")
	for _, name := range leftovers {
		assert.Contains(t, r.Stdout, "_delta_log/"+name)
		assert.FileExists(t, filepath.Join(logDir, name), "a dry run deletes nothing")
	}
	assert.NotContains(t, r.Stdout, filepath.Base(fresh))

	r = runCLI(t, "", false, "--json", "vacuum", "--delta", dir, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res delta.VacuumResult
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, 9, res.DeletedCount)
	assert.Equal(t, 2, res.TempFiles)
	for _, name := range leftovers {
		assert.NoFileExists(t, filepath.Join(logDir, name))
	}
	assert.FileExists(t, fresh, "a fresh temporary file may be a live writer's")
	assert.FileExists(t, filepath.Join(logDir, "00000000000000000013.json"))
	assert.Equal(t, rows, deltaRows(t, dir))
}

// setDeltaConfig commits a metaData action setting the table property key
// to value as another writer might, without geocompact's checks.
func setDeltaConfig(t *testing.T, tbl *delta.Table, key, value string) {
	t.Helper()
	s := deltatest.Snapshot(t, tbl)
	md := *s.Metadata
	md.Configuration = map[string]string{key: value}
	require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, []delta.Action{{MetaData: &md}}))
}

// TestVacuumDeltaRetentionOutOfRange: a retention too long for a duration
// or negative, in the table or on the command line, is refused naming it,
// and nothing is deleted; it never wraps around to a short one.
func TestVacuumDeltaRetentionOutOfRange(t *testing.T) {
	for value, want := range map[string]string{
		"interval 213504 days": "over the maximum of 106751 days",
		"interval -7 days":     "-7 days is negative",
	} {
		t.Run(value, func(t *testing.T) {
			dir := t.TempDir()
			tbl := deltatest.Fragmented(t, dir, 3, 10, deltatest.Options{})
			setDeltaConfig(t, tbl, delta.PropDeletedFileRetention, value)
			orphan := filepath.Join(dir, "orphan.parquet")
			require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(orphan, old, old))
			for _, args := range [][]string{{"vacuum", "--delta", dir}, {"maintain", "--delta", dir}} {
				r := runCLI(t, "", false, args...)
				assert.NotEqual(t, exitOK, r.Code, "%v", args)
				assert.Contains(t, r.Stderr, "delta.deletedFileRetentionDuration", "%v", args)
				assert.Contains(t, r.Stderr, want, "%v", args)
				assert.FileExists(t, orphan, "%v deletes nothing", args)
			}
		})
	}
	dir := t.TempDir()
	deltatest.Fragmented(t, dir, 1, 10, deltatest.Options{})
	for retain, want := range map[string]string{
		"9999999999h":          `"9999999999h" is over the maximum of 36500d`,
		"40000d":               `"40000d" is over the maximum of 36500d`,
		"-1h":                  `"-1h" is negative`,
		"interval 213504 days": "over the maximum of 106751 days",
		"interval -7 days":     "-7 days is negative",
		"interval seven days":  "is not a whole number",
	} {
		r := runCLI(t, "", false, "vacuum", "--delta", dir, "--retain", retain, "--force")
		assert.Equal(t, exitUsage, r.Code, retain)
		assert.Contains(t, r.Stderr, want, retain)
	}
}

// TestVacuumDeltaAbsolutePaths: vacuum --delta on a table whose log names
// its files by absolute file:// URIs deletes none of them, even with no
// retention, and the table reads the same.
func TestVacuumDeltaAbsolutePaths(t *testing.T) {
	dir := t.TempDir()
	tbl := deltatest.Fragmented(t, dir, 4, 10, deltatest.Options{})
	deltatest.AbsolutePaths(t, dir)
	deltatest.Age(t, dir, 30*24*time.Hour)
	rows := deltatest.LiveRows(t, tbl)
	before := parquetNames(t, dir)
	require.Len(t, before, 4)

	r := runCLI(t, "", false, "vacuum", "--delta", dir, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Equal(t, before, parquetNames(t, dir), "every live file is kept")
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))
}
