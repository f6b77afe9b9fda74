package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/geocompact/geocompact/table"
)

func mustOptions(t testing.TB, kv map[string]string) Options {
	t.Helper()
	o, err := optionsOf(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func files(part string, sizes ...int64) []table.PlanFile {
	var fs []table.PlanFile
	for i, s := range sizes {
		fs = append(fs, table.PlanFile{Path: fmt.Sprintf("%s/f%d", part, i), Size: s, Records: s / 10, Partition: part})
	}
	return fs
}

func TestParseOptionsDefaults(t *testing.T) {
	o := mustOptions(t, nil)
	if o.TargetFileSize != 512<<20 || o.MinFileSize != 384<<20 || o.MaxFileSize != (512<<20)*9/5 || o.MinInputFiles != 5 {
		t.Fatalf("defaults %+v", o)
	}
	o, err := optionsOf(map[string]string{OptTargetFileSize: "1000"}, map[string]string{"write.target-file-size-bytes": "5000"})
	if err != nil || o.TargetFileSize != 1000 || o.MinFileSize != 750 || o.MaxFileSize != 1800 {
		t.Fatalf("%+v %v", o, err)
	}
	o, _ = optionsOf(nil, map[string]string{"write.target-file-size-bytes": "5000"})
	if o.TargetFileSize != 5000 {
		t.Fatalf("table property ignored: %d", o.TargetFileSize)
	}
}

func TestParseOptionsErrors(t *testing.T) {
	for _, tc := range []struct {
		kv   map[string]string
		want string
	}{
		{map[string]string{"bogus": "1"}, `unknown option "bogus"; valid options: `},
		{map[string]string{OptMinInputFiles: "x"}, OptMinInputFiles + `="x"`},
		{map[string]string{OptRewriteAll: "yes please"}, OptRewriteAll},
		{map[string]string{OptRewriteJobOrder: "random"}, OptRewriteJobOrder},
		{map[string]string{OptTargetFileSize: "100", OptMinFileSize: "200"}, OptMinFileSize},
	} {
		_, err := optionsOf(tc.kv, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("optionsOf(%v) = %v, want an error containing %q", tc.kv, err, tc.want)
		}
	}
}

func TestPlanBands(t *testing.T) {
	o := mustOptions(t, map[string]string{OptTargetFileSize: "1000", OptMinInputFiles: "2"})
	// 100 and 200 are small, 900 and 1500 within [750, 1800], 5000 too large.
	p := o.Plan(files("", 100, 200, 900, 1500, 5000))
	if len(p.Groups) != 1 || len(p.Groups[0].Files) != 3 {
		t.Fatalf("groups %+v", p.Groups)
	}
	if len(p.Skipped) != 2 || !strings.Contains(p.Skipped[0].Reason, "within") {
		t.Fatalf("skipped %+v", p.Skipped)
	}
	if got := p.Groups[0].OutputFiles; got != 5 {
		t.Fatalf("5300 bytes at target 1000 -> %d output files, want 5", got)
	}
}

// TestOutputFilesFollowsIceberg checks the file count of a group against
// Iceberg's rule (SizeBasedFileRewriter.numOutputFiles): a remainder above
// min-file-size gets a file of its own; a smaller one is spread over the
// other files only when that leaves them under 1.1x the target (and under
// the target plus half the distance to max-file-size), else it keeps its
// own file too.
func TestOutputFilesFollowsIceberg(t *testing.T) {
	o := mustOptions(t, map[string]string{OptTargetFileSize: "1000"}) // min 750, max 1800
	for in, want := range map[int64]int{
		999:  1,
		1000: 1,
		1050: 1, // remainder 50 spread: 1050 < 1100
		1200: 2, // 1200 as one file would be 1.2x the target
		1760: 2, // remainder 760 > min 750 keeps its own file
		2150: 2, // two of 1075
		2400: 3, // two of 1200 would be 1.2x the target
		3600: 4, // three of 1200 would be 1.2x the target
		3300: 4, // three of 1100 is not under 1.1x
		3299: 3,
		5300: 5,
	} {
		assert.Equal(t, want, o.outputFiles(in), "%d bytes at target 1000", in)
	}
	// A max-file-size close to the target lowers the bound below 1.1x:
	// target + (max - target) / 2 = 1040.
	o = mustOptions(t, map[string]string{OptTargetFileSize: "1000", OptMaxFileSize: "1080"})
	assert.Equal(t, 2, o.outputFiles(1050))
	assert.Equal(t, 1, o.outputFiles(1030))
}

func TestPlanSplitsOneLargeFile(t *testing.T) {
	o := mustOptions(t, map[string]string{OptTargetFileSize: "1000"})
	p := o.Plan(files("", 4100))
	if len(p.Groups) != 1 || p.Groups[0].OutputFiles != 4 || !strings.Contains(p.Groups[0].Reason, "split") {
		t.Fatalf("groups %+v", p.Groups)
	}
}

func TestPlanMinInputFilesHint(t *testing.T) {
	o := mustOptions(t, nil)
	p := o.Plan(files("day=2026-01-02", 10, 10, 10, 10))
	if len(p.Groups) != 0 || len(p.Skipped) != 4 {
		t.Fatalf("plan %+v", p)
	}
	for _, want := range []string{"partition day=2026-01-02 has 4 candidate files", "min-input-files=5", "set the option min-input-files=4"} {
		if !strings.Contains(p.Hint, want) {
			t.Fatalf("hint %q lacks %q", p.Hint, want)
		}
	}
}

// TestPlanLoneFileHint: one small file is not compacted alone, whatever
// min-input-files says, so the hint does not suggest it.
func TestPlanLoneFileHint(t *testing.T) {
	o := mustOptions(t, map[string]string{OptMinInputFiles: "2"})
	p := o.Plan(files("day=2026-01-02", 10))
	if len(p.Groups) != 0 {
		t.Fatalf("plan %+v", p)
	}
	if strings.Contains(p.Hint, "min-input-files") || !strings.Contains(p.Hint, "rewrite-all=true") {
		t.Fatalf("hint %q: want rewrite-all, not min-input-files", p.Hint)
	}
}

func TestPlanJobOrderAndCap(t *testing.T) {
	o := mustOptions(t, map[string]string{OptMinInputFiles: "2", OptRewriteJobOrder: "files-desc", OptMaxFilesToRewrite: "3"})
	in := append(files("a", 1, 1), files("b", 1, 1, 1)...)
	p := o.Plan(in)
	if len(p.Groups) != 1 || p.Groups[0].Partition != "b" {
		t.Fatalf("groups %+v, want only b (3 files, first by files-desc)", p.Groups)
	}
	if len(p.Deferred) != 1 || p.Deferred[0].Partition != "a" {
		t.Fatalf("deferred %+v", p.Deferred)
	}
}

// TestPlanProperties checks, on random inputs, that every file lands in
// exactly one group or in Skipped, that no group spans partitions and that
// the plan is deterministic.
func TestPlanProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 60).Draw(t, "files")
		var in []table.PlanFile
		for i := range n {
			in = append(in, table.PlanFile{
				Path:        fmt.Sprintf("f%d", i),
				Size:        rapid.Int64Range(1, 5000).Draw(t, "size"),
				Partition:   fmt.Sprintf("p%d", rapid.IntRange(0, 3).Draw(t, "part")),
				DeleteFiles: rapid.IntRange(0, 2).Draw(t, "deletes"),
			})
		}
		kv := map[string]string{
			OptTargetFileSize:    fmt.Sprint(rapid.Int64Range(100, 3000).Draw(t, "target")),
			OptMinInputFiles:     fmt.Sprint(rapid.IntRange(1, 6).Draw(t, "min-input")),
			OptMaxFileGroupSize:  fmt.Sprint(rapid.Int64Range(1, 20000).Draw(t, "group")),
			OptRewriteAll:        fmt.Sprint(rapid.Bool().Draw(t, "all")),
			OptMaxFilesToRewrite: fmt.Sprint(rapid.IntRange(1, 80).Draw(t, "cap")),
		}
		o, err := optionsOf(kv, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := o.Plan(in)
		seen := map[string]int{}
		for _, g := range p.Groups {
			for _, f := range g.Files {
				seen[f.Path]++
				if f.Partition != g.Partition {
					t.Fatalf("group %s holds a file of %s", g.Partition, f.Partition)
				}
			}
		}
		for _, s := range p.Skipped {
			seen[s.Path]++
		}
		for _, f := range in {
			if seen[f.Path] != 1 {
				t.Fatalf("file %s appears %d times", f.Path, seen[f.Path])
			}
		}
		again := o.Plan(slices.Clone(in))
		if fmt.Sprint(again) != fmt.Sprint(p) {
			t.Fatal("the same input gave a different plan")
		}
	})
}

func ExampleOptions_Plan() {
	o, _ := optionsOf(map[string]string{OptTargetFileSize: "1000", OptMinInputFiles: "3"}, nil)
	p := o.Plan([]table.PlanFile{
		{Path: "a", Size: 300}, {Path: "b", Size: 400}, {Path: "c", Size: 350},
		{Path: "d", Size: 950}, // within [750, 1800]: left alone
	})
	for _, g := range p.Groups {
		fmt.Printf("group of %d files, %d bytes -> %d file(s): %s\n", len(g.Files), g.Bytes, g.OutputFiles, g.Reason)
	}
	for _, s := range p.Skipped {
		fmt.Printf("skip %s: %s\n", s.Path, s.Reason)
	}
	// Output:
	// group of 3 files, 1050 bytes -> 1 file(s): 3 files >= min-input-files=3
	// skip d: size 950 B is within [min-file-size-bytes=750 B, max-file-size-bytes=1.8 KiB]
}
