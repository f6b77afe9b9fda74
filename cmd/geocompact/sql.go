package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/sql/procedure"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/config"
	"github.com/geocompact/geocompact/table/layouts"
)

func init() { register(newSQLCmd) }

type sqlOptions struct {
	g      *globalOptions
	file   string
	dryRun bool
	force  bool
}

// sqlLong is the sql command's help.
const sqlLong = `Sql runs the CALL statements that Spark jobs and notebooks send to Iceberg, in
Spark's syntax, one after the other:

  rewrite_data_files   (table, strategy, sort_order, options, where)
  expire_snapshots     (table, older_than, retain_last, max_concurrent_deletes, ...)
  remove_orphan_files  (table, older_than, location, dry_run, ...)
  rewrite_manifests    (table, use_caching, ...)

Arguments go by name (table => 'db.t') or by position in Spark's order;
map('k', 'v', ...), array(...), 'strings' or "strings" with backslash escapes,
numbers, TRUE/FALSE and TIMESTAMP '2026-01-02 00:00:00' (UTC unless it has an
offset) are understood, as are -- and /* */ comments. sort_order takes
zorder(a, b) and hilbert(a, b); where takes Spark's literals ("x" is a
string, ` + "`x`" + ` a column) plus bbox(minx, miny, maxx, maxy).

CALL cat.system.proc(...) runs on the catalog cat of the config file (else of
PyIceberg's configuration, as --catalog finds it), or on the embedded
catalog when cat is "geocompact"; CALL system.proc(...) runs on the
current catalog (--catalog, --warehouse). Every statement is checked, its
table loaded, before the first one runs. Each prints Spark's result columns
under Spark's names; --json writes one object per statement, one per line.
The first statement that fails stops the script.

Delta tables, named by location, take Delta Lake's statements:

  VACUUM delta.` + "`/path`" + ` [RETAIN n HOURS] [DRY RUN]     (or VACUUM '/path' ...)
  OPTIMIZE delta.` + "`/path`" + ` [WHERE ...] [ZORDER BY (a, b) | HILBERT BY (a, b)]
  REORG TABLE delta.` + "`/path`" + ` [WHERE ...] APPLY (PURGE)

VACUUM does what geocompact vacuum --delta does: RETAIN below the table's
delta.deletedFileRetentionDuration (7 days when unset) needs --force, which
stands for Spark's spark.databricks.delta.retentionDurationCheck.enabled=false.
OPTIMIZE is rewrite --delta: bin-packing, clustered by ZORDER BY or HILBERT
BY, or by the table's recorded layout when it names neither. REORG TABLE …
APPLY (PURGE) is rewrite --delta --purge-deletion-vectors: it rewrites exactly
the files that carry a deletion vector.

ALTER TABLE records a table's properties and layout, as geocompact alter
does (the same code, so sizes take units and the same keys are refused):

  ALTER TABLE ns.t SET TBLPROPERTIES ('write.target-file-size-bytes' = '128MiB', ...)
  ALTER TABLE ns.t UNSET TBLPROPERTIES [IF EXISTS] ('owner', ...)
  ALTER TABLE ns.t WRITE ORDERED BY ts, id DESC [NULLS FIRST|LAST]   (alter --sort-order)
  ALTER TABLE ns.t WRITE ORDERED BY hilbert(bbox_minx, bbox_miny)    (zorder, hilbert, str, kd)
  ALTER TABLE ns.t WRITE UNORDERED                                   (alter --unsorted)

The table is ns.t (cat.ns.t on catalog cat), or delta.` + "`/path`" + ` for a Delta
table, whose layout goes to ` + layouts.Prop + `. UNSET without IF EXISTS refuses
a key the table does not hold. ALTER TABLE has no dry run: --dry-run checks
it and skips it.

--dry-run runs every statement as a dry run (rewrite_data_files plans,
expire_snapshots and remove_orphan_files list, rewrite_manifests is skipped);
expire_snapshots also takes dry_run => true, as remove_orphan_files does.
older_than younger than 1h needs --force. --dry-run makes VACUUM a DRY RUN.

The statements come from the argument, from -f FILE, or from standard input
("-" as the argument or FILE, or a pipe when none is given). The argument is
always statement text, never flags, so it may begin with a -- comment; flags
go before or after it.`

func newSQLCmd(g *globalOptions) *cobra.Command {
	o := &sqlOptions{g: g}
	cmd := &cobra.Command{
		Use:   `sql ("CALL …; …" | -f FILE | -)`,
		Short: "Run Spark SQL CALL procedures, ALTER TABLE, and Delta Lake's OPTIMIZE, REORG and VACUUM",
		Long:  sqlLong,
		Example: `  $ geocompact sql "CALL system.rewrite_data_files(table => 'gis.parcels', strategy => 'sort', sort_order => 'hilbert(bbox_minx, bbox_miny)')"
  $ geocompact sql --catalog lake "CALL lake.system.expire_snapshots('gis.parcels', TIMESTAMP '2026-01-01 00:00:00', 10)"
  $ geocompact sql -f nightly.sql --json
  $ geocompact sql < nightly.sql
  $ geocompact sql "-- compact the small files
    CALL system.rewrite_data_files('gis.parcels')"
  $ geocompact sql --dry-run -f nightly.sql
  $ geocompact sql "VACUUM delta.` + "`./lake/pings`" + ` RETAIN 336 HOURS DRY RUN"
  $ geocompact sql "ALTER TABLE gis.parcels WRITE ORDERED BY hilbert(); ALTER TABLE gis.parcels SET TBLPROPERTIES ('write.target-file-size-bytes' = '128MiB')"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := o.script(args)
			if err != nil {
				return err
			}
			return runSQL(cmd.Context(), o, src)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", `read the statements from FILE ("-" for standard input)`)
	f.BoolVar(&o.dryRun, "dry-run", false, "run every statement as a dry run: plan and list, write and delete nothing")
	f.BoolVar(&o.force, "force", false, "allow older_than below the 1h retention floor, and VACUUM RETAIN below the table's delta.deletedFileRetentionDuration")
	return cmd
}

// script returns the statements from the argument, from --file, or from
// standard input: "-" as the argument or the file, or a pipe when neither
// is given. The argument is statement text only, never flags (see
// sqlTextLast), so a statement may begin with a -- comment.
func (o *sqlOptions) script(args []string) (string, error) {
	switch {
	case len(args) == 1 && o.file != "":
		return "", usageErrorf("give the statements as an argument or with -f FILE, not both")
	case len(args) == 1 && args[0] != "-":
		return args[0], nil
	case len(args) == 0 && o.file == "" && !o.g.IO.InPiped:
		return "", usageErrorf(`give the statements as an argument ("CALL system.rewrite_data_files('db.t')"), with -f FILE, or on standard input`)
	}
	var b []byte
	var err error
	if o.file == "" || o.file == "-" {
		b, err = io.ReadAll(o.g.IO.In)
	} else {
		b, err = os.ReadFile(o.file)
	}
	if err != nil {
		return "", fmt.Errorf("read statements: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		where := "standard input"
		if o.file != "" && o.file != "-" {
			where = o.file
		}
		return "", usageErrorf("no statements in %s", where)
	}
	return string(b), nil
}

func runSQL(ctx context.Context, o *sqlOptions, src string) error {
	cfg, err := config.Load(o.g.Config)
	if err != nil {
		return err
	}
	cats := procedure.Catalogs{Config: cfg, Current: o.g.Catalog, Warehouse: o.g.Warehouse}
	p := newProgress(o.g, "rewrite", "")
	opts := procedure.Options{DryRun: o.dryRun, Force: o.force, Logger: o.g.Logger(), Progress: func(e engine.Progress) { rewriteProgress(p)(e) },
		WrapCatalog: func(c catalog.Catalog, spec catalogs.Spec) catalog.Catalog {
			return warnOutsideWarehouse(c, spec, o.g.IO.ErrOut)
		}}
	script, err := procedure.Prepare(ctx, src, cats, opts)
	if err != nil {
		return sqlPrepareError(err)
	}
	defer script.Close()
	cli.LimitMemory(largestMemoryBudget(script.Calls()), nil)
	first := true
	return script.Run(ctx, func(r *procedure.Result) error {
		p.Done() // no rewrite runs between statements
		p = newProgress(o.g, "rewrite", "")
		for _, note := range r.Ignored {
			fmt.Fprintf(o.g.IO.ErrOut, "geocompact: statement %d: %s\n", r.Statement, note)
		}
		if o.g.JSON {
			return json.NewEncoder(o.g.IO.Out).Encode(r)
		}
		if !first {
			fmt.Fprintln(o.g.IO.Out)
		}
		first = false
		return writeSQLResult(o.g.IO.Out, r, o.g.IO.OutTTY)
	})
}

// largestMemoryBudget returns the checked request of the options of the
// call that names the largest max-group-memory-bytes, for
// cli.LimitMemory; an unchecked one when none does.
func largestMemoryBudget(calls []sql.Call) engine.Request {
	var best engine.Request
	var most int64
	for _, c := range calls {
		if _, named := c.Options[engine.OptMaxGroupMemory]; !named {
			continue
		}
		req, err := engine.Request{Options: c.Options}.Check()
		if err != nil {
			continue
		}
		if o, err := req.OptionsFor(nil); err == nil && o.MaxGroupMemoryBytes > most {
			best, most = req, o.MaxGroupMemoryBytes
		}
	}
	return best
}

// sqlPrepareError makes a mistake in the statements a usage error (exit
// 2), a table that does not exist among them: nothing ran. A catalog
// that cannot be reached stays an error (exit 1).
func sqlPrepareError(err error) error {
	if cli.IsUsage(err) || errors.Is(err, catalog.ErrNoSuchTable) {
		return &usageError{err}
	}
	return err
}

// writeSQLResult prints one statement's result: a line naming the call,
// then Spark's columns and rows.
func writeSQLResult(out io.Writer, r *procedure.Result, human bool) error {
	fmt.Fprintln(out, sqlHeader(r))
	if r.Skipped != "" {
		_, err := fmt.Fprintf(out, "skipped: %s\n", r.Skipped)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(r.Columns, "\t"))
	for _, row := range r.Rows {
		cells := make([]string, len(row.Values))
		for i, v := range row.Values {
			cells[i] = fmt.Sprint(v)
			if n, ok := v.(int64); ok && strings.HasSuffix(r.Columns[i], "_bytes_count") {
				cells[i] = cli.FormatBytes(n, human)
			}
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if r.NoopReason != "" {
		if _, err := fmt.Fprintf(out, "nothing rewritten: %s\n", r.NoopReason); err != nil {
			return err
		}
	}
	switch v := r.Detail.(type) {
	case *delta.VacuumResult:
		fmt.Fprintln(out, vacuumSummary(v))
	case *maintain.ExpireResult:
		if err := writeKeptFiles(out, v.Kept, human, "geocompact expire --delete-outside-location deletes them"); err != nil {
			return err
		}
	case *maintain.OrphansResult:
		if err := writeKeptFiles(out, v.Kept, human, ""); err != nil {
			return err
		}
	case *alter.Result:
		for _, k := range slices.Sorted(maps.Keys(v.Set)) {
			fmt.Fprintf(out, "set %s = %s\n", k, v.Set[k])
		}
		for _, k := range v.Unset {
			fmt.Fprintf(out, "unset %s\n", k)
		}
	}
	_, err := fmt.Fprintf(out, "(%d %s)\n", len(r.Rows), plural(len(r.Rows), "row"))
	return err
}

// sqlHeader is the line naming a statement's call and table.
func sqlHeader(r *procedure.Result) string {
	mode := ""
	if r.DryRun {
		mode = " (dry run)"
	}
	switch {
	case r.Command == sql.CommandCall:
		return fmt.Sprintf("statement %d (line %d): %s.system.%s on %s%s", r.Statement, r.Line, r.Catalog, r.Procedure, r.Table, mode)
	case r.Location == "":
		return fmt.Sprintf("statement %d (line %d): %s %s.%s%s", r.Statement, r.Line, r.Command, r.Catalog, r.Table, mode)
	}
	return fmt.Sprintf("statement %d (line %d): %s on Delta table %s%s", r.Statement, r.Line, r.Command, r.Location, mode)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
