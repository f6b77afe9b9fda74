//go:build azure

package catalogs

// abfs://, abfss://, wasb:// and wasbs:// warehouses and tables, in builds
// with the azure tag.
import _ "github.com/apache/iceberg-go/io/gocloud/azure"
