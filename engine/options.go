package engine

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// Strategy is how a rewrite lays out rows.
type Strategy string

// Strategies, as Iceberg names them.
const (
	// BinPack concatenates the rows of small files (and splits large ones)
	// without reordering them.
	BinPack Strategy = "binpack"
	// Sort orders the rows of each file group by a sort order (a column
	// list, zorder(...) or hilbert(...)) across the whole group.
	Sort Strategy = "sort"
)

// JobOrder is the order file groups are rewritten (and committed) in.
type JobOrder string

// Job orders, by Iceberg's names.
const (
	JobOrderNone      JobOrder = "none"
	JobOrderBytesAsc  JobOrder = "bytes-asc"
	JobOrderBytesDesc JobOrder = "bytes-desc"
	JobOrderFilesAsc  JobOrder = "files-asc"
	JobOrderFilesDesc JobOrder = "files-desc"
)

// Iceberg's rewrite_data_files option names.
const (
	OptTargetFileSize        = "target-file-size-bytes"
	OptMinFileSize           = "min-file-size-bytes"
	OptMaxFileSize           = "max-file-size-bytes"
	OptMinInputFiles         = "min-input-files"
	OptRewriteAll            = "rewrite-all"
	OptMaxFileGroupSize      = "max-file-group-size-bytes"
	OptMaxFilesToRewrite     = "max-files-to-rewrite"
	OptRewriteJobOrder       = "rewrite-job-order"
	OptMaxConcurrentGroups   = "max-concurrent-file-group-rewrites"
	OptPartialProgress       = "partial-progress.enabled"
	OptPartialProgressCommit = "partial-progress.max-commits"
	OptDeleteFileThreshold   = "delete-file-threshold"
	OptRemoveDanglingDeletes = "remove-dangling-deletes"
	// OptMaxGroupMemory is geocompact's own: the memory a sorted group may
	// use (see Options.MaxGroupMemoryBytes).
	OptMaxGroupMemory = "max-group-memory-bytes"
	// OptNormalize is geocompact's own: how curve coordinates are
	// normalised, extent or quantile.
	OptNormalize = "normalize"
	// OptValidateGeometry is geocompact's own: validate the geometry of
	// every row before it is written (default true).
	OptValidateGeometry = "validate-geometry"
	// OptCutWindow is geocompact's own: the expected query window, as a
	// fraction of the group's extent area, that sorted spatial files are
	// cut for (see Options.CutWindowFraction).
	OptCutWindow = "cut-window-fraction"
	// OptSpillDir is geocompact's own: the local directory a sort larger
	// than its memory budget spills to (see Options.SpillDir).
	OptSpillDir = "spill-dir"
	// OptOverlapSelection, OptOverlapMaxDepth and OptOverlapMaxBytes are
	// geocompact's own: the overlap-aware file selection of a spatially
	// sorted rewrite (see Options.OverlapSelection and engine/overlap.go).
	OptOverlapSelection = "overlap-selection.enabled"
	OptOverlapMaxDepth  = "overlap-selection.max-mean-depth"
	OptOverlapMaxBytes  = "overlap-selection.max-bytes-fraction"
)

// KnownOptions lists every option name Options accepts, sorted.
func KnownOptions() []string {
	names := []string{OptTargetFileSize, OptMinFileSize, OptMaxFileSize, OptMinInputFiles, OptRewriteAll,
		OptMaxFileGroupSize, OptMaxFilesToRewrite, OptRewriteJobOrder, OptMaxConcurrentGroups, OptPartialProgress,
		OptPartialProgressCommit, OptDeleteFileThreshold, OptRemoveDanglingDeletes, OptMaxGroupMemory, OptNormalize, OptValidateGeometry, OptCutWindow, OptSpillDir,
		OptOverlapSelection, OptOverlapMaxDepth, OptOverlapMaxBytes}
	slices.Sort(names)
	return names
}

// MaxFileSize is the largest target file size and minimum file size
// accepted (the maximum file size may reach twice it), 1024 TiB: far
// above any real file, and low enough that the sizes derived from it
// cannot overflow.
const MaxFileSize int64 = 1 << 50

const (
	defaultTargetFileSize   = 512 << 20
	defaultMaxFileGroupSize = 100 << 30
	defaultMinInputFiles    = 5
	defaultMaxCommits       = 10
	defaultDeleteThreshold  = 1 << 31
	defaultMaxConcurrent    = 5
)

// Options are the rewrite options, by Iceberg's names and with Iceberg's
// defaults. Build them with Request.OptionsFor, which fills in the defaults
// from the table's properties.
type Options struct {
	// TargetFileSize is the size output files aim at (default: the table's
	// write.target-file-size-bytes, else 512 MiB).
	TargetFileSize int64
	// MinFileSize: smaller files are rewrite candidates (default 75% of target).
	MinFileSize int64
	// MaxFileSize: larger files are rewrite candidates and get split
	// (default 180% of target).
	MaxFileSize int64
	// MinInputFiles is how many candidate files a group needs to be
	// rewritten, unless it has more than a target file's worth of content
	// (default 5).
	MinInputFiles int
	// RewriteAll makes every file a candidate and keeps every group.
	RewriteAll bool
	// PurgeDeletes makes exactly the files that carry deletes candidates
	// and keeps every group (Request.PurgeDeletes).
	PurgeDeletes bool
	// MaxFileGroupSize bounds the bytes of one file group (default 100 GiB).
	MaxFileGroupSize int64
	// MaxFilesToRewrite caps the number of files rewritten in this run
	// (0: no cap); groups beyond the cap are left for the next run.
	MaxFilesToRewrite int
	// JobOrder orders groups (default none: partition order).
	JobOrder JobOrder
	// MaxConcurrent is how many groups are rewritten at once (default 5,
	// at most the number of cores).
	MaxConcurrent int
	// PartialProgress commits groups in batches as they finish.
	PartialProgress bool
	// MaxCommits is the number of partial-progress commits (default 10).
	MaxCommits int
	// DeleteFileThreshold: a file with at least this many delete files is a
	// candidate whatever its size (default: no threshold).
	DeleteFileThreshold int
	// RemoveDanglingDeletes is accepted for compatibility; delete files
	// that apply only to rewritten files are always removed.
	RemoveDanglingDeletes bool
	// MaxGroupMemoryBytes is the memory budget of the sorted groups
	// rewritten at once, shared evenly between them. A group whose
	// in-memory sort would not fit its share is sorted by an external,
	// sort that spills to SpillDir and stays inside the share, so any
	// group size can be sorted as one order (default
	// spill.DefaultMemoryBudget: 128 MiB, or a quarter of physical memory
	// when less, at least 64 MiB).
	MaxGroupMemoryBytes int64
	// SpillDir is the local directory spill files go under (default
	// $GEOCOMPACT_SPILL_DIR, else the OS temp directory); it is local even
	// for an s3:// warehouse.
	SpillDir string
	// Normalize is how curve coordinates are normalised: extent (default)
	// or quantile.
	Normalize string
	// ValidateGeometry checks the geometry of every row read (WKB
	// structure, finite coordinates, closed rings, bbox columns agreeing
	// with the geometry) before anything is written; a violation fails the
	// group and nothing is committed (default true).
	ValidateGeometry bool
	// CutWindowFraction, when above 0, is the area of a query window, as a
	// fraction of the group's extent (with the extent's aspect ratio), that
	// a sorted group with spatial columns is cut for: the cuts along the
	// sort order minimise the number of files such a window plans when
	// windows fall anywhere in the extent (map viewports, tiles), keeping
	// each file within 75%-180% of an even share of the rows. Measured on
	// 400,000 clustered points in 68 Hilbert files with 1% windows, it cut
	// the mean files planned by 17% for uniformly placed windows but raised
	// it by 6% for windows centred on rows, so it is off by default (0:
	// files of equal row counts). Measure with bench before choosing it.
	// kd ignores it: its files are cut at its tree's leaves.
	CutWindowFraction float64
	// OverlapSelection makes the file selection of a rewrite that sorts by
	// position (a curve or a bbox-led sort order, without rewrite-all)
	// overlap-aware: the size-based candidates of a partition are merged
	// with size-healthy files up to OverlapMaxBytes of the partition (a
	// run along the curve where boxes overlap most, then the files their
	// boxes overlap, those laid over many others and those with large
	// boxes first; see overlapRegion and overlapped), and a partition whose
	// size-healthy files overlap more than OverlapMaxDepth is re-sorted
	// whole when new files arrive (default true; see overlapSelect).
	OverlapSelection bool
	// OverlapMaxDepth is the mean overlap depth (spatial.MeanDepth) of a
	// partition's size-healthy files above which the whole partition is
	// re-sorted when it has candidates (default 6: fresh layouts of
	// clustered points measure about 1 linear, 1.2-1.3 str, 1.7-2.3
	// hilbert and 4.5 zorder; overlap-aware runs kept hilbert below 4).
	OverlapMaxDepth float64
	// OverlapMaxBytes is the fraction of a partition's bytes that the
	// candidates and the size-healthy files merged with them may reach
	// (default 0.33: a scheduled rewrite stays within a third of a full
	// re-sort's bytes).
	OverlapMaxBytes float64

	// clustered is set by the rewrite when its layout orders rows by
	// position, the only case overlap-aware selection applies to.
	clustered bool
}

// OptionsFor returns the request's options overlaid on a table's
// properties: Iceberg's defaults, then the table's
// write.target-file-size-bytes (tableProps; nil for none), then the
// request's Options by Iceberg's names. It is the one way to read a
// request's options: the request's own are parsed once, by Check (or here
// when r was not checked), and only the table's property is read for each
// table. An unknown name is an error that names it and lists the valid
// ones; a malformed value names its option; both wrap optval.ErrBad.
func (r Request) OptionsFor(tableProps map[string]string) (Options, error) {
	r, err := r.Check()
	if err != nil {
		return Options{}, err
	}
	o, kv := r.checked.opts, r.checked.given
	if o.PurgeDeletes = r.PurgeDeletes; o.PurgeDeletes && o.RewriteAll {
		return Options{}, fmt.Errorf("%w: %s rewrites every file, a purge only the files that carry deletes: drop one", optval.ErrBad, OptRewriteAll)
	}
	_, target := kv[OptTargetFileSize]
	if _, ok := tableProps[table.PropTargetFileSize]; ok && !target {
		if o.TargetFileSize, err = tableTargetFileSize(tableProps); err != nil {
			return Options{}, err
		}
		if _, ok := kv[OptMinFileSize]; !ok {
			o.MinFileSize = o.TargetFileSize * 3 / 4
		}
		if _, ok := kv[OptMaxFileSize]; !ok {
			o.MaxFileSize = o.TargetFileSize * 9 / 5
		}
	}
	return o, o.validate()
}

// parseOptions checks kv (Iceberg option names) and parses it over
// Iceberg's defaults, once for a request (see Request.OptionsFor). The
// minimum and maximum file sizes are checked against the target here only
// when kv sets the target, else against the table's (OptionsFor).
func parseOptions(kv map[string]string) (Options, error) {
	known := KnownOptions()
	names := make([]string, 0, len(kv))
	for k := range kv {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(known, k) {
			if hint := suggest.Hint(k, known); hint != "" {
				return Options{}, fmt.Errorf("%w: unknown option %q%s", optval.ErrBad, k, hint)
			}
			return Options{}, fmt.Errorf("%w: unknown option %q; valid options: %s", optval.ErrBad, k, strings.Join(known, ", "))
		}
	}
	o := defaultOptions()
	p := optval.Parser{KV: kv}
	p.SizeAtMost(OptTargetFileSize, &o.TargetFileSize, 1, MaxFileSize)
	o.MinFileSize, o.MaxFileSize = o.TargetFileSize*3/4, o.TargetFileSize*9/5
	p.SizeAtMost(OptMinFileSize, &o.MinFileSize, 0, MaxFileSize)
	p.SizeAtMost(OptMaxFileSize, &o.MaxFileSize, 1, 2*MaxFileSize)
	p.Int(OptMinInputFiles, &o.MinInputFiles, 1)
	p.Bool(OptRewriteAll, &o.RewriteAll)
	p.Size(OptMaxFileGroupSize, &o.MaxFileGroupSize, 1)
	p.Int(OptMaxFilesToRewrite, &o.MaxFilesToRewrite, 1)
	p.Int(OptMaxConcurrentGroups, &o.MaxConcurrent, 1)
	p.Bool(OptPartialProgress, &o.PartialProgress)
	p.Int(OptPartialProgressCommit, &o.MaxCommits, 1)
	p.Int(OptDeleteFileThreshold, &o.DeleteFileThreshold, 1)
	p.Bool(OptRemoveDanglingDeletes, &o.RemoveDanglingDeletes)
	p.Size(OptMaxGroupMemory, &o.MaxGroupMemoryBytes, 1)
	p.Bool(OptValidateGeometry, &o.ValidateGeometry)
	p.Bool(OptOverlapSelection, &o.OverlapSelection)
	p.Fraction(OptOverlapMaxBytes, &o.OverlapMaxBytes, false)
	if v, ok := p.Value(OptOverlapMaxDepth); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 1) {
			p.Err = fmt.Errorf("%w: %s=%q: want a number >= 1 (1: files do not overlap at all)", optval.ErrBad, OptOverlapMaxDepth, v)
		}
		o.OverlapMaxDepth = f
	}
	if v, ok := kv[OptRewriteJobOrder]; ok && p.Err == nil {
		switch jo := JobOrder(v); jo {
		case JobOrderNone, JobOrderBytesAsc, JobOrderBytesDesc, JobOrderFilesAsc, JobOrderFilesDesc:
			o.JobOrder = jo
		default:
			p.Err = fmt.Errorf("%w: %s=%q: want none, bytes-asc, bytes-desc, files-asc or files-desc", optval.ErrBad, OptRewriteJobOrder, v)
		}
	}
	if v, ok := kv[OptCutWindow]; ok && p.Err == nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f >= 0 && f <= 1) {
			p.Err = fmt.Errorf("%w: %s=%q: want a fraction in [0, 1]", optval.ErrBad, OptCutWindow, v)
		}
		o.CutWindowFraction = f
	}
	if v, ok := kv[OptSpillDir]; ok {
		o.SpillDir = v
	}
	if v, ok := kv[OptNormalize]; ok && p.Err == nil {
		if v != "extent" && v != "quantile" {
			p.Err = fmt.Errorf("%w: %s=%q: want extent or quantile", optval.ErrBad, OptNormalize, v)
		}
		o.Normalize = v
	}
	if p.Err != nil {
		return Options{}, p.Err
	}
	o.MaxConcurrent = min(o.MaxConcurrent, max(runtime.NumCPU(), 1))
	if _, ok := kv[OptTargetFileSize]; ok {
		// No table property can change the target: the sizes around it
		// are checked now.
		return o, o.validate()
	}
	return o, nil
}

// defaultOptions returns Iceberg's defaults and geocompact's own.
func defaultOptions() Options {
	return Options{
		TargetFileSize:      defaultTargetFileSize,
		MinInputFiles:       defaultMinInputFiles,
		MaxFileGroupSize:    defaultMaxFileGroupSize,
		JobOrder:            JobOrderNone,
		MaxConcurrent:       min(defaultMaxConcurrent, runtime.NumCPU()),
		MaxCommits:          defaultMaxCommits,
		DeleteFileThreshold: defaultDeleteThreshold,
		MaxGroupMemoryBytes: spill.DefaultMemoryBudget(),
		Normalize:           "extent",
		ValidateGeometry:    true,
		OverlapSelection:    true,
		OverlapMaxDepth:     defaultOverlapMaxDepth,
		OverlapMaxBytes:     defaultOverlapMaxBytes,
	}
}

// tableTargetFileSize reads the table property write.target-file-size-bytes.
func tableTargetFileSize(tableProps map[string]string) (int64, error) {
	v := tableProps[table.PropTargetFileSize]
	n, err := optval.ParseSize(v)
	if err != nil || n <= 0 || n > MaxFileSize {
		return 0, &optval.PropertyError{Property: table.PropTargetFileSize, Value: v,
			Want: "a positive size of at most " + optval.FormatLimit(MaxFileSize), Example: "128MiB"}
	}
	return n, nil
}

func (o Options) validate() error {
	switch {
	case o.MinFileSize >= o.TargetFileSize:
		return fmt.Errorf("%w: %s (%d) must be below %s (%d)", optval.ErrBad, OptMinFileSize, o.MinFileSize, OptTargetFileSize, o.TargetFileSize)
	case o.MaxFileSize <= o.TargetFileSize:
		return fmt.Errorf("%w: %s (%d) must be above %s (%d)", optval.ErrBad, OptMaxFileSize, o.MaxFileSize, OptTargetFileSize, o.TargetFileSize)
	}
	return nil
}
