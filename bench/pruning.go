package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/optval"
)

// MaxRowSample bounds Report.RowSample.
const MaxRowSample = 4000

// Config is one pruning measurement.
type Config struct {
	// Table is the source table, "ns.t". It is only read.
	Table string
	// Layouts are the layouts to measure (default AllLayouts), each written
	// into a scratch table ScratchName(Table, layout).
	Layouts []Layout
	// Windows are the query windows. When empty they are generated from
	// WindowConfig over the source table's rows.
	Windows      []spatial.Bound
	WindowConfig WindowConfig
	// Options are rewrite options by Iceberg's names, passed to every
	// engine rewrite (rewrite-all is always set). target-file-size-bytes
	// applies to every layout; its default is DefaultTargetFileSize of the
	// source table's bytes.
	Options map[string]string
	// Keep leaves the scratch tables in the catalog; by default each is
	// dropped, with its files, once measured.
	Keep bool
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called as each layout starts.
	Progress func(done, total int)
}

// Report is what a pruning measurement found.
type Report struct {
	Table       string `json:"table"`
	Rows        int64  `json:"rows"`
	SourceFiles int    `json:"source_files"`
	SourceBytes int64  `json:"source_bytes"`
	// Extent is the union of the rows' bboxes.
	Extent spatial.Bound `json:"extent"`
	// Filter says which predicate planned the windows: "bbox_columns" or
	// "bbox_intersects(<geometry column>)".
	Filter         string `json:"filter"`
	TargetFileSize int64  `json:"target_file_size_bytes"`
	// Windows is the number of windows; WindowList holds them.
	Windows    int             `json:"windows"`
	WindowList []spatial.Bound `json:"-"`
	// WindowArea, Placement and Seed describe generated windows (zero when
	// they were given).
	WindowArea float64           `json:"window_area,omitempty"`
	Placement  Placement         `json:"window_placement,omitempty"`
	Seed       uint64            `json:"seed"`
	Options    map[string]string `json:"options,omitempty"`
	// ArrivalOrder says where the unsorted and binpack copies' row order
	// came from: the snapshot history, or the current files.
	ArrivalOrder ArrivalSource `json:"arrival_order"`
	// RowSample is an even sample of at most MaxRowSample row bboxes, in
	// arrival order, for pictures.
	RowSample []spatial.Bound `json:"-"`
	Layouts   []LayoutReport  `json:"layouts"`
}

// LayoutReport is one layout's figures over all windows.
type LayoutReport struct {
	Layout Layout `json:"layout"`
	// ScratchTable is the scratch table's name when it was kept.
	ScratchTable   string `json:"scratch_table,omitempty"`
	Files          int    `json:"files"`
	Bytes          int64  `json:"bytes"`
	Rows           int64  `json:"rows"`
	MaxRowsPerFile int64  `json:"max_rows_per_file"`
	// Files planned per window: mean, median (mean of the two middle
	// values for an even count) and 95th percentile (nearest rank).
	MeanFilesPlanned   float64 `json:"mean_files_planned"`
	MedianFilesPlanned float64 `json:"median_files_planned"`
	P95FilesPlanned    float64 `json:"p95_files_planned"`
	MeanBytesPlanned   float64 `json:"mean_bytes_planned"`
	// MeanFilesWithMatches is the mean number of files that hold at least
	// one matching row: what perfect per-file statistics would plan.
	MeanFilesWithMatches float64 `json:"mean_files_with_matches"`
	MeanMatchingRows     float64 `json:"mean_matching_rows"`
	MeanLowerBound       float64 `json:"mean_lower_bound"`
	// RatioToLowerBound is sum(files planned) / sum(lower bound) over all
	// windows; null when no window matches a row.
	RatioToLowerBound *float64 `json:"ratio_to_lower_bound"`
	// MeanOverlapDepth and MaxOverlapDepth describe how the files' bboxes
	// overlap (see overlapDepth).
	MeanOverlapDepth float64 `json:"mean_overlap_depth"`
	MaxOverlapDepth  int     `json:"max_overlap_depth"`
	// RowGroups are the layout's row groups. RowGroupArea is the mean of
	// a row group's bbox area against its file's (rowgroup.MeanArea: 1 for
	// one row group a file; lower is tighter), null when the boxes are unknown (deletes
	// applied). MeanRowGroupsRead and MeanRowGroupBytesRead are the mean,
	// over the windows, of the row groups (and their compressed bytes) of
	// the planned files whose bbox intersects the window: what a reader
	// that prunes row groups by their statistics reads.
	RowGroups             int      `json:"row_groups"`
	RowGroupArea          *float64 `json:"row_group_area"`
	MeanRowGroupsRead     float64  `json:"mean_row_groups_read"`
	MeanRowGroupBytesRead float64  `json:"mean_row_group_bytes_read"`
	// WriteSeconds is the time to copy the rows and rewrite them.
	WriteSeconds float64 `json:"write_seconds"`
	// Auto is what the engine's --curve auto rewrite chose for each group,
	// with every candidate's estimate (the auto layout only).
	Auto []engine.AutoChoice `json:"auto,omitempty"`
	// FileBounds are the files' bboxes from their statistics, and
	// PerWindow the figures of each window, in window order.
	FileBounds []spatial.Bound `json:"-"`
	PerWindow  []WindowResult  `json:"-"`
}

// Run measures, for every layout in cfg, how many files iceberg-go's scan
// planning opens for each window, against the rows that truly match and
// the fewest files any layout could open. Each layout is a scratch copy of
// the source table's current rows, appended in arrival order and cut into
// target-size files, then rewritten by engine.Rewrite (except Unsorted,
// which is that copy). The source table is never written.
func Run(ctx context.Context, cat catalog.Catalog, cfg Config) (*Report, error) {
	start := time.Now()
	src, err := icebergSource(ctx, cat, cfg.Table)
	if err != nil {
		return nil, err
	}
	return run(ctx, cat, cfg, src, start)
}

// logger is cfg.Logger, or one that discards.
func (cfg Config) logger() *slog.Logger {
	if cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return cfg.Logger
}

// run measures cfg's layouts of src, read since start, writing scratch
// copies into cat.
func run(ctx context.Context, cat catalog.Catalog, cfg Config, src *source, start time.Time) (*Report, error) {
	log := cfg.logger()
	layouts := cfg.Layouts
	if len(layouts) == 0 {
		layouts = AllLayouts
	}
	rep := &Report{Table: src.name, SourceFiles: len(src.files), Filter: "bbox_columns", Options: cfg.Options}
	if !src.cols.HasBBox() {
		rep.Filter = "bbox_intersects(" + src.cols.Geometry + ")"
	}
	rows := summarizeSource(rep, src.files)
	log.Info("bench source read", "table", src.name, "files", len(src.files), "rows", rep.Rows, "duration", time.Since(start))
	var err error
	if rep.Windows, err = chooseWindows(cfg, rep.Extent, rows, rep); err != nil {
		return nil, err
	}
	if rep.TargetFileSize, err = targetFileSize(cfg, rep.SourceBytes); err != nil {
		return nil, err
	}
	// Row groups of about 1/16 of a file let the copy roll files near the
	// target (files roll only at row-group boundaries).
	rowGroupRows := max(rep.Rows*rep.TargetFileSize/max(rep.SourceBytes, 1)/16, 100)
	arrival, order, err := src.arrival(ctx)
	if err != nil {
		return nil, fmt.Errorf("order %s by arrival: %w", src.name, err)
	}
	rep.ArrivalOrder = order
	if order != ArrivalHistory {
		log.Warn("bench: the history does not give the rows' arrival order; unsorted and binpack copy the current files in the order they were added", "table", src.name)
	}
	for i, l := range layouts {
		if cfg.Progress != nil {
			cfg.Progress(i, len(layouts))
		}
		var lr *LayoutReport
		if l == Current {
			lr, err = measureCurrent(ctx, src, rep)
		} else {
			lr, err = runLayout(ctx, cat, src, arrival, cfg, l, rep, rowGroupRows)
		}
		if err != nil {
			return nil, fmt.Errorf("bench layout %s: %w", l, err)
		}
		rep.Layouts = append(rep.Layouts, *lr)
	}
	if cfg.Progress != nil {
		cfg.Progress(len(layouts), len(layouts))
	}
	return rep, nil
}

// targetFileSize is the target-file-size-bytes option of cfg, by default
// DefaultTargetFileSize of the source's bytes.
func targetFileSize(cfg Config, sourceBytes int64) (int64, error) {
	v, ok := cfg.Options[engine.OptTargetFileSize]
	if !ok {
		return DefaultTargetFileSize(sourceBytes), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s=%q: want a positive integer", optval.ErrBad, engine.OptTargetFileSize, v)
	}
	return n, nil
}

// summarizeSource records the source's rows, bytes, extent and a sample of
// its row boxes in rep, and returns every row's box.
func summarizeSource(rep *Report, srcFiles []fileInfo) []spatial.Bound {
	extent := spatial.EmptyBound()
	var rows []spatial.Bound
	for _, f := range srcFiles {
		rep.Rows += int64(len(f.rows))
		rep.SourceBytes += f.size
		for _, r := range f.rows {
			extent = extent.Extend(r)
		}
		rows = append(rows, f.rows...)
	}
	rep.Extent = extent
	for i := 0; i < len(rows); i += (len(rows) + MaxRowSample - 1) / MaxRowSample {
		rep.RowSample = append(rep.RowSample, rows[i])
	}
	return rows
}

// chooseWindows takes cfg's windows or generates them, recording how.
func chooseWindows(cfg Config, extent spatial.Bound, rows []spatial.Bound, rep *Report) (int, error) {
	if len(cfg.Windows) > 0 {
		rep.WindowList = cfg.Windows
		return len(cfg.Windows), nil
	}
	wc := cfg.WindowConfig.withDefaults()
	ws, err := GenerateWindows(wc, extent, rows)
	if err != nil {
		return 0, err
	}
	rep.WindowList, rep.WindowArea, rep.Placement, rep.Seed = ws, wc.Area, wc.Placement, wc.Seed
	return len(ws), nil
}

// runLayout writes layout l into its scratch table, a copy of the rows
// arrival reads, measures it and drops the table unless cfg.Keep.
func runLayout(ctx context.Context, cat catalog.Catalog, src *source, arrival rowReader,
	cfg Config, l Layout, rep *Report, rowGroupRows int64) (lr *LayoutReport, err error) {
	log := cfg.logger()
	name := ScratchName(src.scratchBase, l)
	start := time.Now()
	dst, err := createScratch(ctx, cat, src.scratch, src.scratchBase, name, rep.TargetFileSize, rowGroupRows)
	if err != nil {
		return nil, err
	}
	if !cfg.Keep {
		defer func() {
			if derr := dropScratch(context.WithoutCancel(ctx), cat, name); derr != nil && err == nil {
				err = derr
			}
		}()
	}
	if dst, err = copyRows(ctx, arrival, src.scratchBase, dst, rowGroupRows); err != nil {
		return nil, err
	}
	var auto []engine.AutoChoice
	if rc := rewriteRequest(l, cfg.Options, rep.TargetFileSize); rc != nil {
		rc.Logger = log
		t, err := icebergtable.Open(ctx, cat, name)
		if err != nil {
			return nil, err
		}
		res, err := engine.Rewrite(ctx, t, *rc)
		if err != nil {
			return nil, err
		}
		if res.NoopReason != "" || res.AddedDataFilesCount == 0 {
			return nil, fmt.Errorf("the engine rewrote nothing: %s", res.NoopReason)
		}
		auto = res.Auto
		if dst, err = catalogs.LoadTable(ctx, cat, name); err != nil {
			return nil, err
		}
	}
	written := time.Since(start)
	log.Info("bench layout written", "layout", l, "table", name, "duration", written)
	files, err := readFiles(ctx, dst, src.cols)
	if err != nil {
		return nil, err
	}
	per, err := measureWindows(ctx, icebergPlanner(dst, src.cols), files, rep.WindowList)
	if err != nil {
		return nil, err
	}
	lr = summarize(l, files, per)
	lr.WriteSeconds, lr.Auto = written.Seconds(), auto
	if lr.Rows != rep.Rows {
		return nil, fmt.Errorf("layout holds %d rows, the source %d", lr.Rows, rep.Rows)
	}
	if cfg.Keep {
		lr.ScratchTable = name
	}
	log.Info("bench layout measured", "layout", l, "files", lr.Files, "mean_files_planned", lr.MeanFilesPlanned, "duration", time.Since(start)-written)
	return lr, nil
}

// measureCurrent measures the source table's own files as they are.
func measureCurrent(ctx context.Context, src *source, rep *Report) (*LayoutReport, error) {
	per, err := measureWindows(ctx, src.plan, src.files, rep.WindowList)
	if err != nil {
		return nil, err
	}
	return summarize(Current, src.files, per), nil
}

// summarize computes a layout's figures from its files and window results.
func summarize(l Layout, files []fileInfo, per []WindowResult) *LayoutReport {
	lr := &LayoutReport{Layout: l, Files: len(files), PerWindow: per}
	rgs := make([]rowgroup.File, 0, len(files))
	for _, f := range files {
		lr.Bytes += f.size
		lr.Rows += int64(len(f.rows))
		lr.MaxRowsPerFile = max(lr.MaxRowsPerFile, f.count)
		lr.FileBounds = append(lr.FileBounds, f.bound)
		lr.RowGroups += len(f.rg.Groups)
		rgs = append(rgs, f.rg)
	}
	if a, ok := rowgroup.MeanArea(rgs); ok {
		lr.RowGroupArea = &a
	}
	planned := make([]float64, len(per))
	var sumPlanned, sumLB int64
	for i, w := range per {
		planned[i] = float64(w.Planned)
		sumPlanned += int64(w.Planned)
		sumLB += w.LowerBound
		lr.MeanBytesPlanned += float64(w.PlannedBytes)
		lr.MeanFilesWithMatches += float64(w.FilesWithMatches)
		lr.MeanMatchingRows += float64(w.Matching)
		lr.MeanLowerBound += float64(w.LowerBound)
		lr.MeanRowGroupsRead += float64(w.RowGroupsRead)
		lr.MeanRowGroupBytesRead += float64(w.RowGroupBytesRead)
	}
	if n := float64(len(per)); n > 0 {
		lr.MeanFilesPlanned = float64(sumPlanned) / n
		lr.MeanBytesPlanned /= n
		lr.MeanFilesWithMatches /= n
		lr.MeanMatchingRows /= n
		lr.MeanLowerBound /= n
		lr.MeanRowGroupsRead /= n
		lr.MeanRowGroupBytesRead /= n
	}
	lr.MedianFilesPlanned, lr.P95FilesPlanned = median(planned), percentile(planned, 0.95)
	if sumLB > 0 {
		r := float64(sumPlanned) / float64(sumLB)
		lr.RatioToLowerBound = &r
	}
	lr.MeanOverlapDepth, lr.MaxOverlapDepth = overlapDepth(files)
	return lr
}

// median is the middle value of v, or the mean of the two middle values
// for an even count; 0 for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// percentile is the nearest-rank p-quantile of v: the smallest value with
// at least p of the values at or below it; 0 for none.
func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	k := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}
