package inspect

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/suggest"
)

// Namespace is a namespace of a catalog and the tables in it.
type Namespace struct {
	Name   string   `json:"namespace"`
	Tables []string `json:"tables"`
}

// ListTables lists the catalog's top-level namespaces and their tables,
// sorted, or, when namespace is not empty, that namespace only. A
// namespace that does not exist is an error wrapping
// catalog.ErrNoSuchNamespace that names the closest existing one.
func ListTables(ctx context.Context, cat catalog.Catalog, namespace string) ([]Namespace, error) {
	idents, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	names := make([]string, len(idents))
	for i, id := range idents {
		names[i] = strings.Join(id, ".")
	}
	slices.Sort(names)
	if namespace != "" {
		if !slices.Contains(names, namespace) {
			hint := suggest.Hint(namespace, names)
			if hint == "" {
				hint = "; run geocompact tables to list the namespaces"
			}
			return nil, fmt.Errorf("%w: %s%s", catalog.ErrNoSuchNamespace, namespace, hint)
		}
		names = []string{namespace}
	}
	out := make([]Namespace, 0, len(names))
	for _, ns := range names {
		tables := []string{}
		for id, err := range cat.ListTables(ctx, table.Identifier(strings.Split(ns, "."))) {
			if err != nil {
				return nil, fmt.Errorf("list tables of %s: %w", ns, err)
			}
			tables = append(tables, id[len(id)-1])
		}
		slices.Sort(tables)
		out = append(out, Namespace{Name: ns, Tables: tables})
	}
	return out, nil
}
