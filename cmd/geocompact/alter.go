package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

func init() { register(newAlterCmd) }

type alterOptions struct {
	g     *globalOptions
	table string
	// delta is the location of a Delta table to alter instead.
	delta string
	curve string
	order string
	// unsorted records no layout (Spark's WRITE UNORDERED).
	unsorted bool
	set      []string
	unset    []string
}

func newAlterCmd(g *globalOptions) *cobra.Command {
	o := &alterOptions{g: g}
	cmd := &cobra.Command{
		Use:   "alter (--table NS.T | --delta LOCATION) [--curve C | --sort-order EXPR | --unsorted] [--set K=V]... [--unset K]...",
		Short: "Record a table's layout and set or unset its properties",
		Long: `Alter records how a table is laid out and sets its properties, as Spark's
ALTER TABLE ... WRITE ORDERED BY and SET/UNSET TBLPROPERTIES do. A rewrite
(and maintain) without --strategy, --curve or --sort-order then follows the
recorded layout and the table's write.target-file-size-bytes.

A plain column order (--sort-order 'ts, device_id DESC', or --curve linear
on a table with bbox columns) becomes the table's Iceberg sort order, so
other engines honour it. A curve (zorder, hilbert, str, kd), a curve expression
('hilbert(bbox_minx, bbox_miny)') and auto cannot be expressed by Iceberg's
sort-order spec; they are recorded in the table property ` + layouts.Prop + `
and the Iceberg sort order is reset to unsorted.

--unsorted records no layout, as Spark's ALTER TABLE ... WRITE UNORDERED
does: it resets the Iceberg sort order to unsorted and removes
` + layouts.Prop + ` in the same commit, so a rewrite without layout flags
bin-packs, as on a table that never recorded a layout.

Sizes take units (--set write.target-file-size-bytes=128MiB) and are stored
as byte counts.

--delta LOCATION alters a Delta table (a directory, file: URL or
s3://BUCKET/PREFIX) in one SET TBLPROPERTIES commit: any layout is recorded
in ` + layouts.Prop + ` (Delta has no sort order; --unsorted removes it), the target file size is
Delta's own delta.targetFileSize, and of the delta.* properties only those
that need no protocol upgrade may change (` + strings.Join(delta.SettableProperties, ", ") + `).`,
		Example: `  $ geocompact alter --table gis.telemetry --curve hilbert --set write.target-file-size-bytes=128MiB
  $ geocompact alter --table gis.telemetry --sort-order 'ts, device_id'
  $ geocompact alter --table gis.telemetry --curve auto
  $ geocompact alter --table gis.telemetry --unsorted
  $ geocompact alter --table gis.telemetry --unset ` + layouts.Prop + `
  $ geocompact alter --delta ./lake/pings --curve hilbert --set delta.targetFileSize=128MiB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := o.request()
			if err != nil {
				return err
			}
			return runAlter(cmd.Context(), o, req)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table to alter, NAMESPACE.TABLE")
	f.StringVar(&o.curve, "curve", "", "record a curve layout: "+strings.Join(cluster.CurveNames(), ", "))
	f.StringVar(&o.order, "sort-order", "", "record a sort order: 'col [ASC|DESC] [NULLS FIRST|LAST], ...', 'zorder(a, b)' or 'hilbert(a, b)'")
	f.BoolVar(&o.unsorted, "unsorted", false, "record no layout: reset the Iceberg sort order to unsorted and remove "+layouts.Prop)
	f.StringArrayVar(&o.set, "set", nil, "set a table property KEY=VALUE (repeatable; sizes take units)")
	f.StringArrayVar(&o.unset, "unset", nil, "remove a table property (repeatable)")
	f.StringVar(&o.delta, "delta", "", "alter the Delta table at this location (a directory, file: URL or s3://BUCKET/PREFIX) instead of a catalog table")
	cmd.MarkFlagsOneRequired("table", "delta")
	cmd.MarkFlagsMutuallyExclusive("table", "delta")
	return cmd
}

// request checks the flags before anything is opened, as far as no
// table's rules change them (alter.Request.Precheck); every mistake is a
// usage error. alter.Apply checks the rest against the table, by its
// format's rules, and runAlter reports those mistakes as usage errors too.
func (o *alterOptions) request() (alter.Request, error) {
	set := map[string]string{}
	for _, p := range o.set {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return alter.Request{}, usageErrorf("--set %q: want KEY=VALUE", p)
		}
		set[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	req := alter.Request{Curve: o.curve, SortOrder: o.order, Unsorted: o.unsorted, Set: set, Unset: o.unset}
	if err := req.Precheck(); err != nil {
		return req, &usageError{err}
	}
	return req, nil
}

func runAlter(ctx context.Context, o *alterOptions, req alter.Request) error {
	res, err := applyAlter(ctx, o, req)
	if err != nil {
		if errors.Is(err, optval.ErrBad) {
			return &usageError{err}
		}
		return err
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, res)
	}
	w := tabwriter.NewWriter(o.g.IO.Out, 0, 4, 2, ' ', 0)
	if res.Version != nil {
		fmt.Fprintln(w, "TABLE\tLAYOUT\tRECORDED IN\tVERSION")
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\n", res.Table, orDefault(res.Layout.Text, "none (binpack)"), cli.OrDash(res.Layout.Source), *res.Version)
	} else {
		fmt.Fprintln(w, "TABLE\tLAYOUT\tRECORDED IN\tICEBERG SORT ORDER")
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", res.Table, orDefault(res.Layout.Text, "none (binpack)"), cli.OrDash(res.Layout.Source), orDefault(res.SortOrder, "unsorted"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(res.Set) == 0 && len(res.Unset) == 0 {
		return nil
	}
	fmt.Fprintln(o.g.IO.Out)
	w = tabwriter.NewWriter(o.g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PROPERTY\tVALUE")
	for _, k := range slices.Sorted(maps.Keys(res.Set)) {
		fmt.Fprintf(w, "%s\t%s\n", k, res.Set[k])
	}
	for _, k := range res.Unset {
		fmt.Fprintf(w, "%s\t(unset)\n", k)
	}
	return w.Flush()
}

// applyAlter opens the table the flags name, once, and alters it.
func applyAlter(ctx context.Context, o *alterOptions, req alter.Request) (*alter.Result, error) {
	t, err := o.g.openTable(ctx, table.Ref{Name: o.table, Location: o.delta}, toChange)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return alter.Apply(ctx, t.Table, req)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
