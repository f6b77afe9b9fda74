//go:build !glue

package catalogs

func init() { missingCatalogs = append(missingCatalogs, "glue") }
