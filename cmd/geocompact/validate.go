package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/tablecheck"
)

func init() { register(newValidateCmd) }

type validateOptions struct {
	g        *globalOptions
	tbl      tableFlags
	files    []string
	cfg      validate.Config
	crs      string
	geometry string
}

func newValidateCmd(g *globalOptions) *cobra.Command {
	o := &validateOptions{g: g, cfg: validate.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "validate (FILE... | --table NS.T | --delta LOCATION)",
		Short: "Check GeoParquet files or a table's data for bad geometry, CRS and bbox columns",
		Long: `Validate reads GeoParquet files, or the data files of a table's current
snapshot, and reports every row whose geometry is not valid WKB, whose bbox
columns disagree with the geometry, or that is null, plus file-level problems:
a missing or mismatched CRS, bad GeoParquet metadata, missing bbox columns or
a corrupt file. It prints counts per check code and the first offending rows.

For each file it prints the geometry column, encoding, CRS, the geometry
types found and the rows' bbox.

Reading is lenient on GeoParquet hints and strict on data: a malformed
optional hint is a warning with its own code (geo.covering-flat for covering
paths that are flat column names, read as the bbox columns they name;
geo.covering for an unusable covering, which is ignored; geo.bbox for a
file bbox that is malformed or does not contain the data).

With --delta, the live rows of a Delta table's latest version are checked
(deletion vectors applied; row numbers count a file's live rows). The
geometry column is --geometry-column, else the table property
geocompact.geometry.column, else a binary column named geometry; the bbox
columns are bbox_minx, bbox_miny, bbox_maxx and bbox_maxy, or a struct
column bbox {xmin, ymin, xmax, ymax}.

Exit status: 0 when clean, 3 when violations were found, 1 on I/O errors.
Warnings (those codes and bbox.antimeridian) do not fail a run unless
--strict is given.`,
		Example: `  $ geocompact validate points.parquet
  $ geocompact validate --table gis.parcels --json
  $ geocompact validate --delta s3://lake/parcels
  $ geocompact validate --tolerance 1e-4 --allow-null a.parquet b.parquet`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			if err := o.complete(); err != nil {
				return err
			}
			return runValidate(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tbl.name, "table", "", "validate this table, NAMESPACE.TABLE, instead of files")
	f.StringVar(&o.tbl.location, "delta", "", "validate this Delta table (a directory, file: URL or s3://BUCKET/PREFIX) instead of files")
	f.Float64Var(&o.cfg.Tolerance, "tolerance", o.cfg.Tolerance, "largest allowed difference between a bbox column and the geometry's envelope")
	f.BoolVar(&o.cfg.AllowNull, "allow-null", false, "accept null geometries")
	f.IntVar(&o.cfg.MaxExamples, "max-examples", o.cfg.MaxExamples, "offending rows to show per input")
	f.StringSliceVar(&o.cfg.AllowedTypes, "allowed-types", nil, "allowed geometry types, e.g. Point,MultiPoint (default any)")
	f.StringVar(&o.crs, "crs", "", "CRS the data must have, e.g. OGC:CRS84 (default: any known CRS; for --table, the table's)")
	f.StringVar(&o.geometry, "geometry-column", "", "geometry column (default: from table properties or GeoParquet metadata)")
	f.BoolVar(&o.cfg.Strict, "strict", false, "treat warnings (malformed GeoParquet hints, antimeridian crossings) as violations")
	return cmd
}

func (o *validateOptions) complete() error {
	inputs := 0
	for _, given := range []bool{o.tbl.name != "", o.tbl.location != "", len(o.files) > 0} {
		if given {
			inputs++
		}
	}
	switch {
	case inputs == 0:
		return usageErrorf("give FILE arguments, --table NS.T or --delta LOCATION")
	case inputs > 1:
		return usageErrorf("give one of FILE arguments, --table or --delta")
	}
	if o.crs != "" {
		crs, err := spatial.NormalizeCRS(o.crs)
		if err != nil {
			return usageErrorf("--crs: %v", err)
		}
		o.cfg.CRS = crs
	}
	o.cfg.Column = o.geometry
	o.cfg.Logger = o.g.Logger()
	if err := o.cfg.Validate(); err != nil {
		return &usageError{err}
	}
	return nil
}

// validateResult is what validate prints: one report per input.
type validateResult struct {
	OK     bool          `json:"ok"`
	Inputs []inputReport `json:"inputs"`
}

// inputReport is one file's report, or a table's (with its files).
type inputReport struct {
	Input      string                `json:"input"`
	OK         bool                  `json:"ok"`
	Violations int64                 `json:"violations"`
	SnapshotID int64                 `json:"snapshot_id,omitempty"`
	Report     *validate.Report      `json:"report"`
	Metadata   *validate.Report      `json:"metadata,omitempty"`
	Files      []validate.FileReport `json:"files,omitempty"`
}

func runValidate(ctx context.Context, o *validateOptions) error {
	var res validateResult
	if o.tbl.set() {
		ir, err := validateTable(ctx, o)
		if err != nil {
			return err
		}
		res.Inputs = append(res.Inputs, *ir)
	} else {
		prog := newProgress(o.g, "validating", "files")
		for i, path := range o.files {
			rep, err := validate.File(ctx, path, o.cfg)
			if err != nil {
				prog.Done()
				return err
			}
			res.Inputs = append(res.Inputs, inputReport{Input: path, OK: rep.OK(), Violations: rep.Violations(), Report: rep})
			prog.Update(i+1, len(o.files))
		}
		prog.Done()
	}
	res.OK = true
	for _, in := range res.Inputs {
		res.OK = res.OK && in.OK
	}
	if err := writeValidateResult(o.g.IO.Out, o.g.JSON, res); err != nil {
		return err
	}
	if !res.OK {
		return &exitCodeError{code: exitViolation}
	}
	return nil
}

// validateTable validates the --table or --delta table.
func validateTable(ctx context.Context, o *validateOptions) (*inputReport, error) {
	tr, err := validateTableReport(ctx, o)
	if err != nil {
		return nil, err
	}
	total := tr.Total
	return &inputReport{
		Input: tr.Table, OK: tr.OK(), Violations: total.Violations(), SnapshotID: tr.SnapshotID,
		Report: &total, Metadata: &tr.Metadata, Files: tr.Files,
	}, nil
}

func validateTableReport(ctx context.Context, o *validateOptions) (*validate.TableReport, error) {
	t, err := o.g.openTable(ctx, o.tbl.ref(), toRead)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return tablecheck.Check(ctx, t.Table, o.cfg)
}

// writeValidateResult prints res as JSON or, by default, as one block per
// input: a header line, counts per code, and the example rows.
func writeValidateResult(w io.Writer, asJSON bool, res validateResult) error {
	if asJSON {
		return cli.WriteJSON(w, res)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for i, in := range res.Inputs {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		status := "ok"
		if !in.OK {
			status = fmt.Sprintf("%d violations", in.Violations)
		}
		fmt.Fprintf(tw, "%s: %d rows, %s\n", in.Input, in.Report.Rows, status)
		writeGeometryInfo(tw, in.Report.Geometry)
		if len(in.Report.Counts) > 0 {
			fmt.Fprintln(tw, "CODE\tCOUNT")
			for _, code := range in.Report.Codes() {
				note := ""
				if validate.IsWarning(code) {
					note = " (warning)"
				}
				fmt.Fprintf(tw, "%s%s\t%d\n", code, note, in.Report.Counts[code])
			}
		}
		examples := in.Report.Examples
		if in.Metadata != nil {
			// A table: its own findings, then each file's, naming the file.
			examples = append([]validate.Finding(nil), in.Metadata.Examples...)
			for _, f := range in.Files {
				for _, ex := range f.Examples {
					ex.Detail = f.Path + ": " + ex.Detail
					examples = append(examples, ex)
				}
			}
			// As many as the total keeps: --max-examples for the table.
			examples = examples[:min(len(examples), len(in.Report.Examples))]
		}
		if len(examples) > 0 {
			fmt.Fprintln(tw, "ROW\tCODE\tDETAIL")
			for _, ex := range examples {
				row := "-"
				if ex.Row >= 0 {
					row = fmt.Sprint(ex.Row)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", row, ex.Code, strings.ReplaceAll(ex.Detail, "\n", " "))
			}
		}
	}
	return tw.Flush()
}

// writeGeometryInfo prints what a file's validation learned about its
// geometry: column, encoding, CRS, types and bbox.
func writeGeometryInfo(w io.Writer, g *validate.GeometryInfo) {
	if g == nil {
		return
	}
	crs, types, bbox := g.CRS, strings.Join(g.Types, ", "), "none"
	if crs == "" {
		crs = "unknown"
	}
	if types == "" {
		types = "none"
	}
	if len(g.BBox) == 4 {
		bbox = fmt.Sprintf("[%g, %g, %g, %g]", g.BBox[0], g.BBox[1], g.BBox[2], g.BBox[3])
	}
	fmt.Fprintf(w, "  geometry column %s (%s), crs %s, types %s, bbox %s\n", g.Column, g.Encoding, crs, types, bbox)
}
