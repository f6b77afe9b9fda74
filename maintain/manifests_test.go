package maintain_test

import (
	"testing"

	"github.com/geocompact/geocompact/maintain"
)

func TestRewriteManifests(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 1000, 12)
	rows, files := liveRows(t, load(t, cat, name))
	res, err := maintain.RewriteManifests(t.Context(), cat, name, maintain.ManifestsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ManifestsBefore != 12 || res.ManifestsAfter != 1 || res.RewrittenManifestsCount != 12 || res.AddedManifestsCount != 1 {
		t.Fatalf("manifests %d -> %d (rewritten %d, added %d), want 12 -> 1", res.ManifestsBefore, res.ManifestsAfter, res.RewrittenManifestsCount, res.AddedManifestsCount)
	}
	tbl := load(t, cat, name)
	if tbl.CurrentSnapshot().SnapshotID != res.SnapshotID || tbl.CurrentSnapshot().Summary.Operation != "replace" {
		t.Errorf("current snapshot %d (%s), want the replace %d", tbl.CurrentSnapshot().SnapshotID, tbl.CurrentSnapshot().Summary.Operation, res.SnapshotID)
	}
	if r, f := liveRows(t, tbl); r != rows || f != files {
		t.Errorf("after: %d rows in %d files, want %d in %d", r, f, rows, files)
	}
	again, err := maintain.RewriteManifests(t.Context(), cat, name, maintain.ManifestsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if again.NoopReason == "" || again.ManifestsAfter != 1 {
		t.Errorf("second rewrite: %+v, want a no-op", again)
	}
}
