// Package geocompact holds what the module's root knows: its release
// version, from the VERSION file. The program is cmd/geocompact; the
// engine and the table layer are its subpackages (docs/README.md maps
// them).
package geocompact

import (
	_ "embed"
	"strings"
)

//go:embed VERSION
var versionFile string

// Version is the release this source tree is, as the VERSION file says
// ("0.1.0"); a release build stamps the same value into the binary.
func Version() string { return strings.TrimSpace(versionFile) }
