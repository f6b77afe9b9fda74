package ingest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
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
	ident, err := engine.ParseIdentifier(name)
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

// ErrPartitionSpec marks a partition spec ParsePartitionSpec cannot use.
var ErrPartitionSpec = errors.New("ingest: bad partition spec")

// ParsePartitionSpec parses "transform(col), ..." — identity columns may be
// given bare — against sc. An empty string is the unpartitioned spec.
// Errors match ErrPartitionSpec.
func ParsePartitionSpec(expr string, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return *iceberg.UnpartitionedSpec, nil
	}
	var opts []iceberg.PartitionOption
	for _, term := range splitTopLevel(expr) {
		term = strings.TrimSpace(term)
		tname, col := "identity", term
		if open := strings.IndexByte(term, '('); open >= 0 && strings.HasSuffix(term, ")") {
			args := strings.Split(term[open+1:len(term)-1], ",")
			tname, col = strings.ToLower(strings.TrimSpace(term[:open])), strings.TrimSpace(args[len(args)-1])
			if len(args) == 2 {
				tname = fmt.Sprintf("%s[%s]", tname, strings.TrimSpace(args[0]))
			}
		}
		tr, err := iceberg.ParseTransform(tname)
		if err != nil {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition %q: %w", ErrPartitionSpec, term, err)
		}
		f, ok := sc.FindFieldByName(col)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition %q: no column %q", ErrPartitionSpec, term, col)
		}
		name := col
		if tname != "identity" {
			name = col + "_" + strings.SplitN(tname, "[", 2)[0]
		}
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, name, tr, sc, nil))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: %w", ErrPartitionSpec, err)
	}
	return spec, nil
}

// splitTopLevel splits s at commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
