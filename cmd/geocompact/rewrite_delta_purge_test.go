package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
)

// deltaFiles returns the live files of the Delta table at dir: their paths
// with a deletion vector and without.
func deltaFiles(t *testing.T, dir string) (withDV, without []string) {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	for _, f := range s.Files {
		if f.DeletionVector != nil {
			withDV = append(withDV, f.Path)
		} else {
			without = append(without, f.Path)
		}
	}
	return withDV, without
}

// TestRewriteDeltaPurgeDeletionVectors purges a copy of a golden table
// whose files carry deletion vectors: every such file is rewritten, none
// other is, the live rows are the same and no live file carries a
// vector; a second purge finds nothing to do. REORG TABLE … APPLY (PURGE)
// in sql does the same.
func TestRewriteDeltaPurgeDeletionVectors(t *testing.T) {
	t.Parallel()
	for _, form := range []string{"rewrite", "sql"} {
		t.Run(form, func(t *testing.T) {
			t.Parallel()
			dir := copyDeltaTable(t, "dv-partitioned-with-checkpoint", time.Hour)
			rows := deltaRows(t, dir)
			dv, plain := deltaFiles(t, dir)
			require.NotEmpty(t, dv, "the golden table has deletion vectors")
			require.NotEmpty(t, plain, "the golden table has files without them")

			var r cliResult
			if form == "rewrite" {
				r = runCLI(t, "", false, "--json", "rewrite", "--delta", dir, "--purge-deletion-vectors")
			} else {
				r = runCLI(t, "", false, "--json", "sql", "REORG TABLE delta.`"+dir+"` APPLY (PURGE)")
			}
			require.Equal(t, exitOK, r.Code, r.Stderr)
			assert.Regexp(t, `"rewritten_data_files_count": ?`+strconv.Itoa(len(dv))+`[,\n}]`, r.Stdout)

			assert.Equal(t, rows, deltaRows(t, dir), "the live rows changed")
			logs, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
			require.NoError(t, err)
			slices.Sort(logs)
			last, err := os.ReadFile(logs[len(logs)-1])
			require.NoError(t, err)
			assert.Contains(t, string(last), `"operation":"REORG"`, "the commit is recorded as Delta's REORG")
			assert.Contains(t, string(last), `"applyPurge":"true"`)
			assert.NotContains(t, string(last), `"dataChange":true`)
			after, kept := deltaFiles(t, dir)
			assert.Empty(t, after, "a live file still carries a deletion vector")
			assert.Subset(t, kept, plain, "a file without a deletion vector was rewritten")

			r = runCLI(t, "", false, "--json", "rewrite", "--delta", dir, "--purge-deletion-vectors")
			require.Equal(t, exitOK, r.Code, r.Stderr)
			var res struct {
				Rewritten int    `json:"rewritten_data_files_count"`
				Hint      string `json:"hint"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
			assert.Zero(t, res.Rewritten)
		})
	}
}

// TestRewritePurgeRefusals: the purge on an Iceberg table and with
// rewrite-all are usage errors, named, with nothing written.
func TestRewritePurgeRefusals(t *testing.T) {
	t.Parallel()
	dir := copyDeltaTable(t, "dv-partitioned-with-checkpoint", time.Hour)
	before := parquetNames(t, dir)
	r := runCLI(t, t.TempDir(), false, "rewrite", "--table", "a.b", "--purge-deletion-vectors")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--purge-deletion-vectors applies to a Delta table")
	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--purge-deletion-vectors", "--option", "rewrite-all=true")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "rewrite-all rewrites every file, a purge only the files that carry deletes")
	r = runCLI(t, "", false, "sql", "REORG TABLE delta.`"+dir+"` APPLY (UPGRADE UNIFORM(ICEBERG_COMPAT_VERSION = 2))")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "UPGRADE UNIFORM")
	assert.Equal(t, before, parquetNames(t, dir))
}
