package engine

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/geocompact/geocompact/spatial"
)

func pointBlocks(blockRows int64, pts ...[2]float64) *blockBounds {
	bb := &blockBounds{blockRows: blockRows}
	for _, p := range pts {
		bb.boxes = append(bb.boxes, spatial.Bound{MinX: p[0], MinY: p[1], MaxX: p[0], MaxY: p[1]})
		bb.rows += blockRows
	}
	return bb
}

func TestWindowCutsFollowClusters(t *testing.T) {
	// Five blocks at one place, three far away: an even cut (4 | 4) would
	// give the second file a box spanning both places.
	bb := pointBlocks(10, [2]float64{0, 0}, [2]float64{1, 0}, [2]float64{0, 1}, [2]float64{1, 1}, [2]float64{0.5, 0.5},
		[2]float64{100, 100}, [2]float64{101, 100}, [2]float64{100, 101})
	got := windowCuts(bb, 2, 1, 1)
	if want := []int64{50, 30}; !slices.Equal(got, want) {
		t.Fatalf("cuts %v, want %v", got, want)
	}
}

func TestWindowCutsBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		n := 1 + r.IntN(12)
		m := n * (1 + r.IntN(40))
		var pts [][2]float64
		for range m {
			pts = append(pts, [2]float64{r.Float64() * 100, r.Float64() * 100})
		}
		bb := pointBlocks(7, pts...)
		bb.rows -= int64(r.IntN(7)) // a short last block
		cuts := windowCuts(bb, n, 5, 5)
		if len(cuts) != n {
			t.Fatalf("%d files, want %d", len(cuts), n)
		}
		var sum int64
		for _, c := range cuts {
			sum += c
		}
		if sum != bb.rows {
			t.Fatalf("cuts %v sum to %d rows, want %d", cuts, sum, bb.rows)
		}
		share := float64(bb.rows) / float64(n)
		for _, c := range cuts {
			// Block granularity and the short block allow one block of slack.
			if float64(c) < cutMinShare*share-14 || float64(c) > cutMaxShare*share+14 {
				t.Fatalf("file of %d rows outside [%.0f, %.0f] (cuts %v)", c, cutMinShare*share, cutMaxShare*share, cuts)
			}
		}
	}
}
