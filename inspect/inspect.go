// Package inspect reads a table's metadata tables (Iceberg's files,
// snapshots, manifests, partitions and history; a Delta table's files
// and history) as rows of named fields, and describes its schema, for the
// inspect command and for Go programs that look into a table. Each format
// reads its own metadata tables; inspect asks the table's format for
// them.
package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/table"
)

// ErrKind is returned for a metadata table name Rows does not
// know, or that the table does not have.
var ErrKind = table.ErrMetadataTable

// Kind names one of a table's metadata tables.
type Kind string

// The metadata tables Rows reads, by their Iceberg names.
const (
	Files      Kind = "files"
	Snapshots  Kind = "snapshots"
	Manifests  Kind = "manifests"
	Partitions Kind = "partitions"
	History    Kind = "history"
)

// Kinds lists the metadata tables Rows reads, in help order.
var Kinds = []Kind{Files, Snapshots, Manifests, Partitions, History}

// ParseKind checks a metadata table name.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(s))
	if slices.Contains(Kinds, k) {
		return k, nil
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("%w %q, want one of %s", ErrKind, s, strings.Join(names, ", "))
}

// Field is one named value of a Row.
type Field = table.Field

// Row is one row of a metadata table (see table.Row).
type Row = table.Row

// metadataTables is a format that reads its table's metadata tables:
// icebergtable.Table through iceberg-go, a Delta table's format from its
// log.
type metadataTables interface {
	// MetadataRows reads the metadata table called name; one the
	// table does not have is an error wrapping ErrKind.
	MetadataRows(ctx context.Context, name string) ([]table.Row, error)
}

// Rows reads the metadata table kind of t, as t's format reads it (see
// icebergtable.Table.MetadataRows and table/deltatable). A metadata table
// the format does not have is an error wrapping ErrKind that names it.
func Rows(ctx context.Context, t table.Table, kind Kind) ([]Row, error) {
	mt, ok := t.Format.(metadataTables)
	if !ok {
		return nil, fmt.Errorf("%w %q: table %s has no metadata tables", ErrKind, kind, t.Name)
	}
	return mt.MetadataRows(ctx, string(kind))
}
