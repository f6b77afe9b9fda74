package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
)

// SummaryAuto is the snapshot summary key that records what --curve auto
// chose: a JSON array of AutoChoice, one per group of the rewrite.
const SummaryAuto = "geocompact.auto"

// AutoChoice is the layout --curve auto chose for one group, with the
// estimate of every candidate (cluster.Choice).
type AutoChoice struct {
	// Group is the group's number in the plan (1-based).
	Group     int    `json:"group"`
	Partition string `json:"partition"`
	cluster.Choice
}

// How many rows a group's automatic choice samples: autoRowsPerFile per
// output file, within [autoMinSample, autoMaxSample] (and never more
// than the group holds).
const (
	autoRowsPerFile = 64
	autoMinSample   = 20_000
	autoMaxSample   = 200_000
)

// chooseLayouts picks the order of each group of plan for --curve auto:
// it samples the group's row boxes (the bbox columns, else the geometry
// column, nothing else is read) and lets cluster.Choose weigh the
// candidates for the group's output file count and the request's windows
// (cluster's default data-placed windows when none are given).
func (r *rewriter) chooseLayouts(ctx context.Context, tf table.Format, plan *Plan) ([]AutoChoice, error) {
	r.autoOrders = make([]cluster.Order, len(plan.Groups))
	out := make([]AutoChoice, 0, len(plan.Groups))
	for i := range plan.Groups {
		g := &plan.Groups[i]
		n := min(max(autoRowsPerFile*g.OutputFiles, autoMinSample), autoMaxSample)
		sample, err := sampleBounds(ctx, tf, g, n)
		if err != nil {
			return nil, fmt.Errorf("choose layout of group %d (%s): %w", i+1, PartitionLabel(g.Partition), err)
		}
		if len(sample) == 0 {
			return nil, fmt.Errorf("choose layout of group %d (%s): %w", i+1, PartitionLabel(g.Partition), ErrAutoNoBoxes)
		}
		ch, err := cluster.Choose(sample, cluster.ChooseConfig{Files: max(g.OutputFiles, 1), Normalize: r.lay.normalize, Windows: r.cfg.AutoWindows})
		if err != nil {
			return nil, fmt.Errorf("choose layout of group %d (%s): %w", i+1, PartitionLabel(g.Partition), err)
		}
		r.autoOrders[i] = ch.Order
		out = append(out, AutoChoice{Group: i + 1, Partition: g.Partition, Choice: ch})
		r.log.Info("layout chosen", "group", i+1, "partition", g.Partition, "curve", ch.Curve, "files", ch.Files, "sample_rows", ch.Sample)
	}
	return out, nil
}

// groupOrder is the order group i (0-based) is sorted by: its automatic
// choice, else the layout's.
func (r *rewriter) groupOrder(i int) cluster.Order {
	if i >= 0 && i < len(r.autoOrders) {
		return r.autoOrders[i]
	}
	return r.lay.order
}

// autoText is the sort order a result and the snapshot summary record for
// an automatic choice: "auto: " and the chosen order when every group
// chose the same, else "auto: " and each group's curve.
func autoText(choices []AutoChoice) string {
	if len(choices) == 0 {
		return cluster.CurveAuto
	}
	curves := make([]string, len(choices))
	for i, c := range choices {
		curves[i] = c.Curve
	}
	if len(slices.Compact(slices.Clone(curves))) == 1 {
		return cluster.CurveAuto + ": " + choices[0].Order.String()
	}
	return fmt.Sprintf("%s: %v", cluster.CurveAuto, curves)
}

// autoSummary encodes the choices for SummaryAuto.
func autoSummary(choices []AutoChoice) string {
	b, err := json.Marshal(choices)
	if err != nil { // plain structs of numbers and strings always encode
		panic(err)
	}
	return string(b)
}

// sampleBounds reads the row boxes of group g at the snapshot, keeping
// about n of them spread evenly over the group's rows in scan order.
func sampleBounds(ctx context.Context, tf table.Format, g *Group, n int) ([]spatial.Bound, error) {
	sp, _, _ := tf.Spatial()
	geom := sp.Geometry
	cols := []string{geom}
	if sp.HasBBox() {
		cols = sp.BBox[:]
	}
	sc, recs, err := tf.Read(ctx, g.Files, g.Files, cols)
	if err != nil {
		return nil, fmt.Errorf("sample rows: %w", err)
	}
	geomCol, bbox := verify.Columns(sc, geom)
	stride := max(1, g.Records/int64(max(n, 1)))
	out := make([]spatial.Bound, 0, min(int64(n)+1, g.Records))
	var seen int64
	for rec, err := range recs {
		if err != nil {
			return nil, fmt.Errorf("sample rows: %w", err)
		}
		out = appendSample(out, rec, geomCol, bbox, stride, &seen)
		rec.Release()
	}
	return out, nil
}

// appendSample appends the box of every stride-th row of rec, counting
// rows across batches in *seen.
func appendSample(out []spatial.Bound, rec arrow.RecordBatch, geomCol int, bbox [4]int, stride int64, seen *int64) []spatial.Bound {
	base := *seen
	verify.EachRowBound(rec, geomCol, bbox, func(r int, b spatial.Bound) {
		if (base+int64(r))%stride == 0 {
			out = append(out, b)
		}
	})
	*seen += rec.NumRows()
	return out
}
