package engine

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/cuts"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
)

// simRowBytes is the size a simulated row takes in a file.
const simRowBytes = 40

// simFile is a simulated data file: its rows and the plan's view of it.
type simFile struct {
	rows []spatial.Bound
	pf   table.PlanFile
}

func newSimFile(name string, rows []spatial.Bound) simFile {
	b := spatial.EmptyBound()
	for _, r := range rows {
		b = b.Extend(r)
	}
	return simFile{rows: rows, pf: table.PlanFile{Path: name, Size: int64(len(rows)) * simRowBytes, Records: int64(len(rows)), Bound: b, HasBound: true}}
}

// sortedFiles orders rows along the Hilbert curve over their extent and
// cuts them into files of equal row counts, as a sorted rewrite does.
func sortedFiles(t testing.TB, prefix string, rows []spatial.Bound, files int) []simFile {
	t.Helper()
	o, err := cluster.CurveOrder("hilbert")
	require.NoError(t, err)
	rec := cluster.BoundsBatch(rows)
	defer rec.Release()
	s, err := cluster.NewSorter(o, rec.Schema(), cluster.SortOptions{Files: files})
	require.NoError(t, err)
	perm, err := s.Permutation([]arrow.RecordBatch{rec})
	require.NoError(t, err)
	out := make([]simFile, files)
	n := len(perm)
	for f := range out {
		part := make([]spatial.Bound, 0, n/files+1)
		for _, r := range perm[f*n/files : (f+1)*n/files] {
			part = append(part, rows[r])
		}
		out[f] = newSimFile(fmt.Sprintf("%s-%03d", prefix, f), part)
	}
	return out
}

// windowCutFiles orders rows along the Hilbert curve over their extent
// and cuts them into files for windows of area f of the extent, as the
// engine cuts a group with a CutWindow (cuts.Blocks.Window).
func windowCutFiles(t testing.TB, prefix string, rows []spatial.Bound, files int, f float64) []simFile {
	t.Helper()
	sorted := sortedFiles(t, prefix, rows, 1)[0].rows
	bb := cuts.NewBlocks(int64(len(sorted)) / int64(files*cuts.BlocksPerCut))
	rec := cluster.BoundsBatch(sorted)
	bb.Add(rec, -1, [4]int{0, 1, 2, 3})
	rec.Release()
	extent := spatial.EmptyBound()
	for _, r := range sorted {
		extent = extent.Extend(r)
	}
	side := math.Sqrt(f)
	var out []simFile
	at := 0
	for k, n := range bb.Window(files, side*extent.Width(), side*extent.Height()) {
		out = append(out, newSimFile(fmt.Sprintf("%s-%03d", prefix, k), sorted[at:at+int(n)]))
		at += int(n)
	}
	return out
}

// simRewrite applies a plan to files: each group's rows are sorted
// together and cut into the group's output files (for its CutWindow, if
// set); the other files stay. Output files are named after round, so
// that files of later rounds do not take earlier names.
func simRewrite(t testing.TB, files []simFile, p *Plan, round int) []simFile {
	t.Helper()
	byPath := map[string]simFile{}
	for _, f := range files {
		byPath[f.pf.Path] = f
	}
	var out []simFile
	for gi, g := range p.Groups {
		var rows []spatial.Bound
		for _, f := range g.Files {
			rows = append(rows, byPath[f.Path].rows...)
			delete(byPath, f.Path)
		}
		prefix := fmt.Sprintf("r%d-g%d", round, gi)
		if g.CutWindow > 0 {
			out = append(out, windowCutFiles(t, prefix, rows, g.OutputFiles, g.CutWindow)...)
			continue
		}
		out = append(out, sortedFiles(t, prefix, rows, g.OutputFiles)...)
	}
	for _, f := range files {
		if _, ok := byPath[f.pf.Path]; ok {
			out = append(out, f)
		}
	}
	return out
}

// meanPlanned is the mean number of files whose box a window intersects.
func meanPlanned(files []simFile, windows []spatial.Bound) float64 {
	boxes := make([]spatial.Bound, len(files))
	for i, f := range files {
		boxes[i] = f.pf.Bound
	}
	sum := 0
	for _, n := range cluster.CountPlanned(boxes, windows) {
		sum += n
	}
	return float64(sum) / float64(len(windows))
}

func planFilesOf(files []simFile) []table.PlanFile {
	out := make([]table.PlanFile, len(files))
	for i, f := range files {
		out[i] = f.pf
	}
	return out
}
