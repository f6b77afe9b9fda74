package maintain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
)

// TestExpireKeepsFilesOutsideLocation registers a data file in place in
// another directory, replaces it by a rewrite and expires the snapshots
// that reached it: the file outside the table location is kept and
// reported, unless DeleteOutsideLocation asks for it.
func TestExpireKeepsFilesOutsideLocation(t *testing.T) {
	t.Parallel()
	for _, deleteOutside := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "delete-outside-location"}[deleteOutside], func(t *testing.T) {
			const name = "t.x"
			cat := fragmented(t, name, 1000, 4)
			outside := registerInPlace(t, cat, name)
			rows, _ := liveRows(t, load(t, cat, name))
			replaced := binpackAll(t, cat, name)
			require.Contains(t, replaced, outside)

			cfg := maintain.ExpireConfig{RetainLast: 1, Force: true, DeleteOutsideLocation: deleteOutside}
			dry, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true, DryRun: true, DeleteOutsideLocation: deleteOutside})
			require.NoError(t, err)
			res, err := maintain.Expire(t.Context(), cat, name, cfg)
			require.NoError(t, err)
			assert.Equal(t, dry.Files, res.Files, "the real run freed other files than the dry run listed")
			assert.Equal(t, dry.Kept, res.Kept)

			var freed []string
			for _, f := range res.Files {
				freed = append(freed, trimFileScheme(f.Path))
			}
			if deleteOutside {
				assert.NoFileExists(t, outside)
				assert.Contains(t, freed, outside)
				assert.Empty(t, res.Kept)
				assert.Equal(t, len(replaced), res.DeletedDataFilesCount)
			} else {
				assert.FileExists(t, outside)
				assert.NotContains(t, freed, outside)
				require.Len(t, res.Kept, 1)
				assert.Equal(t, 1, res.KeptFilesCount)
				assert.Equal(t, outside, trimFileScheme(res.Kept[0].Path))
				assert.Equal(t, maintain.KindData, res.Kept[0].Kind)
				assert.Equal(t, maintain.KeepOutsideLocation, res.Kept[0].Reason)
				assert.Equal(t, len(replaced)-1, res.DeletedDataFilesCount)
			}
			for p := range replaced {
				if p != outside {
					assert.NoFileExists(t, p, "a replaced file inside the table was not freed")
				}
			}
			got, _ := liveRows(t, load(t, cat, name))
			assert.Equal(t, rows, got)
		})
	}
}
