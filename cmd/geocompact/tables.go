package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/inspect"
)

func init() { register(newTablesCmd) }

func newTablesCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "tables [NAMESPACE]",
		Short: "List the namespaces and tables of the warehouse or catalog",
		Long: `Tables lists the top-level namespaces of the catalog the global flags select
(--warehouse or --catalog) and the tables in each, or the tables of one
namespace.`,
		Example: `  $ geocompact tables
  $ geocompact tables gis --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, _, err := g.openCatalog(cmd.Context())
			if err != nil {
				return err
			}
			var ns string
			if len(args) == 1 {
				ns = args[0]
			}
			list, err := inspect.ListTables(cmd.Context(), cat, ns)
			if err != nil {
				return err
			}
			if g.JSON {
				return cli.WriteJSON(g.IO.Out, list)
			}
			w := tabwriter.NewWriter(g.IO.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE\tTABLE")
			for _, n := range list {
				if len(n.Tables) == 0 {
					fmt.Fprintf(w, "%s\t-\n", n.Name)
				}
				for _, t := range n.Tables {
					fmt.Fprintf(w, "%s\t%s\n", n.Name, t)
				}
			}
			return w.Flush()
		},
	}
}
