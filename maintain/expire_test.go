package maintain_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/geocompact/geocompact/maintain"
)

func TestExpireAfterRewriteFreesReplacedFiles(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 2000, 20)
	tbl := load(t, cat, name)
	rowsBefore, _ := liveRows(t, tbl)
	replaced := binpackAll(t, cat, name)
	if len(replaced) != 20 {
		t.Fatalf("replaced %d files, want 20", len(replaced))
	}
	dir := tableDir(t, tbl)
	before := listFiles(t, dir)

	cfg := maintain.ExpireConfig{OlderThan: 0, RetainLast: 1, Force: true}
	res, err := maintain.Expire(t.Context(), cat, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	after := listFiles(t, dir)
	tbl = load(t, cat, name)

	if got := len(tbl.Metadata().Snapshots()); got != 1 || res.RetainedSnapshots != 1 {
		t.Fatalf("snapshots after = %d (result %d), want 1", got, res.RetainedSnapshots)
	}
	if len(res.ExpiredSnapshots) != 20 {
		t.Errorf("expired %d snapshots, want the 20 appends (the replace is kept)", len(res.ExpiredSnapshots))
	}
	// Every replaced data file is reported and gone; nothing else of the
	// data directory is.
	if res.DeletedDataFilesCount != len(replaced) {
		t.Errorf("deleted_data_files_count = %d, want %d", res.DeletedDataFilesCount, len(replaced))
	}
	var replacedBytes int64
	for p, n := range replaced {
		replacedBytes += n
		if _, ok := after[p]; ok {
			t.Errorf("replaced file %s still on disk", p)
		}
	}
	// The files that disappeared are exactly the reported ones, and the
	// bytes they held are the reported bytes.
	var gone []string
	var goneBytes int64
	for p, n := range before {
		if _, ok := after[p]; !ok {
			gone = append(gone, p)
			goneBytes += n
		}
	}
	var reported []string
	var dataBytes int64
	for _, f := range res.Files {
		reported = append(reported, filepath.Clean(trimFileScheme(f.Path)))
		if f.Kind == maintain.KindData {
			dataBytes += f.Bytes
		}
	}
	slices.Sort(gone)
	slices.Sort(reported)
	if d := cmp.Diff(reported, gone); d != "" {
		t.Errorf("files removed differ from files reported (-reported +gone):\n%s", d)
	}
	if goneBytes != res.FreedBytes {
		t.Errorf("bytes removed from disk = %d, reported %d", goneBytes, res.FreedBytes)
	}
	if dataBytes != replacedBytes {
		t.Errorf("data bytes freed = %d, want the replaced files' %d", dataBytes, replacedBytes)
	}
	// The live file and the rows are intact.
	rowsAfter, files := liveRows(t, tbl)
	if rowsAfter != rowsBefore || files != 1 {
		t.Errorf("after expiry: %d rows in %d files, want %d rows in 1", rowsAfter, files, rowsBefore)
	}
}

func TestExpireDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 1000, 10)
	binpackAll(t, cat, name)
	tbl := load(t, cat, name)
	dir := tableDir(t, tbl)
	filesBefore, snapsBefore := listFiles(t, dir), snapshotIDs(tbl)

	dry, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(filesBefore, listFiles(t, dir)); d != "" {
		t.Fatalf("dry run changed files:\n%s", d)
	}
	if d := cmp.Diff(snapsBefore, snapshotIDs(load(t, cat, name))); d != "" {
		t.Fatalf("dry run changed snapshots:\n%s", d)
	}
	if len(dry.ExpiredSnapshots) != 10 || dry.DeletedDataFilesCount != 10 || !dry.DryRun {
		t.Fatalf("dry run reports %d snapshots, %d data files (dry_run=%v); want 10 and 10", len(dry.ExpiredSnapshots), dry.DeletedDataFilesCount, dry.DryRun)
	}
	// The real run does what the dry run said.
	real, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(dry.Files, real.Files); d != "" {
		t.Errorf("real run freed other files than the dry run said:\n%s", d)
	}
}

func TestExpireKeepsReferencedSnapshotFiles(t *testing.T) {
	t.Parallel()
	for _, refType := range []table.RefType{table.TagRef, table.BranchRef} {
		t.Run(string(refType), func(t *testing.T) {
			const name = "t.x"
			cat := fragmented(t, name, 1000, 10)
			tbl := load(t, cat, name)
			// Reference a middle snapshot: its files and its own, older
			// files must all survive.
			snaps := tbl.Metadata().Snapshots()
			ref := snaps[5].SnapshotID
			createRef(t, cat, name, "keep", ref, refType)
			replaced := binpackAll(t, cat, name)

			res, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true})
			if err != nil {
				t.Fatal(err)
			}
			on := listFiles(t, tableDir(t, tbl))
			kept := 0
			for p := range replaced {
				if _, ok := on[p]; ok {
					kept++
				}
			}
			// The referenced snapshot reaches the files of the first six
			// appends; the other four are freed.
			if kept != 6 || res.DeletedDataFilesCount != 4 {
				t.Errorf("kept %d of the replaced files, freed %d; want 6 kept (the %s's) and 4 freed", kept, res.DeletedDataFilesCount, refType)
			}
			tbl = load(t, cat, name)
			if tbl.Metadata().SnapshotByID(ref) == nil {
				t.Errorf("referenced snapshot %d was expired", ref)
			}
			scan := tbl.Scan(table.WithSnapshotID(ref))
			tasks, err := scan.PlanFiles(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range tasks {
				if _, ok := on[trimFileScheme(task.File.FilePath())]; !ok {
					t.Errorf("file %s of the %s's snapshot is gone", task.File.FilePath(), refType)
				}
			}
		})
	}
}

func TestExpireRefusesBelowFloor(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	snaps := snapshotIDs(load(t, cat, name))
	_, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{OlderThan: 30 * time.Minute, RetainLast: 1})
	var re *maintain.RetentionError
	if !errors.As(err, &re) || !errors.Is(err, maintain.ErrRetentionFloor) {
		t.Fatalf("err = %v, want a RetentionError", err)
	}
	if d := cmp.Diff(snaps, snapshotIDs(load(t, cat, name))); d != "" {
		t.Fatalf("refused expiry changed snapshots:\n%s", d)
	}
	// Default age: nothing is 5 days old.
	res, err := maintain.Expire(t.Context(), cat, name, maintain.DefaultExpireConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ExpiredSnapshots) != 0 {
		t.Fatalf("default expiry expired %d fresh snapshots", len(res.ExpiredSnapshots))
	}
}
