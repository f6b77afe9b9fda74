package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/inspect"
)

// newInspectSchemaCmd is "inspect schema": the table's columns, geometry,
// partition spec, sort order and properties.
func newInspectSchemaCmd(o *inspectOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "schema (--table NS.T | --delta LOCATION)",
		Aliases: []string{"describe"},
		Short:   "Show the table's columns, geometry column, encoding, CRS, partition spec, sort order and properties",
		Example: `  $ geocompact inspect schema --table demo.pings
  $ geocompact inspect schema --table demo.pings --json | jq .geometry`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.kind = ""
			if err := o.check(); err != nil {
				return err
			}
			return runInspectSchema(cmd.Context(), o)
		},
	}
}

func runInspectSchema(ctx context.Context, o *inspectOptions) error {
	s, err := tableSchema(ctx, o)
	if err != nil {
		return err
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, s)
	}
	return writeTableSchema(o.g.IO.Out, s)
}

// tableSchema describes the --table or --delta table.
func tableSchema(ctx context.Context, o *inspectOptions) (inspect.TableSchema, error) {
	t, err := o.g.openTable(ctx, o.flags.ref(), toDescribe)
	if err != nil {
		return inspect.TableSchema{}, err
	}
	defer t.Close()
	return inspect.Schema(t.Table)
}

// writeTableSchema prints s as a header block, the columns and the
// properties.
func writeTableSchema(out io.Writer, s inspect.TableSchema) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	format := fmt.Sprintf("format v%d", s.FormatVersion)
	if s.Format != "" {
		format = s.Format
	}
	fmt.Fprintf(w, "table:\t%s (%s)\n", s.Table, format)
	if g := s.Geometry; g != nil {
		bbox := strings.Join(g.BBoxColumns, ", ")
		if bbox == "" {
			bbox = "none"
		}
		fmt.Fprintf(w, "geometry column:\t%s\n", g.Column)
		fmt.Fprintf(w, "encoding:\t%s\n", g.Encoding)
		fmt.Fprintf(w, "crs:\t%s (from %s)\n", g.CRS, g.CRSSource)
		fmt.Fprintf(w, "bbox columns:\t%s\n", bbox)
	} else {
		fmt.Fprintf(w, "geometry column:\tnone (%s)\n", s.GeometryProblem)
	}
	fmt.Fprintf(w, "partition spec:\t%s\n", s.PartitionSpec)
	fmt.Fprintf(w, "sort order:\t%s\n", s.SortOrder)
	if s.LastRewrite != "" {
		fmt.Fprintf(w, "last rewrite:\t%s\n", s.LastRewrite)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ID\tCOLUMN\tTYPE\tREQUIRED")
	for _, c := range s.Columns {
		fmt.Fprintf(w, "%d\t%s\t%s\t%v\n", c.ID, c.Name, c.Type, c.Required)
	}
	if len(s.Properties) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "PROPERTY\tVALUE")
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			fmt.Fprintf(w, "%s\t%s\n", k, s.Properties[k])
		}
	}
	return w.Flush()
}
