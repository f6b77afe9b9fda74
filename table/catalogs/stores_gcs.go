//go:build gcs

package catalogs

// gs:// warehouses and tables, in builds with the gcs tag.
import _ "github.com/apache/iceberg-go/io/gocloud/gcs"
