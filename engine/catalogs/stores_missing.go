package catalogs

import (
	"context"
	"fmt"
	"net/url"

	iceio "github.com/apache/iceberg-go/io"
)

// registerMissingStore makes the schemes of an object store left out of
// this build fail with what to do, instead of iceberg-go's advice to a Go
// programmer to import a package.
func registerMissingStore(tag string, schemes ...string) {
	for _, scheme := range schemes {
		iceio.Register(scheme, func(context.Context, *url.URL, map[string]string) (iceio.IO, error) {
			return nil, fmt.Errorf("%w: %s:// storage is not in this build of geocompact; build it with -tags %s "+
				"(go install -tags %s github.com/geocompact/geocompact/cmd/geocompact@latest)", iceio.ErrIOSchemeNotFound, scheme, tag, tag)
		})
	}
}
