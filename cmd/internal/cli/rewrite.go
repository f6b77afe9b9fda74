// Package cli is the command-line shape geocompact's two binaries share
// (geocompact rewrite and geocompact-beam rewrite): the rewrite flags and
// how they become an engine.Request, and the rewrite result as a table.
// It parses and prints only; each binary keeps its exit codes.
package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// RewriteFlags are the flags of a rewrite.
type RewriteFlags struct {
	Table     string
	Strategy  string
	Curve     string
	SortOrder string
	Where     string
	Options   []string
	DryRun    bool
	// AllowLayoutChange lets an explicit layout replace the table's
	// recorded one.
	AllowLayoutChange bool
	// Windows is a --windows file for --curve auto to choose by and
	// --curve kd to split by.
	Windows string
}

// Register adds the flags to fs; --table is required.
func (f *RewriteFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Table, "table", "", "table to rewrite, NAMESPACE.TABLE (required)")
	fs.StringVar(&f.Strategy, "strategy", "", "binpack or sort (default binpack; --curve and --sort-order imply sort)")
	fs.StringVar(&f.Curve, "curve", "", "cluster rows by a curve over their bbox: "+curveHelp())
	fs.StringVar(&f.SortOrder, "sort-order", "", "sort order: 'col [ASC|DESC] [NULLS FIRST|LAST], ...', 'zorder(a, b)' or 'hilbert(a, b)'")
	fs.StringVar(&f.Where, "where", "", "rewrite only files that may hold matching rows, e.g. \"ts >= now() - interval '1 day'\" or 'bbox(0, 40, 10, 50)' (minx > maxx crosses the antimeridian); timestamps are UTC unless they carry an offset")
	fs.StringArrayVar(&f.Options, "option", nil, "rewrite option K=V by Iceberg's name (repeatable)")
	fs.BoolVar(&f.DryRun, "dry-run", false, "print the plan (groups, files, bytes, skipped files and why) and write nothing")
	fs.BoolVar(&f.AllowLayoutChange, "allow-layout-change", false, "rewrite with the given strategy, curve or sort order even when the table records a different layout")
	fs.StringVar(&f.Windows, "windows", "", `with --curve auto or kd: JSON file of the query windows to choose and split for, [{"minx":..,"miny":..,"maxx":..,"maxy":..}, ...]`)
}

// curveHelp lists the --curve names of cluster's registry with their
// descriptions: "linear, zorder, …, kd (a k-d tree of files split by
// cost) or auto (chosen per group by estimate)".
func curveHelp() string {
	var names []string
	for _, c := range cluster.Curves() {
		if c.Description != "" {
			names = append(names, c.Name+" ("+c.Description+")")
		} else {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Request checks the flags (option names and values, the syntax of
// --curve and --sort-order, the strategy) before anything is opened and
// builds the engine's request. Every error it returns is a mistake in the
// command line.
func (f *RewriteFlags) Request() (engine.Request, error) {
	if f.Table == "" {
		return engine.Request{}, errors.New("--table is required: pass --table NAMESPACE.TABLE")
	}
	kv, err := ParseKV(f.Options)
	if err != nil {
		return engine.Request{}, err
	}
	req, err := engine.Request{Strategy: engine.Strategy(f.Strategy), Curve: f.Curve, SortOrder: f.SortOrder, Where: f.Where,
		Options: kv, DryRun: f.DryRun, AllowLayoutChange: f.AllowLayoutChange}.Check()
	if err != nil {
		return req, FlagError(err)
	}
	if f.Windows != "" {
		if c, err := cluster.LookupCurve(f.Curve); err != nil || !c.Windows {
			return req, errors.New("--windows is the query mix --curve auto chooses for and --curve kd splits for; add one of them or drop --windows")
		}
		ws, err := ReadWindowsFile(f.Windows)
		if err != nil {
			return req, err
		}
		req.AutoWindows = []cluster.WindowSet{{Name: filepath.Base(f.Windows), Windows: ws}}
	}
	return req, nil
}

// ReadWindowsFile reads a --windows file (bench.ReadWindows' format);
// its errors name the flag.
func ReadWindowsFile(path string) ([]spatial.Bound, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--windows: %w", err)
	}
	defer f.Close()
	ws, err := bench.ReadWindows(f)
	if err != nil {
		return nil, fmt.Errorf("--windows %s: %w", path, err)
	}
	return ws, nil
}

// requestFlags are the flags of the fields of a request.
var requestFlags = map[string]string{engine.FieldCurve: "--curve", engine.FieldSortOrder: "--sort-order"}

// FlagError words err, a request's error, in the command line's terms:
// a curve, sort order or strategy that does not parse names its flag.
// Other errors are returned as they are.
func FlagError(err error) error {
	var re *engine.RequestError
	if !errors.As(err, &re) {
		return err
	}
	switch {
	case re.Field == engine.FieldStrategy && re.Value != string(engine.BinPack):
		return fmt.Errorf("--%w", re.Err)
	case requestFlags[re.Field] != "":
		return fmt.Errorf("%s: %w", requestFlags[re.Field], re.Err)
	}
	return err
}

// ParseKV parses repeated K=V flags; a bare K (a boolean option set to
// true) has the empty value.
func ParseKV(pairs []string) (map[string]string, error) {
	kv := map[string]string{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		if strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--option %q: want KEY=VALUE", p)
		}
		kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return kv, nil
}

// Column is a column a binary adds to the result table, before DURATION.
type Column struct{ Name, Value string }

// WriteJSON writes v as one indented JSON document (two spaces, a
// trailing newline): every --json output of the binaries goes through it.
func WriteJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteResult writes a rewrite's result as a table (on a dry run after the
// plan), then one line: why nothing was rewritten, what a dry run would
// do, or how the rows were laid out and whether they were verified. human
// renders bytes in binary units, else as raw numbers for scripts. A Delta
// table's commits are counted under VERSIONS, an Iceberg table's under
// SNAPSHOTS.
func WriteResult(out io.Writer, res *engine.Result, human bool, extra ...Column) error {
	if res.DryRun {
		if err := WritePlan(out, res.Plan, human); err != nil {
			return err
		}
	}
	if err := WriteAutoChoices(out, res.Auto); err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	commits := "SNAPSHOTS"
	if res.Format == table.FormatDelta {
		commits = "VERSIONS" // a Delta table commits versions of its log
	}
	head := "REWRITTEN FILES\tADDED FILES\tREWRITTEN BYTES\tFAILED FILES\tREMOVED DELETE FILES\tFILES BEFORE\tFILES AFTER\tBYTES BEFORE\tBYTES AFTER\t" + commits
	row := fmt.Sprintf("%d\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d",
		res.RewrittenDataFilesCount, res.AddedDataFilesCount, FormatBytes(res.RewrittenBytesCount, human),
		res.FailedDataFilesCount, res.RemovedDeleteFilesCount, res.FilesBefore, res.FilesAfter,
		FormatBytes(res.BytesBefore, human), FormatBytes(res.BytesAfter, human), res.SnapshotsCommitted)
	for _, c := range extra {
		head, row = head+"\t"+c.Name, row+"\t"+c.Value
	}
	fmt.Fprintf(w, "%s\tDURATION\n%s\t%s\n", head, row, res.Duration.Round(time.Millisecond))
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case res.NoopReason != "":
		_, err := fmt.Fprintf(out, "nothing rewritten: %s\n", Reason(res.NoopReason))
		return err
	case res.DryRun:
		_, err := fmt.Fprintf(out, "dry run: %d groups, %d files, %s would be rewritten (%s); nothing was written\n",
			len(res.Plan.Groups), res.Plan.Files(), FormatBytes(res.Plan.Bytes(), true), StrategyText(res))
		return err
	}
	verified := "verified: rows, bbox extent and content checksum unchanged"
	if !res.Verified {
		verified = "not all groups committed; see the error"
	}
	_, err := fmt.Fprintf(out, "%s; %s\n", StrategyText(res), verified)
	return err
}

// StrategyText says how a rewrite laid out the rows, and where the layout
// came from (see engine.Result.LayoutText).
func StrategyText(res *engine.Result) string { return res.LayoutText() }

// WriteAutoChoices prints what --curve auto estimated for each group: one
// row per candidate, its mean files planned per window set, and the pick.
func WriteAutoChoices(out io.Writer, choices []engine.AutoChoice) error {
	if len(choices) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := "GROUP\tPARTITION\tFILES\tSAMPLE ROWS\tCANDIDATE"
	for _, name := range choices[0].Windows {
		head += "\tFILES PLANNED (" + name + " WINDOWS)"
	}
	fmt.Fprintln(w, head+"\tSCORE\tCHOSEN")
	for _, c := range choices {
		for _, e := range c.Estimates {
			row := fmt.Sprintf("%d\t%s\t%d\t%d\t%s", c.Group, OrDash(c.Partition), c.Files, c.Sample, e.Curve)
			for _, p := range e.Planned {
				row += fmt.Sprintf("\t%.2f", p)
			}
			chosen := ""
			if e.Curve == c.Curve {
				chosen = "*"
			}
			fmt.Fprintf(w, "%s\t%.2f\t%s\n", row, e.Score, chosen)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out)
	return err
}

// WritePlan prints the groups and the skipped files with their reasons.
func WritePlan(out io.Writer, p *engine.Plan, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tPARTITION\tFILES\tBYTES\tRECORDS\tOUTPUT FILES\tSORT\tPEAK MEMORY\tREASON")
	for i, g := range p.Groups {
		fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n", i+1, OrDash(g.Partition), len(g.Files), FormatBytes(g.Bytes, human), g.Records, g.OutputFiles,
			sortText(g.Sort, human), peakText(g.Sort, human), g.Reason)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintln(out)
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "SKIPPED FILE\tPARTITION\tBYTES\tREASON")
		for _, s := range p.Skipped {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Path, OrDash(s.Partition), FormatBytes(s.Size, human), s.Reason)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(out)
	return err
}

// sortText says how a group is sorted: in memory, or spilled to so many
// bytes of local disk, as sorted runs merged by key or as key-range
// buckets.
func sortText(sp *engine.SortPlan, human bool) string {
	switch {
	case sp == nil:
		return "-"
	case !sp.Spill:
		return "in memory"
	case sp.Runs > 0:
		return fmt.Sprintf("spill: about %d sorted runs merged, %s", sp.Runs, FormatBytes(sp.SpillBytes, human))
	}
	return fmt.Sprintf("spill: %d buckets, %s", sp.Buckets, FormatBytes(sp.SpillBytes, human))
}

func peakText(sp *engine.SortPlan, human bool) string {
	if sp == nil {
		return "-"
	}
	return FormatBytes(sp.PeakMemoryBytes, human)
}

// FormatBytes renders n in binary units on a terminal ("1.2 GiB") and as
// a raw number when piped, so scripts can parse it.
func FormatBytes(n int64, human bool) string {
	if !human {
		return strconv.FormatInt(n, 10)
	}
	return optval.FormatBytes(n)
}

// OrDash is s, or "-" when s is empty.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
