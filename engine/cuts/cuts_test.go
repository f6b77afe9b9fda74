package cuts

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

func pointBlocks(blockRows int64, pts ...[2]float64) *Blocks {
	bb := &Blocks{blockRows: blockRows}
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
	assert.Equal(t, []int64{50, 30}, bb.Window(2, 1, 1))
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
		cuts := bb.Window(n, 5, 5)
		require.Len(t, cuts, n)
		var sum int64
		for _, c := range cuts {
			sum += c
		}
		require.Equal(t, bb.rows, sum, "cuts %v", cuts)
		share := float64(bb.rows) / float64(n)
		for _, c := range cuts {
			// Block granularity and the short block allow one block of slack.
			require.GreaterOrEqual(t, float64(c), cutMinShare*share-14, "cuts %v", cuts)
			require.LessOrEqual(t, float64(c), cutMaxShare*share+14, "cuts %v", cuts)
		}
	}
}
