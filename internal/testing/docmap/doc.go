// Package docmap holds the check that docs/README.md's package map names
// every package of the module, and only directories that exist. It has no
// code of its own; its test walks the module and reads the page.
package docmap
