//go:build !gcs && !azure

package catalogs_test

import (
	"testing"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/table/catalogs"
)

// TestStoresLeftOut checks that a location on an object store this build
// leaves out fails with the build tag that adds it, and that s3:// is in
// every build.
func TestStoresLeftOut(t *testing.T) {
	_, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	assert.NoError(t, err)
	for loc, tag := range map[string]string{"gs://bucket/wh": "-tags gcs", "abfss://c@acct.dfs.core.windows.net/wh": "-tags azure", "wasbs://c@acct.blob.core.windows.net/wh": "-tags azure"} {
		_, err := iceio.LoadFS(t.Context(), nil, loc)
		assert.ErrorIs(t, err, iceio.ErrIOSchemeNotFound, loc)
		assert.ErrorContains(t, err, tag, loc)
	}
	_, err = iceio.LoadFS(t.Context(), map[string]string{"s3.region": "us-east-1"}, "s3://bucket/wh")
	assert.NotErrorIs(t, err, iceio.ErrIOSchemeNotFound)
}
