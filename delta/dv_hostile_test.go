package delta

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A deletion vector's descriptor comes from the log: a size or offset that
// runs past its file is refused before anything is allocated for it.
func TestDeletionVectorSizeCheckedAgainstFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dv.bin"), make([]byte, 64), 0o644))
	st := &LocalStorage{Root: dir}
	for _, tc := range []struct {
		name   string
		size   int32
		offset int32
	}{
		{"huge size", math.MaxInt32, 0},
		{"past the end", 40, 30},
		{"negative offset", 8, -4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off := tc.offset
			dv := &DeletionVector{StorageType: "p", PathOrInlineDv: "file://" + filepath.ToSlash(filepath.Join(dir, "dv.bin")),
				SizeInBytes: tc.size, Offset: &off, Cardinality: 1}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := dv.Load(t.Context(), st)
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "allocated for a size the file cannot hold")
		})
	}
}
