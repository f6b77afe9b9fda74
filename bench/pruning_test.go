package bench

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/catalogs"
)

// generateSmall builds a clustered points table of rows rows in commits
// files.
func generateSmall(t testing.TB, cat catalog.Catalog, name string, rows int64, commits int) *GenerateResult {
	t.Helper()
	res, err := Generate(t.Context(), cat, GenerateConfig{Table: name, Rows: rows, Commits: commits, Distribution: Clustered, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRunUnsortedCopy(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	gen := generateSmall(t, cat, "b.pings", 4000, 40)
	cfg := Config{
		Table:        "b.pings",
		Layouts:      []Layout{Unsorted},
		WindowConfig: WindowConfig{Count: 30, Seed: 1},
		Options:      map[string]string{engine.OptTargetFileSize: "20000"},
	}
	rep, err := Run(t.Context(), cat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != gen.Rows || rep.SourceFiles != gen.DataFiles || rep.Windows != 30 || rep.TargetFileSize != 20000 {
		t.Fatalf("report rows %d files %d windows %d target %d; want %d, %d, 30, 20000",
			rep.Rows, rep.SourceFiles, rep.Windows, rep.TargetFileSize, gen.Rows, gen.DataFiles)
	}
	lr := rep.Layouts[0]
	if lr.Rows != gen.Rows || lr.Files < 2 || lr.Files >= gen.DataFiles {
		t.Fatalf("unsorted copy: %d rows in %d files; want %d rows cut into fewer than %d files", lr.Rows, lr.Files, gen.Rows, gen.DataFiles)
	}
	if len(lr.PerWindow) != 30 || len(lr.FileBounds) != lr.Files {
		t.Fatalf("%d window results and %d file bounds", len(lr.PerWindow), len(lr.FileBounds))
	}
	for i, w := range lr.PerWindow {
		// The bound by an even share can exceed the files holding matches
		// where files are uneven; the bound by the largest file cannot.
		if w.Planned < w.FilesWithMatches || int64(w.FilesWithMatches) < lowerBound(w.Matching, lr.MaxRowsPerFile) || w.LowerBound < lowerBound(w.Matching, lr.MaxRowsPerFile) {
			t.Fatalf("window %d: planned %d, with matches %d, lower bound %d: want planned >= with matches >= bound by the largest file <= bound",
				i, w.Planned, w.FilesWithMatches, w.LowerBound)
		}
		if w.Matching == 0 {
			t.Fatalf("window %d is centred on a row but matches none", i)
		}
	}
	// The scratch table is gone, and so are its files.
	ident, _ := catalogs.ParseIdentifier(ScratchName("b.pings", Unsorted))
	if _, err := cat.LoadTable(t.Context(), ident); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("scratch table still loads: %v", err)
	}
	src, err := cat.LoadTable(t.Context(), []string{"b", "pings"})
	if err != nil {
		t.Fatal(err)
	}
	scratchDir := strings.TrimPrefix(src.Location(), "file://") + "__bench_unsorted"
	if _, err := os.Stat(scratchDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("scratch table directory %s remains (%v)", scratchDir, err)
	}

	// Kept, it stays; a second run replaces it.
	cfg.Keep = true
	for range 2 {
		rep, err = Run(t.Context(), cat, cfg)
		if err != nil {
			t.Fatal(err)
		}
	}
	if rep.Layouts[0].ScratchTable != ScratchName("b.pings", Unsorted) {
		t.Fatalf("kept scratch table %q", rep.Layouts[0].ScratchTable)
	}
	kept, err := cat.LoadTable(t.Context(), ident)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(scratchDir); err != nil {
		t.Fatalf("kept scratch table has no directory at %s: %v", scratchDir, err)
	}
	if len(kept.Metadata().Snapshots()) != 1 {
		t.Fatalf("kept scratch table has %d snapshots, want the one copy", len(kept.Metadata().Snapshots()))
	}
}

func TestScratchNeverReplacesOtherTables(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	generateSmall(t, cat, "b.src", 200, 2)
	// A user table that happens to carry the scratch name.
	generateSmall(t, cat, ScratchName("b.src", Unsorted), 10, 1)
	_, err := Run(t.Context(), cat, Config{Table: "b.src", Layouts: []Layout{Unsorted}, WindowConfig: WindowConfig{Count: 3}})
	if err == nil {
		t.Fatal("Run replaced a table it did not create")
	}
	ident, _ := catalogs.ParseIdentifier(ScratchName("b.src", Unsorted))
	if tbl, err := cat.LoadTable(t.Context(), ident); err != nil || tbl.CurrentSnapshot() == nil {
		t.Fatalf("the user table is damaged: %v", err)
	}
}

func TestWriteSVG(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	generateSmall(t, cat, "b.pic", 3000, 30)
	rep, err := Run(t.Context(), cat, Config{
		Table: "b.pic", Layouts: []Layout{Unsorted}, WindowConfig: WindowConfig{Count: 40, Seed: 2},
		Options: map[string]string{engine.OptTargetFileSize: "15000"},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths, err := WriteSVGs(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "unsorted.svg" {
		t.Fatalf("wrote %v", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	classes := svgRectClasses(t, b)
	if got, want := classes["file"], rep.Layouts[0].Files; got != want {
		t.Fatalf("%d file rectangles, want one per file (%d)", got, want)
	}
	if got := classes["window"]; got != svgMaxWindows {
		t.Fatalf("%d window rectangles, want a sample of %d", got, svgMaxWindows)
	}
	if !bytes.Contains(b, []byte("unsorted — ")) {
		t.Fatal("title does not name the layout")
	}
}

// svgRectClasses decodes an SVG with encoding/xml, failing on malformed
// XML, and counts its rect elements by class.
func svgRectClasses(t testing.TB, b []byte) map[string]int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	counts := map[string]int{}
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		if se.Name.Local != "rect" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local == "class" {
				counts[a.Value]++
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return counts
}
