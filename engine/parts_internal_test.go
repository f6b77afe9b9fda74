package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/table"
)

// TestBinpackParts checks how a bin-packed group's files are cut into
// parts: consecutive runs, every file in exactly one, one part a lane
// (fewer when the files or the output files are fewer), each ending where
// its rows are nearest an equal share; and no parts at all for what is
// written as one stream.
func TestBinpackParts(t *testing.T) {
	files := func(records ...int64) []table.PlanFile {
		out := make([]table.PlanFile, len(records))
		for i, r := range records {
			out[i] = table.PlanFile{Path: fmt.Sprint(i), Records: r}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		lanes    int
		strategy Strategy
		out      int
		files    []table.PlanFile
		want     []int // files a part; nil: one stream
	}{
		{"two even", 2, BinPack, 4, files(10, 10, 10, 10), []int{2, 2}},
		{"three lanes", 3, BinPack, 9, files(5, 5, 5, 5, 5, 5), []int{2, 2, 2}},
		{"nearest share", 2, BinPack, 4, files(10, 30, 5, 5), []int{1, 3}},
		{"one big file first", 2, BinPack, 4, files(100, 1, 1, 1), []int{1, 3}},
		{"one big file last", 2, BinPack, 4, files(1, 1, 1, 100), []int{3, 1}},
		{"fewer files than lanes", 4, BinPack, 8, files(10, 10, 10), []int{1, 1, 1}},
		{"fewer output files than lanes", 4, BinPack, 2, files(10, 10, 10, 10), []int{2, 2}},
		{"one lane", 1, BinPack, 4, files(10, 10), nil},
		{"one output file", 2, BinPack, 1, files(10, 10), nil},
		{"one input file", 2, BinPack, 4, files(40), nil},
		{"sorted", 2, Sort, 4, files(10, 10), nil},
		{"a part of no rows", 2, BinPack, 4, files(0, 10), nil},
		{"deletes", 2, BinPack, 4, append(files(10), table.PlanFile{Records: 10, DeleteFiles: 1}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := &execution{r: &rewriter{lay: layout{strategy: tc.strategy}}, lanes: tc.lanes}
			o := &groupOut{group: &Group{OutputFiles: tc.out, Records: records(tc.files)}, files: tc.files}
			parts := ex.binpackParts(o)
			if tc.want == nil {
				assert.Nil(t, parts)
				return
			}
			var got []int
			var all []table.PlanFile
			for _, p := range parts {
				got = append(got, len(p))
				all = append(all, p...)
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.files, all, "every file once, in order")
		})
	}
	t.Run("records unlike the plan's", func(t *testing.T) {
		ex := &execution{r: &rewriter{lay: layout{strategy: BinPack}}, lanes: 2}
		fs := files(10, 10)
		assert.Nil(t, ex.binpackParts(&groupOut{group: &Group{OutputFiles: 4, Records: 21}, files: fs}))
	})
}

// TestPartFiles checks the shares of a group's output files: they add up
// to the group's, follow the parts' rows, and every part has one, or
// there are no shares.
func TestPartFiles(t *testing.T) {
	assert.Equal(t, []int{2, 2}, partFiles(4, []int64{10, 10}))
	assert.Equal(t, []int{1, 3}, partFiles(4, []int64{10, 30}))
	assert.Equal(t, []int{38, 37}, partFiles(75, []int64{1000, 990}))
	assert.Equal(t, []int{1, 1, 2}, partFiles(4, []int64{30, 30, 60}))
	assert.Nil(t, partFiles(3, []int64{1, 1, 100}), "parts too small for a file of their own")
	assert.Nil(t, partFiles(2, []int64{1, 1000}), "a part too small for a file of its own")
	for out := 2; out < 40; out++ {
		for _, rows := range [][]int64{{7, 7}, {1, 9, 5}, {100, 3, 3, 100}} {
			if s := partFiles(out, rows); s != nil {
				sum := 0
				for _, n := range s {
					assert.GreaterOrEqual(t, n, 1)
					sum += n
				}
				assert.Equal(t, out, sum, "out %d, rows %v", out, rows)
			}
		}
	}
}
