package maintain_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
)

func TestRemoveOrphans(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 1000, 10)
	tbl := load(t, cat, name)
	dir := tableDir(t, tbl)
	rows, _ := liveRows(t, tbl)
	// Everything the table references is old too: age alone must not make
	// a referenced file an orphan.
	ageAllFiles(t, dir, 10*24*time.Hour)
	old := filepath.Join(dir, "data", "orphan-old.parquet")
	young := filepath.Join(dir, "data", "orphan-young.parquet")
	// A sibling directory whose name extends the table's, and the
	// warehouse root: outside the table location.
	outside := filepath.Join(dir+"2", "data", "outside.parquet")
	outsideRoot := filepath.Join(filepath.Dir(dir), "loose.parquet")
	plant(t, old, 1234, 5*24*time.Hour)
	plant(t, young, 99, time.Hour)
	plant(t, outside, 10, 30*24*time.Hour)
	plant(t, outsideRoot, 10, 30*24*time.Hour)
	before := listFiles(t, dir)

	dry, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.OrphansConfig{OlderThan: 3 * 24 * time.Hour, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, listFiles(t, dir)); d != "" {
		t.Fatalf("dry run changed files:\n%s", d)
	}
	if len(dry.Files) != 1 || trimFileScheme(dry.Files[0].Path) != old || dry.Bytes != 1234 {
		t.Fatalf("dry run found %+v (%d bytes), want only %s (1234 bytes)", dry.Files, dry.Bytes, old)
	}

	res, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.DefaultOrphansConfig())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(dry.Files, res.Files); d != "" {
		t.Errorf("real run removed other files than the dry run listed:\n%s", d)
	}
	after := listFiles(t, dir)
	if _, ok := after[old]; ok {
		t.Errorf("old orphan %s still there", old)
	}
	if _, ok := after[young]; !ok {
		t.Errorf("young orphan %s was removed", young)
	}
	delete(before, old)
	if d := cmp.Diff(before, after); d != "" {
		t.Errorf("orphan removal touched other files:\n%s", d)
	}
	for _, p := range []string{outside, outsideRoot} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("file outside the table location %s was removed", p)
		}
	}
	if got, _ := liveRows(t, load(t, cat, name)); got != rows {
		t.Errorf("rows after orphan removal = %d, want %d", got, rows)
	}
}

func TestRemoveOrphansRefusesBelowFloor(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 2)
	dir := tableDir(t, load(t, cat, name))
	p := filepath.Join(dir, "data", "orphan.parquet")
	plant(t, p, 10, 2*time.Hour)
	_, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.OrphansConfig{OlderThan: 10 * time.Minute})
	if !errors.Is(err, maintain.ErrRetentionFloor) {
		t.Fatalf("err = %v, want ErrRetentionFloor", err)
	}
	if _, ok := listFiles(t, dir)[p]; !ok {
		t.Fatal("refused run removed the orphan")
	}
	res, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.OrphansConfig{OlderThan: 10 * time.Minute, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 {
		t.Fatalf("forced run removed %d files, want the orphan", len(res.Files))
	}
}

// TestRemoveOrphansLocation checks that Location narrows the listing to a
// directory of the table and that one outside the table is refused.
func TestRemoveOrphansLocation(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 2)
	tbl := load(t, cat, name)
	dir := tableDir(t, tbl)
	inData := filepath.Join(dir, "data", "orphan.parquet")
	inMeta := filepath.Join(dir, "metadata", "orphan.avro")
	plant(t, inData, 10, 5*24*time.Hour)
	plant(t, inMeta, 10, 5*24*time.Hour)

	res, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.OrphansConfig{OlderThan: 3 * 24 * time.Hour, DryRun: true, Location: tbl.Location() + "/metadata/"})
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	assert.Equal(t, inMeta, trimFileScheme(res.Files[0].Path))

	res, err = maintain.RemoveOrphans(t.Context(), cat, name, maintain.OrphansConfig{OlderThan: 3 * 24 * time.Hour, Location: filepath.Join(dir, "data")})
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	assert.Equal(t, inData, trimFileScheme(res.Files[0].Path))
	assert.NoFileExists(t, inData)
	assert.FileExists(t, inMeta)

	for _, outside := range []string{filepath.Dir(dir), dir + "2"} {
		_, err = maintain.RemoveOrphans(t.Context(), cat, name, maintain.OrphansConfig{OlderThan: 3 * 24 * time.Hour, Location: outside})
		require.Error(t, err, outside)
		assert.Contains(t, err.Error(), "outside the table location")
	}
	assert.FileExists(t, inMeta)
}

// TestRemoveOrphansKeepsChecksumsOfLiveFiles checks that the checksum file
// Hadoop's local file system writes beside each file (".NAME.crc", as
// Spark leaves next to its data and delete files) is kept while NAME is
// live, and goes with NAME when NAME is an orphan.
func TestRemoveOrphansKeepsChecksumsOfLiveFiles(t *testing.T) {
	t.Parallel()
	const name = "t.crc"
	cat := fragmented(t, name, 500, 3)
	tbl := load(t, cat, name)
	dir := tableDir(t, tbl)
	var live string
	for p := range listFiles(t, filepath.Join(dir, "data")) {
		live = p // every data file of a fresh table is live
	}
	require.NotEmpty(t, live)
	liveCRC := filepath.Join(filepath.Dir(live), "."+filepath.Base(live)+".crc")
	stray := filepath.Join(dir, "data", "stray.parquet")
	strayCRC := filepath.Join(dir, "data", ".stray.parquet.crc")
	plant(t, liveCRC, 12, 5*24*time.Hour)
	plant(t, stray, 100, 5*24*time.Hour)
	plant(t, strayCRC, 12, 5*24*time.Hour)

	res, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.DefaultOrphansConfig())
	require.NoError(t, err)
	var removed []string
	for _, f := range res.Files {
		removed = append(removed, trimFileScheme(f.Path))
	}
	assert.ElementsMatch(t, []string{stray, strayCRC}, removed)
	_, err = os.Stat(liveCRC)
	assert.NoError(t, err, "the live file's checksum was removed")
	_, err = os.Stat(strayCRC)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the orphan's checksum stayed")
}
