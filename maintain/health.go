package maintain

import (
	"context"
	"maps"
	"math"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
)

// LayoutHealth says how well a partition's files are clustered, from the
// boxes their statistics give (icebergspatial.FileBound): the figures that decay
// as arrivals land between compactions and recover after a sorted rewrite.
// A file without a box covers every point, as scan planning cannot prune
// it.
type LayoutHealth struct {
	// FilesWithoutBounds counts the files whose statistics give no box.
	FilesWithoutBounds int64 `json:"files_without_bounds"`
	// MeanOverlapDepth is spatial.MeanDepth of the files' boxes: how many
	// files a point query at the middle of a file plans (1: no overlap).
	MeanOverlapDepth float64 `json:"mean_overlap_depth"`
	// MaxOverlapDepth is the most files' boxes sharing one point.
	MaxOverlapDepth int `json:"max_overlap_depth"`
	// MeanFilesPlanned is, given windows, the mean over them of the
	// partition's files whose box intersects the window (touching counts):
	// the files a window query plans there. Nil without windows.
	MeanFilesPlanned *float64 `json:"mean_files_planned,omitempty"`
	// RowGroups are the partition's row-group figures, from its files'
	// footers; nil unless they were read (MeasureConfig.RowGroups).
	RowGroups *RowGroupHealth `json:"row_groups,omitempty"`
}

// Unbounded is the box of a file without usable statistics: it covers
// every point, as scan planning cannot prune it. Pass it to Layout for such
// files.
var Unbounded = spatial.Bound{MinX: math.Inf(-1), MinY: math.Inf(-1), MaxX: math.Inf(1), MaxY: math.Inf(1)}

// healthCollector gathers the file boxes of each partition of a table
// with spatial columns; a nil collector (a table without them) gathers
// nothing.
type healthCollector struct {
	sc    *iceberg.Schema
	cols  spatial.Columns
	boxes map[string][]spatial.Bound
	// footers are, when the row-group figures are measured
	// (withFooters), each partition's files whose footers are read, the
	// row groups bounded by the statistics of rgCols; nil otherwise.
	footers map[string][]*footerFile
	rgCols  rowgroup.Columns
}

// footerReader reads a data file's row groups, bounded by the
// statistics of the columns given.
type footerReader func(rowgroup.Columns) (rowgroup.File, error)

func newHealthCollector(tbl *table.Table) *healthCollector {
	cols, err := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	if err != nil || (!cols.HasBBox() && cols.Encoding != spatial.EncodingIcebergGeometry) {
		return nil
	}
	return &healthCollector{sc: tbl.Schema(), cols: cols, boxes: map[string][]spatial.Bound{}}
}

// withFooters makes h gather, with each file's box, the reader of its
// footer, for the row-group figures bounded by the statistics of cols
// (none: the row groups are counted, their boxes unknown).
func (h *healthCollector) withFooters(cols rowgroup.Columns) {
	if h != nil {
		h.footers, h.rgCols = map[string][]*footerFile{}, cols
	}
}

func (h *healthCollector) add(partition string, df iceberg.DataFile, read footerReader) {
	if h == nil {
		return
	}
	b, ok := icebergspatial.FileBound(h.sc, h.cols, df.LowerBoundValues(), df.UpperBoundValues())
	h.addBox(partition, b, ok, read)
}

// addBox records a file's box, and its footer's reader when h gathers
// them and read is not nil; ok false (no usable statistics) records
// Unbounded.
func (h *healthCollector) addBox(partition string, b spatial.Bound, ok bool, read footerReader) {
	if !ok {
		b = Unbounded
	}
	h.boxes[partition] = append(h.boxes[partition], b)
	if h.footers != nil && read != nil {
		h.footers[partition] = append(h.footers[partition], &footerFile{box: b, read: read})
	}
}

// readFooters reads the row groups of every file gathered (see
// readFooters).
func (h *healthCollector) readFooters(ctx context.Context) error {
	if h == nil || h.footers == nil {
		return nil
	}
	return readFooters(ctx, h.allFooters(), h.rgCols)
}

// rowGroups returns the row-group figures of the whole table, nil
// unless h gathered footers.
func (h *healthCollector) rowGroups(windows []spatial.Bound) *RowGroupHealth {
	if h == nil || h.footers == nil {
		return nil
	}
	return rowGroupHealth(h.allFooters(), windows)
}

// allFooters are the files of every partition, the partitions in order,
// so that the figures summed over them are the same on every run.
func (h *healthCollector) allFooters() []*footerFile {
	var all []*footerFile
	for _, p := range slices.Sorted(maps.Keys(h.footers)) {
		all = append(all, h.footers[p]...)
	}
	return all
}

// health returns the layout figures of one partition, or nil when the
// table has no spatial columns.
func (h *healthCollector) health(partition string, windows []spatial.Bound) *LayoutHealth {
	if h == nil {
		return nil
	}
	lh := Layout(h.boxes[partition], windows)
	if h.footers != nil {
		lh.RowGroups = rowGroupHealth(h.footers[partition], windows)
	}
	return lh
}

// Layout returns the layout figures of a set of files (a partition) from
// their boxes, Unbounded for a file without statistics; with windows it
// counts the files each plans (MeanFilesPlanned). Any table format's file
// statistics can feed it, so the figures of an Iceberg and a Delta table,
// or of a table before and after a rewrite, are comparable.
func Layout(boxes, windows []spatial.Bound) *LayoutHealth {
	lh := &LayoutHealth{MeanOverlapDepth: spatial.MeanDepth(boxes), MaxOverlapDepth: spatial.MaxDepth(boxes)}
	for _, b := range boxes {
		if b == Unbounded {
			lh.FilesWithoutBounds++
		}
	}
	if len(windows) > 0 {
		planned := 0
		for _, w := range windows {
			for _, b := range boxes {
				if b.Intersects(w) {
					planned++
				}
			}
		}
		mean := float64(planned) / float64(len(windows))
		lh.MeanFilesPlanned = &mean
	}
	return lh
}
