package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// TestMissingBBoxSaysTheCure checks that a bbox.missing finding says how
// to get the columns: ingest --add-bbox computes all four from the WKB, so
// it is the cure when all four are missing, but not for a partial set, nor
// for a declared covering column the file lacks.
func TestMissingBBoxSaysTheCure(t *testing.T) {
	covering := geoDoc(`,"covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],"xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}`)
	dir := t.TempDir()
	none := filepath.Join(dir, "none.parquet")
	validatetest.Write(t, none, validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.Geo(""), NoBBox: true})
	noCovering := filepath.Join(dir, "no-covering.parquet")
	validatetest.Write(t, noCovering, validatetest.File{Rows: validatetest.Points(3), Geo: covering, NoBBox: true})
	cases := []struct {
		name, path string
		want, not  []string
	}{
		{"all four missing", none, []string{"bbox_minx, bbox_miny, bbox_maxx, bbox_maxy", "geocompact ingest --add-bbox"}, nil},
		{"two missing", partialBBoxFile(t, dir), []string{"bbox_maxx, bbox_maxy", "all four", "geocompact ingest --add-bbox"}, nil},
		{"covering column absent", noCovering, []string{`"bbox"`, "drop the covering"}, []string{"--add-bbox"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := validate.File(t.Context(), tc.path, validate.DefaultConfig())
			require.NoError(t, err)
			require.Equal(t, map[string]int64{validate.CodeBBoxMissing: 1}, rep.Counts)
			detail := rep.Examples[0].Detail
			for _, s := range tc.want {
				assert.Contains(t, detail, s)
			}
			for _, s := range tc.not {
				assert.NotContains(t, detail, s, "the flag does not cure this")
			}
		})
	}
}

// partialBBoxFile writes points with only bbox_minx and bbox_miny.
func partialBBoxFile(t *testing.T, dir string) string {
	t.Helper()
	rec := validatetest.File{Rows: validatetest.Points(3)}.Record()
	defer rec.Release()
	sc := arrow.NewSchema(rec.Schema().Fields()[:3], nil)
	part := array.NewRecordBatch(sc, rec.Columns()[:3], rec.NumRows())
	defer part.Release()
	p := filepath.Join(dir, "partial.parquet")
	f, err := os.Create(p)
	require.NoError(t, err)
	w, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.AppendKeyValueMetadata("geo", validatetest.Geo("")))
	require.NoError(t, w.Write(part))
	require.NoError(t, w.Close())
	return p
}
