// Command geocompact-beam runs geocompact's rewrite on Apache Beam: Prism
// in this process by default, or Flink, Spark or Dataflow with Beam's
// --runner flags. It plans and commits here; the runner's workers read,
// sort and write.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/spark"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes, as geocompact's.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitConflict = 4
)

// run splits args into Beam's flags (registered on flag.CommandLine;
// a worker is started with nothing else) and the command's, parses
// Beam's and calls beam.Init before cobra sees the rest.
func run(ctx context.Context, args []string, out, errOut io.Writer) int {
	beamArgs, rest := splitArgs(args)
	if err := flag.CommandLine.Parse(beamArgs); err != nil {
		return exitUsage
	}
	if f := flag.Lookup("runner"); f != nil && (f.Value.String() == "" || f.Value.String() == "direct") {
		flag.Set("runner", "prism")
	}
	beam.Init()
	root := newRoot(ctx, out)
	root.SetArgs(rest)
	root.SetOut(out)
	root.SetErr(errOut)
	err := root.Execute()
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, new(*usageError)):
		return exitUsage
	case errors.Is(err, catalogs.ErrConflict):
		return exitConflict
	default:
		return exitError
	}
}

// splitArgs sends each --flag that Beam registered (with its value) to
// Beam, and everything else to the command.
func splitArgs(args []string) (beamArgs, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := flag.CommandLine.Lookup(name)
		if !strings.HasPrefix(a, "-") || f == nil || commandFlags[name] {
			rest = append(rest, a)
			continue
		}
		beamArgs = append(beamArgs, a)
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && bf.IsBoolFlag()) && i+1 < len(args) {
			i++
			beamArgs = append(beamArgs, args[i])
		}
	}
	return beamArgs, rest
}

// commandFlags are the command's own flags, which win over Beam's.
var commandFlags = map[string]bool{"table": true, "config": true, "json": true, "strategy": true, "curve": true, "sort-order": true, "where": true, "option": true, "dry-run": true, "warehouse": true, "catalog": true, "help": true}

type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func newRoot(ctx context.Context, out io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "geocompact-beam", Short: "Run geocompact's rewrite on Apache Beam", SilenceUsage: true}
	root.SetContext(ctx)
	root.AddCommand(newRewriteCmd(out))
	return root
}

type rewriteOptions struct {
	warehouse, catalog, config string
	flags                      cli.RewriteFlags
	json                       bool
}

func newRewriteCmd(out io.Writer) *cobra.Command {
	o := &rewriteOptions{}
	cmd := &cobra.Command{
		Use:     "rewrite --table NS.T",
		Short:   "Compact a table on a Beam runner",
		Example: "$ geocompact-beam rewrite --warehouse ./wh --table gis.roads --curve hilbert --runner prism",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.Worded(runRewrite(cmd.Context(), o, out))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.warehouse, "warehouse", "", "warehouse directory of the embedded catalog")
	f.StringVar(&o.catalog, "catalog", "", "named catalog from the config file")
	f.StringVar(&o.config, "config", "", "config file (default: geocompact.yaml, then ~/.config/geocompact/config.yaml)")
	o.flags.Register(f)
	f.BoolVar(&o.json, "json", false, "write the result as JSON")
	return cmd
}

func runRewrite(ctx context.Context, o *rewriteOptions, out io.Writer) error {
	cfg, err := o.flags.Request()
	if err != nil {
		return &usageError{err}
	}
	file, err := config.Load(o.config)
	if err != nil {
		return &usageError{err}
	}
	spec, err := file.Catalog(o.catalog, o.warehouse)
	if err != nil {
		return &usageError{err}
	}
	cfg.CommitRetries = spec.Retries()
	cli.LimitMemory(cfg, nil) // as geocompact rewrite: Prism runs the workers in this process
	res, err := rewrite(ctx, spec, o.flags.Table, cfg, flag.Lookup("runner").Value.String())
	if err != nil && (res == nil || res.Result == nil) {
		if cli.IsUsage(err) {
			return &usageError{err}
		}
		return err
	}
	if werr := writeResult(out, res, o.json); werr != nil && err == nil {
		err = werr
	}
	return err
}
