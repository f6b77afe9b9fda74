//go:build !azure

package catalogs

func init() {
	missingStores = append(missingStores, missingStore{"azure", []string{"abfs", "abfss", "wasb", "wasbs"}})
}
