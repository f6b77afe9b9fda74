//go:build !gcs

package catalogs

func init() { registerMissingStore("gcs", "gs") }
