package reliability_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

func TestHostileFooterRewritesTheField(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ok.parquet")
	validatetest.Write(t, p, validatetest.File{Rows: validatetest.Points(50), Geo: validatetest.Geo("")})
	data, err := os.ReadFile(p)
	require.NoError(t, err)

	same, err := reliability.HostileFooter{Name: "identity"}.Apply(data)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, same), "an unchanged footer re-encodes to the same bytes")

	for _, h := range reliability.HostileFooters() {
		t.Run(h.Name, func(t *testing.T) {
			bad, err := h.Apply(data)
			require.NoError(t, err)
			require.False(t, bytes.Equal(data, bad))
			r, err := file.NewParquetReader(bytes.NewReader(bad))
			if h.Field == nil {
				require.Error(t, err, "a broken footer does not parse")
				return
			}
			require.NoError(t, err)
			defer r.Close()
			rg := r.MetaData().RowGroups[0]
			switch h.Name {
			case "huge-chunk", "negative-chunk-size":
				require.Equal(t, h.Value, rg.Columns[0].MetaData.TotalCompressedSize)
			case "offset-past-eof", "negative-offset":
				require.Equal(t, h.Value, rg.Columns[0].MetaData.DataPageOffset)
			case "huge-row-group-rows":
				require.Equal(t, h.Value, rg.NumRows)
			case "negative-row-group-bytes":
				require.Equal(t, h.Value, rg.TotalByteSize)
			}
		})
	}
}
