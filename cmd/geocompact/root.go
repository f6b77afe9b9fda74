package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/config"
)

// Exit codes, decided once in run.
const (
	exitOK        = 0
	exitError     = 1
	exitUsage     = 2
	exitViolation = 3
	exitConflict  = 4
)

// ioStreams are the streams a command writes to, with what is known about
// the terminal (gh's iostreams).
type ioStreams struct {
	In          io.Reader
	Out, ErrOut io.Writer
	// OutTTY and ErrTTY report whether stdout and stderr are terminals:
	// human units and progress bars only appear on a terminal.
	OutTTY, ErrTTY bool
	// InPiped reports whether stdin is a pipe or a file, not a terminal
	// or nothing: sql reads its statements there when given none.
	InPiped bool
}

func newIOStreams(in, out, errOut *os.File) *ioStreams {
	return &ioStreams{In: in, Out: out, ErrOut: errOut, OutTTY: isTerminal(out), ErrTTY: isTerminal(errOut), InPiped: isPiped(in)}
}

// isPiped reports whether f is a pipe or a regular file.
func isPiped(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && (st.Mode()&os.ModeNamedPipe != 0 || st.Mode().IsRegular())
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// globalOptions are the flags every command shares.
type globalOptions struct {
	IO        *ioStreams
	Warehouse string
	Catalog   string
	Config    string
	// CatalogFromEnv selects the catalog given as PyIceberg properties in
	// $GEOCOMPACT_CATALOG_PROPERTIES, used alone (the Python API's catalog
	// objects and dicts).
	CatalogFromEnv bool
	JSON           bool
	Quiet          bool
	Verbose        bool
	LogLevel       string
	LogFormat      string

	logger *slog.Logger
}

// commands holds the constructors of the subcommands; each command's file
// registers its own in init, so commands are added without touching this
// file.
var commands []func(*globalOptions) *cobra.Command

func register(newCmd func(*globalOptions) *cobra.Command) { commands = append(commands, newCmd) }

// usageError marks a mistake in the command line: exit 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf returns a usage error (exit 2) with a formatted message.
func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exitCodeError carries an explicit exit code with an error that has
// already been reported (or needs no message, when err is nil).
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.err }

func newRootCmd(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "geocompact",
		Short: "Keep spatial Apache Iceberg and Delta Lake tables fast",
		Long: `geocompact compacts the small files of spatial Iceberg and Delta Lake tables
into target-sized files clustered by a linear, Z-order, Hilbert, STR or kd
layout over bounding boxes, and commits them as an Iceberg replace snapshot
or a Delta OPTIMIZE that changes no data. It validates geometry before every
write, maintains delete files, expires snapshots, removes orphan files,
vacuums Delta tables, and measures how many files bbox queries plan.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return g.setup()
		},
	}
	root.Version = "-"
	root.SetVersionTemplate(versionText(debug.ReadBuildInfo()))
	root.SuggestionsMinimumDistance = 2
	root.SetOut(g.IO.Out)
	root.SetErr(g.IO.ErrOut)
	root.SetIn(g.IO.In)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })

	pf := root.PersistentFlags()
	pf.StringVar(&g.Warehouse, "warehouse", envOr("GEOCOMPACT_WAREHOUSE", catalogs.DefaultWarehouse), "warehouse directory of the embedded catalog (env GEOCOMPACT_WAREHOUSE)")
	pf.StringVar(&g.Catalog, "catalog", "", "catalog name from the config file, else from PyIceberg's ~/.pyiceberg.yaml and PYICEBERG_CATALOG__* variables (default: the embedded SQLite catalog in the warehouse)")
	pf.StringVar(&g.Config, "config", "", "config file (default ./geocompact.yaml, then ~/.config/geocompact/config.yaml)")
	pf.BoolVar(&g.CatalogFromEnv, "catalog-from-env", false, "use the catalog whose PyIceberg properties $"+catalogPropertiesEnv+" holds as JSON, alone: no config file, .pyiceberg.yaml or PYICEBERG_CATALOG__* variable is read")
	_ = pf.MarkHidden("catalog-from-env")
	pf.BoolVar(&g.JSON, "json", false, "write the result as JSON")
	pf.BoolVarP(&g.Verbose, "verbose", "v", false, "log progress (same as --log-level info)")
	pf.BoolVarP(&g.Quiet, "quiet", "q", false, "show no progress on a terminal")
	pf.StringVar(&g.LogLevel, "log-level", "warn", "log level: debug, info, warn or error")
	pf.StringVar(&g.LogFormat, "log-format", "text", "log format: text or json")

	for _, newCmd := range commands {
		root.AddCommand(newCmd(g))
	}
	markRunErrors(root)
	return root
}

// runError is an error a command returned while running, as opposed to
// cobra rejecting the command line before anything ran. Only errors of
// neither kind nor usageError are usage errors decided by cobra.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// markRunErrors wraps the run functions of cmd and its subcommands so that
// their errors are runErrors.
func markRunErrors(cmd *cobra.Command) {
	mark := func(f func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			if err := f(c, args); err != nil {
				return &runError{err}
			}
			return nil
		}
	}
	if cmd.PersistentPreRunE != nil {
		cmd.PersistentPreRunE = mark(cmd.PersistentPreRunE)
	}
	if cmd.RunE != nil {
		cmd.RunE = mark(cmd.RunE)
	}
	for _, sub := range cmd.Commands() {
		markRunErrors(sub)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// setup builds the stderr logger from the log flags.
func (g *globalOptions) setup() error {
	level := g.LogLevel
	if g.Verbose && level == "warn" {
		level = "info"
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return usageErrorf("--log-level %q: want debug, info, warn or error", g.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch g.LogFormat {
	case "text":
		g.logger = slog.New(slog.NewTextHandler(g.IO.ErrOut, opts))
	case "json":
		g.logger = slog.New(slog.NewJSONHandler(g.IO.ErrOut, opts))
	default:
		return usageErrorf("--log-format %q: want text or json", g.LogFormat)
	}
	return nil
}

// Logger returns the logger built from the log flags.
func (g *globalOptions) Logger() *slog.Logger {
	if g.logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return g.logger
}

// openCatalog opens the catalog the global flags select: a named catalog
// from the config file, or the embedded SQLite catalog in the warehouse.
func (g *globalOptions) openCatalog(ctx context.Context) (catalog.Catalog, catalogs.Spec, error) {
	spec, err := g.catalogSpec()
	if err != nil {
		return nil, spec, err
	}
	cat, err := catalogs.Open(ctx, spec)
	if err != nil {
		return cat, spec, err
	}
	return warnOutsideWarehouse(cat, spec, g.IO.ErrOut), spec, nil
}

// catalogPropertiesEnv holds the catalog --catalog-from-env uses:
// {"name": NAME, "properties": {KEY: VALUE, ...}} in PyIceberg's keys. The
// environment, not the command line, so that secrets stay out of process
// listings.
const catalogPropertiesEnv = "GEOCOMPACT_CATALOG_PROPERTIES"

func (g *globalOptions) catalogSpec() (catalogs.Spec, error) {
	if g.CatalogFromEnv {
		if g.Catalog != "" {
			return catalogs.Spec{}, usageErrorf("--catalog and --catalog-from-env exclude each other")
		}
		doc, ok := os.LookupEnv(catalogPropertiesEnv)
		if !ok {
			return catalogs.Spec{}, usageErrorf("--catalog-from-env: %s is not set", catalogPropertiesEnv)
		}
		return config.Standalone([]byte(doc), catalogPropertiesEnv)
	}
	cfg, err := config.Load(g.Config)
	if err != nil {
		return catalogs.Spec{}, err
	}
	return cfg.Catalog(g.Catalog, g.Warehouse)
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, ios *ioStreams) int {
	g := &globalOptions{IO: ios}
	root := newRootCmd(g)
	root.SetArgs(sqlTextLast(root, args))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	var ec *exitCodeError
	if !errors.As(err, &ec) || ec.err != nil {
		fmt.Fprintf(ios.ErrOut, "geocompact: %s\n", userMessage(err))
	}
	return code
}

// exitCode decides the exit code of err by its type: an explicit code, a
// usage error, a lost commit race, an error of a command that ran (1), and
// anything else cobra returned before running a command (an unknown
// command, a wrong number of arguments, a missing required flag) is a
// usage error.
func exitCode(err error) int {
	if ec, ok := errors.AsType[*exitCodeError](err); ok {
		return ec.code
	}
	switch {
	case errors.As(err, new(*usageError)):
		return exitUsage
	case catalogs.IsRetryable(err):
		return exitConflict
	case errors.As(err, new(*runError)):
		return exitError
	}
	return exitUsage
}

// packagePrefixes are the Go package names the library's messages begin
// with ("engine: ", "cluster: "): they name where in the code an error
// came from, which means nothing to a user, so userMessage drops them.
// TestPackagePrefixesAreDropped reads the source of every package the
// binary links and fails when a message begins with a package name
// missing here.
var packagePrefixes = []string{"engine", "cluster", "spatial", "validate", "ingest", "where", "maintain", "inspect",
	"bench", "delta", "suggest", "spill", "config", "sql", "procedure", "verify", "job", "localpath"}

// internalPrefix matches one of packagePrefixes at the start of a message
// or of a wrapped one.
var internalPrefix = regexp.MustCompile(`(^|: )(?:` + strings.Join(packagePrefixes, "|") + `): `)

// userMessage is err as one line of stderr in the command line's terms
// (cli.Words) without internal package prefixes.
func userMessage(err error) string {
	s := oneLine(cli.Words(err))
	for {
		t := internalPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}

// oneLine keeps an error on one line of stderr.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}
