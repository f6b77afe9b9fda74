package restcatalog_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/catalogtest"

	"github.com/geocompact/geocompact/internal/testing/restcatalog"
)

// TestConformance runs iceberg-go's catalog conformance suite against its
// own REST client talking to the server, with and without a prefix.
func TestConformance(t *testing.T) {
	for _, prefix := range []string{"", "lake"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			catalogtest.RunCatalogTests(t, catalogtest.Config{
				SupportsNamespaceProperties: true,
				NewCatalog: func(t *testing.T) catalog.Catalog {
					return newServer(t, restcatalog.Options{Prefix: prefix}).client(t)
				},
			})
		})
	}
}
