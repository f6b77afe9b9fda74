package posdeletes

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/table/optval"
)

// Iceberg's rewrite_position_delete_files option names.
const (
	OptRewriteAll          = "rewrite-all"
	OptMinInputFiles       = "min-input-files"
	OptTargetFileSize      = "target-file-size-bytes"
	OptMinFileSize         = "min-file-size-bytes"
	OptMaxFileSize         = "max-file-size-bytes"
	OptMaxFileGroupSize    = "max-file-group-size-bytes"
	OptPartialProgress     = "partial-progress.enabled"
	OptPartialMaxCommits   = "partial-progress.max-commits"
	OptRewriteJobOrder     = "rewrite-job-order"
	OptMaxConcurrentGroups = "max-concurrent-file-group-rewrites"
)

// TargetSizeProperty is the table property that sets the delete files'
// target size, as Iceberg's writers read it.
const TargetSizeProperty = "write.delete.target-file-size-bytes"

const (
	defaultTargetFileSize   = 64 << 20
	defaultMaxFileGroupSize = 100 << 30
	defaultMinInputFiles    = 5
	defaultMaxCommits       = 10
	defaultMaxConcurrent    = 5
	maxSize                 = int64(1) << 50
)

// KnownOptions lists the option names Options accepts, sorted.
func KnownOptions() []string {
	names := []string{OptRewriteAll, OptMinInputFiles, OptTargetFileSize, OptMinFileSize, OptMaxFileSize,
		OptMaxFileGroupSize, OptPartialProgress, OptPartialMaxCommits, OptRewriteJobOrder, OptMaxConcurrentGroups, OptConvertEquality}
	slices.Sort(names)
	return names
}

// Options are a delete file rewrite's options, by Iceberg's names and
// with Iceberg's defaults.
type Options struct {
	// RewriteAll rewrites every position delete file, whatever its size.
	RewriteAll bool
	// MinInputFiles is how many candidate files a partition's group needs
	// to be rewritten, unless it holds more than a target file's worth
	// (default 5).
	MinInputFiles int
	// TargetFileSize is what merged delete files aim at (default: the
	// table's write.delete.target-file-size-bytes, else 64 MiB).
	TargetFileSize int64
	// MinFileSize and MaxFileSize bound the files left alone (default 75%
	// and 180% of the target).
	MinFileSize, MaxFileSize int64
	// MaxFileGroupSize caps the bytes of one group (default 100 GiB).
	MaxFileGroupSize int64
	// PartialProgress commits groups in up to MaxCommits commits rather
	// than in one.
	PartialProgress bool
	MaxCommits      int
	// JobOrder is the order groups are rewritten in: none, bytes-asc,
	// bytes-desc, files-asc or files-desc.
	JobOrder string
	// MaxConcurrent is how many groups are rewritten at once (default 5).
	MaxConcurrent int
	// ConvertEquality is geocompact's own option: turn the equality
	// delete files into positions (see OptConvertEquality).
	ConvertEquality bool
}

// ParseOptions parses kv, Iceberg's options by name, on top of the
// defaults and the table's properties. An unknown name is refused by
// name, with the closest known one.
func ParseOptions(kv, tableProps map[string]string) (Options, error) {
	known := KnownOptions()
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if slices.Contains(known, k) {
			continue
		}
		if hint := suggest.Hint(k, known); hint != "" {
			return Options{}, fmt.Errorf("%w: rewrite_position_delete_files: unknown option %q%s", optval.ErrBad, k, hint)
		}
		return Options{}, fmt.Errorf("%w: rewrite_position_delete_files: unknown option %q; valid options: %s", optval.ErrBad, k, strings.Join(known, ", "))
	}
	o := Options{MinInputFiles: defaultMinInputFiles, TargetFileSize: defaultTargetFileSize,
		MaxFileGroupSize: defaultMaxFileGroupSize, MaxCommits: defaultMaxCommits, JobOrder: "none", MaxConcurrent: defaultMaxConcurrent}
	if v, ok := tableProps[TargetSizeProperty]; ok {
		props := optval.Parser{KV: map[string]string{TargetSizeProperty: v}}
		props.SizeAtMost(TargetSizeProperty, &o.TargetFileSize, 1, maxSize)
		if props.Err != nil {
			return Options{}, &optval.PropertyError{Property: TargetSizeProperty, Value: v, Want: "a size in bytes", Example: "67108864"}
		}
	}
	p := optval.Parser{KV: kv}
	p.Bool(OptRewriteAll, &o.RewriteAll)
	p.Int(OptMinInputFiles, &o.MinInputFiles, 1)
	p.SizeAtMost(OptTargetFileSize, &o.TargetFileSize, 1, maxSize)
	o.MinFileSize, o.MaxFileSize = o.TargetFileSize*3/4, o.TargetFileSize*9/5
	p.SizeAtMost(OptMinFileSize, &o.MinFileSize, 0, maxSize)
	p.SizeAtMost(OptMaxFileSize, &o.MaxFileSize, 1, 2*maxSize)
	p.SizeAtMost(OptMaxFileGroupSize, &o.MaxFileGroupSize, 1, maxSize)
	p.Bool(OptPartialProgress, &o.PartialProgress)
	p.Bool(OptConvertEquality, &o.ConvertEquality)
	p.Int(OptPartialMaxCommits, &o.MaxCommits, 1)
	p.Int(OptMaxConcurrentGroups, &o.MaxConcurrent, 1)
	if v, ok := p.Value(OptRewriteJobOrder); ok {
		o.JobOrder = strings.ToLower(strings.TrimSpace(v))
		if !slices.Contains(jobOrders, o.JobOrder) {
			p.Err = fmt.Errorf("%w: %s=%q: want one of %s", optval.ErrBad, OptRewriteJobOrder, v, strings.Join(jobOrders, ", "))
		}
	}
	if p.Err != nil {
		return Options{}, p.Err
	}
	switch {
	case o.MinFileSize > o.TargetFileSize:
		return Options{}, fmt.Errorf("%w: %s (%d) is above %s (%d)", optval.ErrBad, OptMinFileSize, o.MinFileSize, OptTargetFileSize, o.TargetFileSize)
	case o.MaxFileSize < o.TargetFileSize:
		return Options{}, fmt.Errorf("%w: %s (%d) is below %s (%d)", optval.ErrBad, OptMaxFileSize, o.MaxFileSize, OptTargetFileSize, o.TargetFileSize)
	}
	return o, nil
}

var jobOrders = []string{"none", "bytes-asc", "bytes-desc", "files-asc", "files-desc"}
