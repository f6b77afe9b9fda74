package reliability

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// ReferencedFiles returns every file tbl's metadata names: the current and
// previous metadata files, and for every snapshot its manifest list, its
// manifests and the data and delete files live in them.
func ReferencedFiles(ctx context.Context, tbl *table.Table) (map[string]bool, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	ref := map[string]bool{tbl.MetadataLocation(): true}
	for e := range meta.PreviousFiles() {
		ref[e.MetadataFile] = true
	}
	for _, s := range meta.Snapshots() {
		ref[s.ManifestList] = true
		mans, err := s.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: manifest list %s: %w", s.SnapshotID, s.ManifestList, err)
		}
		for _, m := range mans {
			ref[m.FilePath()] = true
			entries, err := m.FetchEntries(fsys, true)
			if err != nil {
				return nil, fmt.Errorf("snapshot %d: manifest %s: %w", s.SnapshotID, m.FilePath(), err)
			}
			for _, e := range entries {
				ref[e.DataFile().FilePath()] = true
			}
		}
	}
	return ref, nil
}

// MissingFiles returns the referenced files that do not exist: any entry
// means a committed snapshot is incomplete.
func MissingFiles(ctx context.Context, tbl *table.Table) ([]string, error) {
	ref, err := ReferencedFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	var missing []string
	for p := range ref {
		f, err := fsys.Open(p)
		if err != nil {
			missing = append(missing, p)
			continue
		}
		f.Close()
	}
	slices.Sort(missing)
	return missing, nil
}

// ListFiles returns every file under tbl's location with its size.
func ListFiles(ctx context.Context, tbl *table.Table) (map[string]int64, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	l, ok := fsys.(iceio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("file system %T cannot list", fsys)
	}
	files := map[string]int64{}
	err = l.WalkDir(tbl.Location(), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files[normalize(path)] = info.Size()
		return nil
	})
	return files, err
}

// Unreferenced returns the files under tbl's location that its metadata
// does not name, sorted.
func Unreferenced(ctx context.Context, tbl *table.Table) ([]string, error) {
	ref, err := ReferencedFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	all, err := ListFiles(ctx, tbl)
	if err != nil {
		return nil, err
	}
	refs := make(map[string]bool, len(ref))
	for p := range ref {
		refs[normalize(p)] = true
	}
	var out []string
	for p := range all {
		if !refs[normalize(p)] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// normalize maps the spellings of one local file ("file:///x", "file:/x",
// "/x") to one; object store URIs are left as they are.
func normalize(p string) string {
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(p, "file:"); ok {
		return rest
	}
	return p
}

// Normalize is normalize for callers comparing paths from different
// sources.
func Normalize(p string) string { return normalize(p) }

// LocalLeftovers lists what geocompact left in dir, a temporary directory
// its processes spilled or staged in: the entries named "geocompact-…".
func LocalLeftovers(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var left []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "geocompact-") {
			left = append(left, e.Name())
		}
	}
	return left, nil
}
