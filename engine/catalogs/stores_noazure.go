//go:build !azure

package catalogs

func init() { registerMissingStore("azure", "abfs", "abfss", "wasb", "wasbs") }
