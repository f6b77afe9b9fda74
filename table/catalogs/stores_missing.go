package catalogs

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync"

	iceio "github.com/apache/iceberg-go/io"
)

// missingStore is an object store left out of this build: the build tag
// that adds it and its URI schemes.
type missingStore struct {
	tag     string
	schemes []string
}

// missingStores are the stores this build leaves out (stores_no*.go).
var missingStores []missingStore

// missingCatalogs are the catalog types this build leaves out
// (catalogs_no*.go).
var missingCatalogs []string

var registerMissing sync.Once

// registerMissingStores makes the schemes of the stores left out of this
// build fail with what to do, instead of iceberg-go's advice to a Go
// programmer to import a package. It runs on the first Open, after every
// package's init, and leaves alone a scheme something else registered
// (a program or test that links the store itself).
func registerMissingStores() {
	registerMissing.Do(func() {
		have := iceio.GetRegisteredSchemes()
		for _, s := range missingStores {
			for _, scheme := range s.schemes {
				if slices.Contains(have, scheme) {
					continue
				}
				iceio.Register(scheme, func(context.Context, *url.URL, map[string]string) (iceio.IO, error) {
					return nil, fmt.Errorf("%w: %s:// storage is not in this build of geocompact; build it with -tags %s "+
						"(go install -tags %s github.com/geocompact/geocompact/cmd/geocompact@latest)", iceio.ErrIOSchemeNotFound, scheme, s.tag, s.tag)
				})
			}
		}
	})
}
