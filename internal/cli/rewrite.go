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
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/where"
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
}

// Register adds the flags to fs; --table is required.
func (f *RewriteFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Table, "table", "", "table to rewrite, NAMESPACE.TABLE (required)")
	fs.StringVar(&f.Strategy, "strategy", "", "binpack or sort (default binpack; --curve and --sort-order imply sort)")
	fs.StringVar(&f.Curve, "curve", "", "cluster rows by a curve over their bbox: linear, zorder, hilbert or str (sort-tile-recursive)")
	fs.StringVar(&f.SortOrder, "sort-order", "", "sort order: 'col [ASC|DESC] [NULLS FIRST|LAST], ...', 'zorder(a, b)' or 'hilbert(a, b)'")
	fs.StringVar(&f.Where, "where", "", "rewrite only files that may hold matching rows, e.g. \"ts >= now() - interval '1 day'\" or 'bbox(0, 40, 10, 50)' (minx > maxx crosses the antimeridian); timestamps are UTC unless they carry an offset")
	fs.StringArrayVar(&f.Options, "option", nil, "rewrite option K=V by Iceberg's name (repeatable)")
	fs.BoolVar(&f.DryRun, "dry-run", false, "print the plan (groups, files, bytes, skipped files and why) and write nothing")
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
	if _, err := engine.ParseOptions(kv, nil); err != nil {
		return engine.Request{}, err
	}
	if f.Curve != "" {
		if _, err := cluster.CurveOrder(f.Curve); err != nil {
			return engine.Request{}, fmt.Errorf("--curve: %w", err)
		}
	}
	if f.SortOrder != "" {
		if _, err := cluster.ParseOrder(f.SortOrder); err != nil {
			return engine.Request{}, fmt.Errorf("--sort-order: %w", err)
		}
	}
	switch engine.Strategy(f.Strategy) {
	case "", engine.BinPack, engine.Sort:
	default:
		return engine.Request{}, fmt.Errorf("--strategy %q: want binpack or sort", f.Strategy)
	}
	return engine.Request{Strategy: engine.Strategy(f.Strategy), Curve: f.Curve, SortOrder: f.SortOrder, Where: f.Where,
		Options: kv, DryRun: f.DryRun}, nil
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

// IsUsage reports whether a rewrite failed on the command line's values
// (an option or --where the table cannot take) rather than on the table.
func IsUsage(err error) bool {
	return errors.Is(err, engine.ErrOption) || errors.Is(err, where.ErrInvalid)
}

// Column is a column a binary adds to the result table, before DURATION.
type Column struct{ Name, Value string }

// WriteJSON writes v as indented JSON.
func WriteJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteResult writes a rewrite's result as a table (on a dry run after the
// plan), then one line: why nothing was rewritten, what a dry run would
// do, or how the rows were laid out and whether they were verified. human
// renders bytes in binary units, else as raw numbers for scripts.
func WriteResult(out io.Writer, res *engine.Result, human bool, extra ...Column) error {
	if res.DryRun {
		if err := WritePlan(out, res.Plan, human); err != nil {
			return err
		}
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := "REWRITTEN FILES\tADDED FILES\tREWRITTEN BYTES\tFAILED FILES\tREMOVED DELETE FILES\tFILES BEFORE\tFILES AFTER\tBYTES BEFORE\tBYTES AFTER\tSNAPSHOTS"
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
		_, err := fmt.Fprintf(out, "nothing rewritten: %s\n", res.NoopReason)
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

// StrategyText says how a rewrite laid out the rows.
func StrategyText(res *engine.Result) string {
	if res.SortOrder != "" {
		return fmt.Sprintf("strategy %s by %s", res.Strategy, res.SortOrder)
	}
	return "strategy " + res.Strategy
}

// WritePlan prints the groups and the skipped files with their reasons.
func WritePlan(out io.Writer, p *engine.Plan, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tPARTITION\tFILES\tBYTES\tRECORDS\tOUTPUT FILES\tSORT\tPEAK MEMORY\tREASON")
	for i, g := range p.Groups {
		fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n", i+1, orDash(g.Partition), len(g.Files), FormatBytes(g.Bytes, human), g.Records, g.OutputFiles,
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
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Path, orDash(s.Partition), FormatBytes(s.Size, human), s.Reason)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(out)
	return err
}

// sortText says how a group is sorted: in memory, or spilled into so many
// buckets and bytes of local disk.
func sortText(sp *engine.SortPlan, human bool) string {
	switch {
	case sp == nil:
		return "-"
	case !sp.Spill:
		return "in memory"
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
	return engine.FormatBytes(n)
}

// orDash is s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
