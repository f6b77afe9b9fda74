package footer_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/footer"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

func TestOpenRefusesHostileFooters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ok.parquet")
	validatetest.Write(t, p, validatetest.File{Rows: validatetest.Points(300), Geo: validatetest.Geo(""), Extra: true, RowGroupRows: 100})
	good, err := os.ReadFile(p)
	require.NoError(t, err)
	pf, err := footer.Open(bytes.NewReader(good))
	require.NoError(t, err, "a valid file passes")
	require.NoError(t, pf.Close())

	for _, h := range reliability.HostileFooters() {
		t.Run(h.Name, func(t *testing.T) {
			bad, err := h.Apply(good)
			require.NoError(t, err)
			_, err = footer.Open(bytes.NewReader(bad))
			require.Error(t, err)
			if h.Field != nil {
				fe, ok := errors.AsType[*footer.Error](err)
				require.True(t, ok, "%v is not a footer.Error", err)
				require.ErrorIs(t, err, footer.ErrBadFooter)
				require.Equal(t, h.Value, fe.Value)
				require.Equal(t, 0, fe.RowGroup, "the first bad row group is named")
			}
		})
	}
}
