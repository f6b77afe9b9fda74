package bench

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

func TestGenerateWindowsDeterministic(t *testing.T) {
	t.Parallel()
	extent := spatial.Bound{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}
	rows := []spatial.Bound{
		{MinX: 10, MinY: 20, MaxX: 10, MaxY: 20},
		{MinX: -50, MinY: -10, MaxX: -40, MaxY: 0},
		spatial.EmptyBound(),
	}
	for _, p := range []Placement{PlaceData, PlaceUniform} {
		t.Run(string(p), func(t *testing.T) {
			cfg := WindowConfig{Count: 50, Area: 0.01, Placement: p, Seed: 7}
			a, err := GenerateWindows(cfg, extent, rows)
			require.NoError(t, err)
			b, err := GenerateWindows(cfg, extent, rows)
			require.NoError(t, err)
			assert.Equal(t, a, b, "same seed, different windows")
			cfg.Seed = 8
			c, err := GenerateWindows(cfg, extent, rows)
			require.NoError(t, err)
			assert.NotEqual(t, a, c, "seeds 7 and 8 gave the same windows")
			require.Len(t, a, 50)
			for i, b := range a {
				// 1% of the area with the extent's aspect: 36 x 18.
				if math.Abs(b.Width()-36) > 1e-9 || math.Abs(b.Height()-18) > 1e-9 {
					t.Fatalf("window %d is %g x %g, want 36 x 18", i, b.Width(), b.Height())
				}
				cx, cy := b.Center()
				switch p {
				case PlaceUniform:
					if b.MinX < extent.MinX || b.MaxX > extent.MaxX || b.MinY < extent.MinY || b.MaxY > extent.MaxY {
						t.Fatalf("uniform window %d %+v leaves the extent", i, b)
					}
				case PlaceData:
					onRow := false
					for _, r := range rows[:2] {
						rx, ry := r.Center()
						onRow = onRow || (math.Abs(cx-rx) < 1e-9 && math.Abs(cy-ry) < 1e-9)
					}
					if !onRow {
						t.Fatalf("data window %d centred at (%g, %g), not on a row", i, cx, cy)
					}
				}
			}
		})
	}
}

func TestGenerateWindowsRefuses(t *testing.T) {
	t.Parallel()
	extent := spatial.World
	for _, tc := range []struct {
		name   string
		cfg    WindowConfig
		extent spatial.Bound
		rows   []spatial.Bound
	}{
		{"area above one", WindowConfig{Area: 1.5}, extent, []spatial.Bound{extent}},
		{"negative count", WindowConfig{Count: -1}, extent, []spatial.Bound{extent}},
		{"bad placement", WindowConfig{Placement: "edges"}, extent, []spatial.Bound{extent}},
		{"no extent", WindowConfig{}, spatial.EmptyBound(), nil},
		{"data placement without rows", WindowConfig{}, extent, nil},
		{"only empty rows", WindowConfig{}, extent, []spatial.Bound{spatial.EmptyBound()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := GenerateWindows(tc.cfg, tc.extent, tc.rows); !errors.Is(err, ErrWindows) {
				t.Fatalf("err = %v, want ErrWindows", err)
			}
		})
	}
}

func TestReadWindows(t *testing.T) {
	t.Parallel()
	got, err := ReadWindows(strings.NewReader(`[{"minx":1,"miny":2,"maxx":3,"maxy":4},{"minx":-1,"miny":-1,"maxx":-1,"maxy":-1}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []spatial.Bound{{MinX: 1, MinY: 2, MaxX: 3, MaxY: 4}, {MinX: -1, MinY: -1, MaxX: -1, MaxY: -1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{
		`[]`,
		`{"minx":1}`,
		`[{"minx":3,"miny":2,"maxx":1,"maxy":4}]`,
		`[{"minx":1,"miny":2,"maxx":3,"maxy":4,"z":1}]`,
		`not json`,
	} {
		if _, err := ReadWindows(strings.NewReader(bad)); !errors.Is(err, ErrWindows) {
			t.Errorf("ReadWindows(%s) err = %v, want ErrWindows", bad, err)
		}
	}
}
