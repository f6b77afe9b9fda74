package bench

import (
	"math"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
)

type kdNode struct {
	axis        int
	thr         float64
	left, right *kdNode
	leaf        int
}

type kdBuild struct {
	sets    [][]spatial.Bound
	weights []float64
	look    int
	ratios  []float64
	leaves  int
}

func ctr(b spatial.Bound, axis int) float64 {
	x, y := b.Center()
	if axis == 0 {
		return x
	}
	return y
}

func boxOf(rows []spatial.Bound) spatial.Bound {
	b := spatial.EmptyBound()
	for _, r := range rows {
		b = b.Extend(r)
	}
	return b
}

func (k *kdBuild) cost(b spatial.Bound) float64 {
	c := 0.0
	for i, s := range k.sets {
		n := 0
		for _, w := range s {
			if b.Intersects(w) {
				n++
			}
		}
		c += k.weights[i] * float64(n)
	}
	return c
}

// split returns the best split of rows (for files files) and its cost when
// looked ahead depth levels.
func (k *kdBuild) best(rows []spatial.Bound, files, depth int) (axis int, fl int, cost float64) {
	cost = math.Inf(1)
	for ax := 0; ax < 2; ax++ {
		s := slices.Clone(rows)
		slices.SortFunc(s, func(a, b spatial.Bound) int { return cmpf(ctr(a, ax), ctr(b, ax)) })
		for _, r := range k.ratios {
			f1 := int(math.Round(float64(files) * r))
			if f1 < 1 || f1 >= files {
				continue
			}
			at := len(s) * f1 / files
			c := k.eval(s[:at], f1, depth-1) + k.eval(s[at:], files-f1, depth-1)
			if c < cost {
				axis, fl, cost = ax, f1, c
			}
		}
	}
	return
}

func cmpf(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (k *kdBuild) eval(rows []spatial.Bound, files, depth int) float64 {
	if files == 1 {
		return k.cost(boxOf(rows))
	}
	if depth <= 0 {
		// approximate: grid of files over the box
		b := boxOf(rows)
		return approx(k, b, files, rows)
	}
	_, _, c := k.best(rows, files, depth)
	return c
}

// approx splits greedily by the longer side (no lookahead) to the leaves.
func approx(k *kdBuild, b spatial.Bound, files int, rows []spatial.Bound) float64 {
	if files == 1 {
		return k.cost(b)
	}
	ax := 0
	if b.Height() > b.Width() {
		ax = 1
	}
	s := slices.Clone(rows)
	slices.SortFunc(s, func(a, c spatial.Bound) int { return cmpf(ctr(a, ax), ctr(c, ax)) })
	f1 := files / 2
	at := len(s) * f1 / files
	return approx(k, boxOf(s[:at]), f1, s[:at]) + approx(k, boxOf(s[at:]), files-f1, s[at:])
}

func (k *kdBuild) build(rows []spatial.Bound, files int) *kdNode {
	if files == 1 {
		n := &kdNode{leaf: k.leaves}
		k.leaves++
		return n
	}
	ax, f1, _ := k.best(rows, files, k.look)
	s := slices.Clone(rows)
	slices.SortFunc(s, func(a, b spatial.Bound) int { return cmpf(ctr(a, ax), ctr(b, ax)) })
	at := len(s) * f1 / files
	n := &kdNode{axis: ax, thr: ctr(s[at], ax)}
	n.left = k.build(s[:at], f1)
	n.right = k.build(s[at:], files-f1)
	return n
}

func (n *kdNode) route(b spatial.Bound) int {
	for n.left != nil {
		if ctr(b, n.axis) < n.thr {
			n = n.left
		} else {
			n = n.right
		}
	}
	return n.leaf
}

func TestKDProto(t *testing.T) {
	if os.Getenv("KDPROTO") == "" {
		t.Skip()
	}
	n := layoutEnv(t, "GEOCOMPACT_LAYOUT_ROWS", 1_000_000)
	m := layoutEnv(t, "GEOCOMPACT_LAYOUT_SAMPLE", 1<<14)
	files := layoutEnv(t, "KD_FILES", 50)
	look := layoutEnv(t, "KD_LOOK", 2)
	rows, err := RowBounds(GenerateConfig{Rows: int64(n), Distribution: Clustered, Seed: 1})
	require.NoError(t, err)
	sample := strideSample(rows, m)
	extent := boxOf(rows)
	var sets, truth [][]spatial.Bound
	for _, a := range cluster.AutoAreas {
		ws, err := cluster.DataWindows(sample, extent, a, 1000, 1)
		require.NoError(t, err)
		sets = append(sets, ws)
		tw, err := cluster.DataWindows(rows, extent, a, 400, 7)
		require.NoError(t, err)
		truth = append(truth, tw)
	}
	// weights: 1/(str estimate)
	o, _ := cluster.CurveOrder("str")
	fb, err := cluster.FileBounds(sample, o, cluster.SortOptions{Extent: extent}, files)
	require.NoError(t, err)
	var w []float64
	for _, s := range sets {
		w = append(w, 1/float64(sumInts(cluster.CountPlanned(fb, s))))
	}
	for _, rs := range [][]float64{{0.5}, {0.5, 0.4, 0.6}, {0.5, 0.34, 0.66}} {
		k := &kdBuild{sets: sets, weights: w, look: look, ratios: rs}
		root := k.build(sample, files)
		boxes := make([]spatial.Bound, files)
		for i := range boxes {
			boxes[i] = spatial.EmptyBound()
		}
		counts := make([]int, files)
		for _, r := range rows {
			l := root.route(r)
			boxes[l] = boxes[l].Extend(r)
			counts[l]++
		}
		mn, mx := slices.Min(counts), slices.Max(counts)
		idx := make([]int, len(rows))
		for i := range idx {
			idx[i] = i
		}
		leafOf := make([]int, len(rows))
		for i, r := range rows {
			leafOf[i] = root.route(r)
		}
		slices.SortFunc(idx, func(a, b int) int {
			if leafOf[a] != leafOf[b] {
				return leafOf[a] - leafOf[b]
			}
			return cmpf(ctr(rows[a], 1), ctr(rows[b], 1))
		})
		eq := make([]spatial.Bound, files)
		for f := range eq {
			eq[f] = spatial.EmptyBound()
			for _, r := range idx[f*n/files : (f+1)*n/files] {
				eq[f] = eq[f].Extend(rows[r])
			}
		}
		for i, s := range truth {
			t.Logf("equal-row cuts over leaf order: set %d: %.2f", i, meanInts(cluster.CountPlanned(eq, s)))
		}
		for i, s := range truth {
			t.Logf("ratios %v look %d files %d set %d: kd %.2f (leaf rows %d..%d of %d)", rs, look, files, i, meanInts(cluster.CountPlanned(boxes, s)), mn, mx, n/files)
		}
	}
	for _, name := range []string{"hilbert", "str"} {
		o, _ := cluster.CurveOrder(name)
		fb, err := cluster.FileBounds(rows, o, cluster.SortOptions{Extent: extent}, files)
		require.NoError(t, err)
		for i, s := range truth {
			t.Logf("%s set %d: %.2f", name, i, meanInts(cluster.CountPlanned(fb, s)))
		}
	}
}

func sumInts(c []int) int {
	s := 0
	for _, v := range c {
		s += v
	}
	return s
}
