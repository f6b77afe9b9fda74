//go:build !gcs

package catalogs

func init() { missingStores = append(missingStores, missingStore{"gcs", []string{"gs"}}) }
