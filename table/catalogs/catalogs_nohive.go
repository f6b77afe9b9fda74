//go:build !hive

package catalogs

func init() { missingCatalogs = append(missingCatalogs, "hive") }
