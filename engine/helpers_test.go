package engine_test

import (
	"testing"

	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

// The tables the rewrite tests make and read, as the job's tests make and
// read them too.
var (
	sqlite         = icebergtest.SQLite
	newTable       = icebergtest.NewTable
	twinTables     = icebergtest.TwinTables
	mustLoad       = icebergtest.Load
	tableFiles     = icebergtest.Files
	tableDigest    = icebergtest.Digest
	checkUnchanged = icebergtest.CheckUnchanged
	fileRows       = icebergtest.FileRows
	dirFiles       = icebergtest.DirFiles
	opts           = icebergtest.Opts
	rewrite        = icebergtest.Rewrite
)

// spillBudget sends every group of the test tables through the spilled sort.
const spillBudget = icebergtest.SpillBudget

// eachCatalog runs f once per catalog backend (SQLite, and PostgreSQL
// when configured), each in its own subtest.
func eachCatalog(t *testing.T, f func(t *testing.T, c testenv.Catalog)) {
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) { f(t, c) })
	}
}
