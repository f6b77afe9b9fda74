package cluster

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// project returns rec with only the named columns.
func projectCols(t testing.TB, rec arrow.RecordBatch, names []string) arrow.RecordBatch {
	t.Helper()
	var fields []arrow.Field
	var cols []arrow.Array
	for _, n := range names {
		i := rec.Schema().FieldIndices(n)
		require.Len(t, i, 1, n)
		fields = append(fields, rec.Schema().Field(i[0]))
		cols = append(cols, rec.Column(i[0]))
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// TestScaleBucketedSortMatchesOneSort is the contract an external sort
// relies on: a Scale learned from a projection of the key columns, keys
// cut into key ranges, and each range sorted on its own give exactly the
// order of one sort of all the rows.
func TestScaleBucketedSortMatchesOneSort(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(3, 4)), 3000)
	recs := batches(t, rows, 700, 130, 1000)
	for _, expr := range []string{"hilbert()", "zorder()", "str()", "str(geometry)", "kd()", "kd(geometry)", "hilbert(bbox)", "zorder(geometry, ts)", "bbox_minx DESC NULLS LAST, name", "name, id"} {
		for _, norm := range []Normalization{NormalizeExtent, NormalizeQuantile} {
			t.Run(fmt.Sprintf("%s/%s", expr, norm), func(t *testing.T) {
				full := mustSorter(t, expr, SortOptions{Normalize: norm})
				want := sortedIDs(t, full, recs, 512)

				o, err := ParseOrder(expr)
				require.NoError(t, err)
				cols := full.Columns()
				require.NotEmpty(t, cols)
				projSchema := projectCols(t, recs[0], cols).Schema()
				proj, err := NewSorter(o, projSchema, SortOptions{Normalize: norm})
				require.NoError(t, err)
				st := proj.NewStats(len(rows))
				for _, r := range recs {
					p := projectCols(t, r, cols)
					require.NoError(t, st.Add(p))
					p.Release()
				}
				assert.Equal(t, len(rows), st.Rows())
				frozen, err := full.WithScale(st.Scale(emptyExtent()))
				require.NoError(t, err)

				got := bucketSortIDs(t, frozen, recs, 5)
				assert.Equal(t, want, got)
			})
		}
	}
}

func emptyExtent() spatial.Bound { return spatial.EmptyBound() }

// bucketSortIDs cuts the rows of recs into k key ranges with s's keys,
// sorts each range on its own and returns the ids in the concatenated
// order.
func bucketSortIDs(t testing.TB, s *Sorter, recs []arrow.RecordBatch, k int) []int64 {
	t.Helper()
	var keys []uint64
	for _, r := range recs {
		kk, err := s.Keys(r)
		require.NoError(t, err)
		keys = append(keys, kk...)
	}
	sorted := slices.Sorted(slices.Values(keys))
	var bounds []uint64
	for i := 1; i < k; i++ {
		bounds = append(bounds, sorted[i*len(sorted)/k])
	}
	buckets := make([][]int32, k)
	for row, key := range keys {
		b := sort.Search(len(bounds), func(i int) bool { return bounds[i] > key }) // boundaries <= key
		buckets[b] = append(buckets[b], int32(row))
	}
	var ids []int64
	for _, rows := range buckets {
		if len(rows) == 0 {
			continue
		}
		rec, err := Gather(s.schema, recs, rows, memory.DefaultAllocator)
		require.NoError(t, err)
		perm, err := s.Permutation([]arrow.RecordBatch{rec})
		require.NoError(t, err)
		idCol := rec.Column(0).(*array.Int64)
		for _, p := range perm {
			ids = append(ids, idCol.Value(int(p)))
		}
		rec.Release()
	}
	return ids
}

func TestWithScaleRejectsAnotherOrder(t *testing.T) {
	a := mustSorter(t, "hilbert()", SortOptions{})
	b := mustSorter(t, "zorder(bbox, ts, score)", SortOptions{})
	_, err := b.WithScale(a.NewStats(10).Scale(spatial.EmptyBound()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dimensions")
}

// TestGather checks every column type of the test schema, with nulls,
// across batches, including a sliced batch (non-zero offsets).
func TestGather(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(5, 6)), 900)
	recs := batches(t, rows, 300, 250, 350)
	sliced := recs[2].NewSlice(50, 350)
	defer sliced.Release()
	in := []arrow.RecordBatch{recs[0], recs[1], sliced}
	var total int32
	for _, r := range in {
		total += int32(r.NumRows())
	}
	rng := rand.New(rand.NewPCG(7, 8))
	pick := make([]int32, 500)
	for i := range pick {
		pick[i] = rng.Int32N(total)
	}
	out, err := Gather(testSchema(), in, pick, nil)
	require.NoError(t, err)
	defer out.Release()
	require.EqualValues(t, len(pick), out.NumRows())
	for k, row := range pick {
		b, i := 0, int64(row)
		for i >= in[b].NumRows() {
			i -= in[b].NumRows()
			b++
		}
		for c := range int(out.NumCols()) {
			require.True(t, array.SliceApproxEqual(out.Column(c), int64(k), int64(k+1), in[b].Column(c), i, i+1, array.WithNaNsEqual(true), array.WithAbsTolerance(0)),
				"row %d (source row %d), column %s: %v vs %v", k, row, out.Schema().Field(c).Name,
				out.Column(c).ValueStr(k), in[b].Column(c).ValueStr(int(i)))
		}
	}
}

// TestScaleJSONRoundTrip checks that a Scale sent through JSON keys every
// row exactly as the original, for each kind of normalisation.
func TestScaleJSONRoundTrip(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(9, 10)), 2000)
	recs := batches(t, rows, 700, 1300)
	for _, expr := range []string{"hilbert()", "zorder(geometry, ts)", "hilbert(bbox, score)", "name, id"} {
		for _, norm := range []Normalization{NormalizeExtent, NormalizeQuantile} {
			t.Run(fmt.Sprintf("%s/%s", expr, norm), func(t *testing.T) {
				s := mustSorter(t, expr, SortOptions{Normalize: norm})
				st := s.NewStats(len(rows))
				for _, r := range recs {
					require.NoError(t, st.Add(r))
				}
				sc := st.Scale(emptyExtent())
				b, err := json.Marshal(sc)
				require.NoError(t, err)
				var back Scale
				require.NoError(t, json.Unmarshal(b, &back))
				a, err := s.WithScale(sc)
				require.NoError(t, err)
				c, err := s.WithScale(back)
				require.NoError(t, err)
				for _, r := range recs {
					want, err := a.Keys(r)
					require.NoError(t, err)
					got, err := c.Keys(r)
					require.NoError(t, err)
					require.Equal(t, want, got)
				}
				assert.Equal(t, sc, back)
			})
		}
	}
	var bad Scale
	require.Error(t, json.Unmarshal([]byte(`{"dims":[{"kind":9}]}`), &bad))
}

// TestExtentScale checks that the scale of an order that needs only the
// extent is the one Stats learn from the rows with that extent, key for
// key, and that every other order or normalisation, and an empty extent,
// asks for the rows.
func TestExtentScale(t *testing.T) {
	rows := randomRows(rand.New(rand.NewPCG(11, 12)), 2000)
	recs := batches(t, rows, 700, 1300)
	extent := spatial.Bound{MinX: -50, MinY: -20, MaxX: 70, MaxY: 45}
	cases := []struct {
		expr string
		norm Normalization
		ok   bool
	}{
		{"hilbert()", NormalizeExtent, true},
		{"hilbert(bbox)", NormalizeExtent, true},
		{"hilbert(geometry)", NormalizeExtent, true},
		{"zorder()", NormalizeExtent, true},
		{"hilbert()", NormalizeQuantile, false},
		{"zorder(geometry, ts)", NormalizeExtent, false},
		{"hilbert(bbox, score)", NormalizeExtent, false},
		{"str()", NormalizeExtent, false},
		{"kd()", NormalizeExtent, false},
		{"name, id", NormalizeExtent, false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s", tc.expr, tc.norm), func(t *testing.T) {
			s := mustSorter(t, tc.expr, SortOptions{Normalize: tc.norm})
			got, ok := s.ExtentScale(extent)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			_, ok = s.ExtentScale(spatial.EmptyBound())
			assert.False(t, ok, "an empty extent needs the rows")
			st := s.NewStats(len(rows))
			for _, r := range recs {
				require.NoError(t, st.Add(r))
			}
			want := st.Scale(extent)
			assert.Equal(t, want, got)
			a, err := s.WithScale(want)
			require.NoError(t, err)
			b, err := s.WithScale(got)
			require.NoError(t, err)
			for _, r := range recs {
				wk, err := a.Keys(r)
				require.NoError(t, err)
				gk, err := b.Keys(r)
				require.NoError(t, err)
				require.Equal(t, wk, gk)
			}
		})
	}
}
