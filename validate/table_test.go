package validate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// newTable creates a v2 WKB table with bbox columns in a fresh embedded
// warehouse and appends each batch of rows as its own commit (one data
// file each).
func newTable(t testing.TB, props iceberg.Properties, batches ...[]validatetest.Row) *table.Table {
	t.Helper()
	ctx := t.Context()
	cat, err := catalogs.Open(ctx, catalogs.Spec{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"gis"}, nil); err != nil {
		t.Fatal(err)
	}
	fields := []iceberg.NestedField{{ID: 1, Name: "geometry", Type: iceberg.PrimitiveTypes.Binary}}
	for i, n := range spatial.BBoxColumns {
		fields = append(fields, iceberg.NestedField{ID: 2 + i, Name: n, Type: iceberg.PrimitiveTypes.Float64})
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"gis", "t"}, iceberg.NewSchema(0, fields...), catalog.WithProperties(props))
	if err != nil {
		t.Fatal(err)
	}
	asc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range batches {
		rec := validatetest.File{Rows: rows}.Record()
		// Re-label the columns with the table's Arrow schema.
		cols := rec.Columns()
		conformed := array.NewRecordBatch(asc, cols, rec.NumRows())
		rdr, err := array.NewRecordReader(asc, []arrow.RecordBatch{conformed})
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if err := tx.Append(ctx, rdr, nil); err != nil {
			t.Fatal(err)
		}
		if tbl, err = tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		rdr.Release()
		conformed.Release()
		rec.Release()
	}
	return tbl
}

func TestTable(t *testing.T) {
	props := iceberg.Properties{spatial.PropGeometryColumn: "geometry", spatial.PropGeometryEncoding: spatial.EncodingWKB}
	bad := validatetest.Points(4)
	bad[1].WKB = validatetest.LE().Hdr(2).N(1 << 27).Buf
	bad[3].BBox = validatetest.Box(0, 0, 0, 0)
	tbl := newTable(t, props, validatetest.Points(10), bad, validatetest.Points(5))

	cfg := validate.DefaultConfig()
	cfg.Parallelism = 2
	rep, err := checkIceberg(t, tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Total.Rows != 19 || len(rep.Files) != 3 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Total.Counts[validate.CodeTruncated] != 1 || rep.Total.Counts[validate.CodeBBoxMismatch] != 1 || rep.Total.Violations() != 2 {
		t.Errorf("counts %v", rep.Total.Counts)
	}
	if rep.SnapshotID != tbl.CurrentSnapshot().SnapshotID || rep.Table != "gis.t" {
		t.Errorf("snapshot %d table %q", rep.SnapshotID, rep.Table)
	}
	var badFile string
	for _, f := range rep.Files {
		if !f.OK() {
			if badFile != "" {
				t.Errorf("two bad files")
			}
			badFile = f.Path
			if f.Examples[0].Row != 1 {
				t.Errorf("examples %+v", f.Examples)
			}
		}
	}

	// A data file damaged on disk is reported, not a crash.
	if err := os.WriteFile(strings.TrimPrefix(badFile, "file://"), []byte("PAR1 garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = checkIceberg(t, tbl, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total.Counts[validate.CodeCorrupt] != 1 {
		t.Errorf("after damage: %v", rep.Total.Counts)
	}
}

func TestTableMetadata(t *testing.T) {
	tests := []struct {
		name  string
		props iceberg.Properties
		cfg   func(*validate.Config)
		code  string
	}{
		{"no geometry property", iceberg.Properties{}, nil, validate.CodeColumn},
		{"wrong encoding property", iceberg.Properties{spatial.PropGeometryColumn: "geometry", spatial.PropGeometryEncoding: spatial.EncodingIcebergGeometry}, nil, validate.CodeColumn},
		{"unreadable CRS property", iceberg.Properties{spatial.PropGeometryColumn: "geometry", spatial.PropCRS: "WGS84"}, nil, validate.CodeCRSMissing},
		{"expected CRS differs", iceberg.Properties{spatial.PropGeometryColumn: "geometry", spatial.PropCRS: "EPSG:3857"}, func(c *validate.Config) { c.CRS = "OGC:CRS84" }, validate.CodeCRSMismatch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl := newTable(t, tc.props)
			cfg := validate.DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			rep, err := checkIceberg(t, tbl, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Metadata.Counts[tc.code] != 1 {
				t.Fatalf("metadata %+v", rep.Metadata)
			}
		})
	}
}
