package icebergtable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// SpatialTableProps are the properties of a spatial table geocompact
// creates: its format version, where its geometry is (column, encoding,
// CRS), and iceberg-go's own commit retries, which replay a commit that
// lost a race on the fresh head reusing the data files already written.
// A WKB column gets no column metrics: truncated binary bounds of WKB are
// useless and cost manifest space.
func SpatialTableProps(formatVersion int, cols spatial.Columns) iceberg.Properties {
	props := iceberg.Properties{
		table.PropertyFormatVersion:  strconv.Itoa(formatVersion),
		spatial.PropGeometryColumn:   cols.Geometry,
		spatial.PropGeometryEncoding: cols.Encoding,
		spatial.PropCRS:              cols.CRS,
		table.CommitNumRetriesKey:    "4",
	}
	if cols.Encoding == spatial.EncodingWKB {
		props["write.metadata.metrics.column."+cols.Geometry] = "none"
	}
	return props
}

// CreateTable creates the table name ("ns.t") with schema sc, the
// partition spec partitionBy (see ParsePartitionSpec) and props, creating
// its namespace first when it does not exist.
func CreateTable(ctx context.Context, cat catalog.Catalog, name string, sc *iceberg.Schema, partitionBy string, props iceberg.Properties) (*table.Table, error) {
	ident, err := catalogs.ParseIdentifier(name)
	if err != nil {
		return nil, err
	}
	spec, err := ParsePartitionSpec(partitionBy, sc)
	if err != nil {
		return nil, err
	}
	ns := catalog.NamespaceFromIdent(ident)
	exists, err := cat.CheckNamespaceExists(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("create %s: check namespace: %w", name, err)
	}
	if !exists {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
			return nil, fmt.Errorf("create %s: create namespace: %w", name, err)
		}
	}
	tbl, err := cat.CreateTable(ctx, ident, sc, catalog.WithPartitionSpec(&spec), catalog.WithProperties(props))
	if err != nil {
		return nil, fmt.Errorf("create %s: create table: %w", name, err)
	}
	return tbl, nil
}

// ParsePartitionSpec parses "transform(col), ..." against sc: identity
// columns may be given bare, and Spark's spellings are accepted (days(ts),
// hours(ts), years, months, bucket(N, col), truncate(W, col)); see
// PartitionTransforms. An empty string is the unpartitioned spec. Errors
// match format.ErrPartitionSpec.
func ParsePartitionSpec(expr string, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return *iceberg.UnpartitionedSpec, nil
	}
	terms, err := format.ParsePartitioning(expr)
	if err != nil {
		return iceberg.PartitionSpec{}, err
	}
	var opts []iceberg.PartitionOption
	for _, t := range terms {
		f, ok := sc.FindFieldByName(t.Column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition %q: no column %q (columns: %s)", format.ErrPartitionSpec, t.Text, t.Column, columnNames(sc))
		}
		name := t.Column
		if t.Transform != "identity" {
			name = t.Column + "_" + t.Transform
		}
		tr, err := iceberg.ParseTransform(t.IcebergTransform())
		if err != nil {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition %q: %w", format.ErrPartitionSpec, t.Text, err)
		}
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, name, tr, sc, nil))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: %w", format.ErrPartitionSpec, err)
	}
	return spec, nil
}

// FormatPartitionSpec renders spec in the syntax ParsePartitionSpec reads,
// "day(ts), bucket(16, id)", or "unpartitioned".
func FormatPartitionSpec(spec iceberg.PartitionSpec, sc *iceberg.Schema) string {
	var terms []string
	for _, f := range spec.Fields() {
		col, ok := sc.FindColumnName(f.SourceID())
		if !ok {
			col = strconv.Itoa(f.SourceID())
		}
		switch tr := f.Transform.(type) {
		case iceberg.IdentityTransform:
			terms = append(terms, col)
		case iceberg.BucketTransform:
			terms = append(terms, fmt.Sprintf("bucket(%d, %s)", tr.NumBuckets, col))
		case iceberg.TruncateTransform:
			terms = append(terms, fmt.Sprintf("truncate(%d, %s)", tr.Width, col))
		default:
			terms = append(terms, fmt.Sprintf("%s(%s)", tr, col))
		}
	}
	if len(terms) == 0 {
		return "unpartitioned"
	}
	return strings.Join(terms, ", ")
}

// SamePartitioning reports whether a and b partition by the same
// transforms of the same columns in the same order; field names and IDs
// may differ.
func SamePartitioning(a, b iceberg.PartitionSpec) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.SourceID() != fb.SourceID() || !fa.Transform.Equals(fb.Transform) {
			return false
		}
	}
	return true
}

// columnNames lists sc's top-level columns for an error message.
func columnNames(sc *iceberg.Schema) string {
	names := make([]string, 0, len(sc.Fields()))
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}
