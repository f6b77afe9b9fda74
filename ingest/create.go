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

	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/spatial"
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

// PartitionTransforms are the transforms a partition spec may use, as
// written: Iceberg's names and Spark's plural forms (days = day, ...).
var PartitionTransforms = []string{
	"identity", "year", "years", "month", "months", "day", "days", "date",
	"hour", "hours", "date_hour", "bucket(N, col)", "truncate(W, col)", "void",
}

// sparkTransforms maps Spark's partition transform names to Iceberg's.
var sparkTransforms = map[string]string{
	"years": "year", "months": "month", "days": "day", "date": "day", "hours": "hour", "date_hour": "hour",
}

// partitionTerm is one parsed term of a partition spec.
type partitionTerm struct {
	text      string
	transform iceberg.Transform
	name      string // Iceberg's transform name without its argument
	column    string
}

// parsePartitionTerms parses "transform(col), ..." without a schema, so an
// unknown transform or a malformed term fails before any data is read.
func parsePartitionTerms(expr string) ([]partitionTerm, error) {
	var terms []partitionTerm
	for _, text := range splitTopLevel(expr) {
		text = strings.TrimSpace(text)
		t := partitionTerm{text: text, name: "identity", column: text}
		if open := strings.IndexByte(text, '('); open >= 0 {
			if !strings.HasSuffix(text, ")") {
				return nil, fmt.Errorf("%w: partition %q: want transform(column)", ErrPartitionSpec, text)
			}
			fn := strings.ToLower(strings.TrimSpace(text[:open]))
			if alias, ok := sparkTransforms[fn]; ok {
				fn = alias
			}
			args := strings.Split(text[open+1:len(text)-1], ",")
			for i := range args {
				args[i] = strings.TrimSpace(args[i])
			}
			col, tname, err := transformArgs(fn, args)
			if err != nil {
				return nil, fmt.Errorf("%w: partition %q: %w", ErrPartitionSpec, text, err)
			}
			t.name, t.column = fn, col
			text = tname
		} else {
			text = "identity"
		}
		tr, err := iceberg.ParseTransform(text)
		if err != nil || t.column == "" {
			return nil, fmt.Errorf("%w: partition %q: unknown transform (want %s)", ErrPartitionSpec, t.text, strings.Join(PartitionTransforms, ", "))
		}
		t.transform = tr
		terms = append(terms, t)
	}
	return terms, nil
}

// transformArgs checks the arguments of transform fn and returns the
// column and Iceberg's name for the transform ("bucket[16]"). bucket and
// truncate take their width first, as Spark writes them, or last.
func transformArgs(fn string, args []string) (col, tname string, err error) {
	switch fn {
	case "bucket", "truncate":
		if len(args) != 2 {
			return "", "", fmt.Errorf("want %s(N, column)", fn)
		}
		n, col := args[0], args[1]
		if _, err := strconv.Atoi(n); err != nil {
			n, col = col, n
		}
		if w, err := strconv.Atoi(n); err != nil || w <= 0 {
			return "", "", fmt.Errorf("want %s(N, column) with a positive whole N", fn)
		}
		return col, fmt.Sprintf("%s[%s]", fn, n), nil
	case "identity", "year", "month", "day", "hour", "void":
		if len(args) != 1 {
			return "", "", fmt.Errorf("want %s(column)", fn)
		}
		return args[0], fn, nil
	}
	return "", "", fmt.Errorf("unknown transform %q (want %s)%s", fn, strings.Join(PartitionTransforms, ", "),
		suggest.Hint(fn, []string{"identity", "year", "years", "month", "months", "day", "days", "hour", "hours", "bucket", "truncate", "void"}))
}

// ValidatePartitionSpec checks the syntax and transforms of a partition
// spec without a schema. Errors match ErrPartitionSpec.
func ValidatePartitionSpec(expr string) error {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	_, err := parsePartitionTerms(expr)
	return err
}

// ParsePartitionSpec parses "transform(col), ..." against sc: identity
// columns may be given bare, and Spark's spellings are accepted (days(ts),
// hours(ts), years, months, bucket(N, col), truncate(W, col)); see
// PartitionTransforms. An empty string is the unpartitioned spec. Errors
// match ErrPartitionSpec.
func ParsePartitionSpec(expr string, sc *iceberg.Schema) (iceberg.PartitionSpec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return *iceberg.UnpartitionedSpec, nil
	}
	terms, err := parsePartitionTerms(expr)
	if err != nil {
		return iceberg.PartitionSpec{}, err
	}
	var opts []iceberg.PartitionOption
	for _, t := range terms {
		f, ok := sc.FindFieldByName(t.column)
		if !ok {
			return iceberg.PartitionSpec{}, fmt.Errorf("%w: partition %q: no column %q (columns: %s)", ErrPartitionSpec, t.text, t.column, columnNames(sc))
		}
		name := t.column
		if t.name != "identity" {
			name = t.column + "_" + t.name
		}
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, name, t.transform, sc, nil))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return iceberg.PartitionSpec{}, fmt.Errorf("%w: %w", ErrPartitionSpec, err)
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
