package engine_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// ExampleRewrite compacts a table of many small files into a Hilbert
// layout. The table is a generated one, in the embedded catalog of a
// temporary warehouse.
func ExampleRewrite() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "geocompact-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The embedded SQLite catalog under dir, created on first use.
	cat, err := catalogs.Open(ctx, catalogs.Spec{Warehouse: dir})
	if err != nil {
		log.Fatal(err)
	}
	// 1000 points appended in 10 commits: 10 small files.
	gen := bench.GenerateConfig{Table: "gis.points", Rows: 1000, Commits: 10, Seed: 1}
	if _, err := bench.Generate(ctx, cat, gen); err != nil {
		log.Fatal(err)
	}

	tbl, err := icebergtable.Open(ctx, cat, "gis.points")
	if err != nil {
		log.Fatal(err)
	}
	res, err := engine.Rewrite(ctx, tbl, engine.Request{Curve: "hilbert"})
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range res.Plan.Groups {
		fmt.Printf("group of %d files, %d rows\n", len(g.Files), g.Records)
	}
	fmt.Printf("rewrote %d files into %d, in %d snapshot\n", res.RewrittenDataFilesCount, res.AddedDataFilesCount, res.SnapshotsCommitted)
	fmt.Printf("%s, verified: %v\n", res.LayoutText(), res.Verified)
	// Output:
	// group of 10 files, 1000 rows
	// rewrote 10 files into 1, in 1 snapshot
	// strategy sort by hilbert(), verified: true
}
