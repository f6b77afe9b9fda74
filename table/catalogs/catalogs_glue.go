//go:build glue

package catalogs

// glue catalogs, in builds with the glue tag.
import _ "github.com/apache/iceberg-go/catalog/glue"
