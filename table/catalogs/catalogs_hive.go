//go:build hive

package catalogs

// hive catalogs, in builds with the hive tag.
import _ "github.com/apache/iceberg-go/catalog/hive"
