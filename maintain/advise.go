package maintain

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/optval"
)

// Bounds of the advice.
const (
	minAdvisedTarget = 8 << 20
	// minSortedTarget is the smallest target kept for a sorted table:
	// bench's smallest default target.
	minSortedTarget   = 64 << 10
	minAdvisedCadence = time.Hour
	maxAdvisedCadence = 24 * time.Hour
	// smallFileBudget is how many small files a partition may collect
	// between compactions before reads suffer noticeably.
	smallFileBudget = 100
	// snapshotBudget is how many snapshots the history should hold at most;
	// beyond it metadata and planning grow for little time-travel value.
	snapshotBudget = 1000
	// MinRateCommits and MinRateSpan are the least history a commit rate
	// is measured from: fewer commits, or commits closer together, would
	// extrapolate a burst (5 commits in 12 seconds is not 1,500 an hour).
	MinRateCommits = 3
	MinRateSpan    = 30 * time.Minute
)

// maxAdvisedTarget is the largest advised target file size: the engine's
// default target, Iceberg's 512 MiB.
var maxAdvisedTarget = defaultTargetFileSize()

func defaultTargetFileSize() int64 {
	o, err := engine.Request{}.OptionsFor(nil)
	if err != nil {
		panic(err) // the defaults are valid
	}
	return o.TargetFileSize
}

// Ingest is one ingest commit of a table's history.
type Ingest struct {
	Time       time.Time
	AddedBytes int64
	AddedFiles int64
}

// History is what Advise learns from: the table's ingest commits (appends
// and overwrites, not compactions) and its current metrics.
type History struct {
	Ingests []Ingest
	Metrics *TableMetrics
	// SortedOrder is the sort order of the table's last geocompact
	// rewrite when it sorted ("" when it did not, or none is known).
	SortedOrder string
}

// Advice is a suggested maintenance set-up for one table, with the figures
// it rests on and the reason for each suggestion.
type Advice struct {
	Table string `json:"table"`

	// Observed figures.
	IngestCommits      int           `json:"ingest_commits"`
	HistorySpan        time.Duration `json:"history_span_ns"`
	CommitsPerHour     float64       `json:"commits_per_hour"`
	BytesPerCommit     int64         `json:"bytes_per_commit"`
	IngestBytesPerHour float64       `json:"ingest_bytes_per_hour"`
	FileCount          int64         `json:"file_count"`
	AvgFileBytes       int64         `json:"avg_file_bytes"`
	Partitions         int           `json:"partitions"`
	LargestPartition   int64         `json:"largest_partition_bytes"`

	// Suggestions.
	TargetFileSizeBytes  int64         `json:"target_file_size_bytes"`
	MinFileSizeBytes     int64         `json:"min_file_size_bytes"`
	Cadence              time.Duration `json:"cadence_ns"`
	MinAvgFileBytes      int64         `json:"min_avg_file_bytes"`
	MaxFilesPerPartition int64         `json:"max_files_per_partition"`
	ExpireOlderThan      time.Duration `json:"expire_older_than_ns"`
	RetainLast           int           `json:"retain_last"`
	// Reasons explain each suggestion, one line each.
	Reasons []string `json:"reasons"`
	// RateUnknown, when set, says why the history was too short to
	// measure a commit rate from and how much it needs; the rate-based
	// suggestions then fall back to defaults.
	RateUnknown string `json:"rate_unknown,omitempty"`
	// DeleteCure is how the table's delete debt is best paid:
	// DeleteCureNone, DeleteCureCompact (rewrite_position_delete_files) or
	// DeleteCureRewrite (rewrite the data files the deletes apply to).
	DeleteCure string `json:"delete_cure"`
	// Policy is the maintain policy the suggestions add up to.
	Policy Policy `json:"-"`
	// SparkSortOrder is the sort_order for Spark's rewrite_data_files, or
	// "" when Spark cannot cluster this table spatially (no bbox columns).
	SparkSortOrder string `json:"spark_sort_order"`
}

// Advise reads tbl's snapshot history and current metrics and suggests a
// target file size, min-file-size, compaction cadence and retention.
func Advise(ctx context.Context, tbl *table.Table) (*Advice, error) {
	m, err := Metrics(ctx, tbl)
	if err != nil {
		return nil, err
	}
	h := History{Metrics: m, SortedOrder: lastSortedRewrite(tbl.Metadata().Snapshots())}
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil || (s.Summary.Operation != table.OpAppend && s.Summary.Operation != table.OpOverwrite) {
			continue
		}
		b, _ := strconv.ParseInt(s.Summary.Properties["added-files-size"], 10, 64)
		f, _ := strconv.ParseInt(s.Summary.Properties["added-data-files"], 10, 64)
		h.Ingests = append(h.Ingests, Ingest{Time: time.UnixMilli(s.TimestampMs), AddedBytes: b, AddedFiles: f})
	}
	a := AdviseFrom(h)
	a.Table = catalogs.TableName(tbl)
	if cols, err := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), ""); err == nil && cols.HasBBox() {
		a.SparkSortOrder = fmt.Sprintf("zorder(%s, %s)", cols.BBox[0], cols.BBox[1])
	} else {
		a.SparkSortOrder = ""
	}
	return &a, nil
}

// AdviseFrom derives the advice from a history; it is pure.
//
//   - Cadence: long enough for a partition to collect about 100 small
//     files (commits per hour / 100), between 1h and 24h. Unknown rates
//     (fewer than two commits) give 24h.
//   - Target file size: what arrives in one cadence, rounded down to a
//     power of two, between 8 MiB and 512 MiB. Files no larger than one
//     cadence's ingest are written once and never rewritten again as the
//     table grows; below that, pruning gains little from bigger files.
//   - min-file-size: 75% of the target, Iceberg's ratio.
//   - Gate: a partition fires when its files average below a quarter of
//     the target, or when it holds more files than its data needs at the
//     target plus one cadence of commits.
//   - Retention: expire snapshots older than the time the history takes to
//     reach 1000 snapshots, between max(1 day, 2 cadences) and 7 days.
func AdviseFrom(h History) Advice {
	m := h.Metrics
	if m == nil {
		m = &TableMetrics{}
	}
	a := Advice{FileCount: m.FileCount, AvgFileBytes: m.AvgFileBytes, Partitions: len(m.Partitions), RetainLast: DefaultRetainLast}
	for _, p := range m.Partitions {
		a.LargestPartition = max(a.LargestPartition, p.TotalBytes)
	}
	commits := slices.Clone(h.Ingests)
	slices.SortFunc(commits, func(x, y Ingest) int { return x.Time.Compare(y.Time) })
	a.IngestCommits = len(commits)
	var added int64
	for _, c := range commits {
		added += c.AddedBytes
	}
	if len(commits) > 0 {
		a.BytesPerCommit = added / int64(len(commits))
	}
	if len(commits) >= 2 {
		a.HistorySpan = commits[len(commits)-1].Time.Sub(commits[0].Time)
	}
	known := len(commits) >= MinRateCommits && a.HistorySpan >= MinRateSpan
	if !known {
		a.RateUnknown = fmt.Sprintf("the history holds %d ingest commits over %s; measuring a commit rate needs at least %d over at least %s",
			len(commits), FormatDuration(a.HistorySpan.Round(time.Second)), MinRateCommits, FormatDuration(MinRateSpan))
	}
	if known {
		// n commits span n-1 intervals.
		hours := a.HistorySpan.Hours() * float64(len(commits)) / float64(len(commits)-1)
		a.CommitsPerHour = float64(len(commits)) / hours
		a.IngestBytesPerHour = float64(added) / hours
	}

	// Cadence.
	a.Cadence = maxAdvisedCadence
	if known {
		hrs := math.Floor(smallFileBudget / a.CommitsPerHour)
		a.Cadence = min(max(time.Duration(hrs)*time.Hour, minAdvisedCadence), maxAdvisedCadence)
		a.reason("cadence %s: %.1f commits/h leave about %d small files per partition between runs",
			FormatDuration(a.Cadence), a.CommitsPerHour, int64(math.Ceil(a.CommitsPerHour*a.Cadence.Hours())))
	} else {
		a.reason("cadence %s: the commit rate is unknown (%s)", FormatDuration(a.Cadence), a.RateUnknown)
	}

	// Target file size.
	perCadence := int64(a.IngestBytesPerHour * a.Cadence.Hours())
	if !known {
		perCadence = max(a.LargestPartition, m.TotalBytes)
	}
	a.TargetFileSizeBytes = min(max(pow2Floor(perCadence), minAdvisedTarget), maxAdvisedTarget)
	a.MinFileSizeBytes = a.TargetFileSizeBytes * 3 / 4
	a.reason("target-file-size-bytes %s: about %s arrive per cadence (bounds %s to %s); min-file-size-bytes %s is 75%% of it",
		optval.FormatBytes(a.TargetFileSizeBytes), optval.FormatBytes(perCadence), optval.FormatBytes(minAdvisedTarget), optval.FormatBytes(maxAdvisedTarget), optval.FormatBytes(a.MinFileSizeBytes))
	a.keepSortedFiles(h.SortedOrder, m.AvgFileBytes)

	// Gate.
	a.MinAvgFileBytes = a.TargetFileSizeBytes / 4
	perRun := int64(math.Ceil(a.CommitsPerHour * a.Cadence.Hours()))
	need := (a.LargestPartition + a.TargetFileSizeBytes - 1) / a.TargetFileSizeBytes
	a.MaxFilesPerPartition = need + max(perRun, 10)
	a.reason("gate: compact a partition averaging below %s, or holding more than %d files (%d at the target for the largest partition, plus a cadence of commits)",
		optval.FormatBytes(a.MinAvgFileBytes), a.MaxFilesPerPartition, need)

	a.adviseRetention(known)
	a.adviseDeletes(m.Deletes)
	a.Policy = a.policy()
	return a
}

// keepSortedFiles lowers the target to avg, the table's average file
// size, when the last rewrite sorted the table into files less than half
// the target: that rewrite chose its file size for pruning (bench
// measures it), and a larger target would fold its clustered files
// together.
func (a *Advice) keepSortedFiles(order string, avg int64) {
	if order == "" || avg <= 0 || 2*avg > a.TargetFileSizeBytes {
		return
	}
	a.TargetFileSizeBytes = max(avg&^1023, minSortedTarget)
	a.MinFileSizeBytes = a.TargetFileSizeBytes * 3 / 4
	a.reason("target-file-size-bytes %s instead: the last rewrite sorted the table (%s) into files of about %s, and a larger target "+
		"would fold them together and lose the pruning they give; geocompact bench measures the best size for your windows",
		optval.FormatBytes(a.TargetFileSizeBytes), order, optval.FormatBytes(avg))
}

// The cures of Advice.DeleteCure.
const (
	DeleteCureNone    = "none"
	DeleteCureCompact = "compact-delete-files"
	DeleteCureRewrite = "rewrite-data-files"
)

// adviseDeletes chooses the cure for the delete debt d by the default
// deletes policy's thresholds: many rows hidden call for a data rewrite,
// many small position delete files for compacting them, and equality
// deletes only go with a data rewrite.
func (a *Advice) adviseDeletes(d *DeleteDebt) {
	p := DefaultPolicy().Deletes
	a.DeleteCure = DeleteCureNone
	switch {
	case d == nil:
	case d.DeletedFraction > p.RewriteDataAbove:
		a.DeleteCure = DeleteCureRewrite
		a.reason("deletes: they hide %.1f%% of the rows (over %.0f%%): rewrite the data files they apply to (maintain does: deletes.rewrite-data-above)",
			100*d.DeletedFraction, 100*p.RewriteDataAbove)
	case d.EqualityDeleteFiles > 0:
		a.DeleteCure = DeleteCureRewrite
		a.reason("deletes: %d equality delete files are applied on every read; a data rewrite with delete-file-threshold=1 removes them", d.EqualityDeleteFiles)
	case d.PositionDeleteFiles > p.MaxDeleteFiles:
		a.DeleteCure = DeleteCureCompact
		a.reason("deletes: %d position delete files hiding %.1f%% of the rows: compact them with geocompact rewrite-deletes (maintain does past deletes.max-delete-files %d)",
			d.PositionDeleteFiles, 100*d.DeletedFraction, p.MaxDeleteFiles)
	default:
		a.reason("deletes: %d delete files hiding %.1f%% of the rows need no maintenance yet", d.PositionDeleteFiles+d.EqualityDeleteFiles+d.DeletionVectors, 100*d.DeletedFraction)
	}
}

// adviseRetention suggests the snapshot age to expire; known says whether
// the commit rate is.
func (a *Advice) adviseRetention(known bool) {
	lo := max(24*time.Hour, 2*a.Cadence)
	a.ExpireOlderThan = DefaultExpireOlderThan
	if known {
		budget := time.Duration(float64(snapshotBudget) / a.CommitsPerHour * float64(time.Hour)).Round(time.Minute)
		a.ExpireOlderThan = min(max(budget, lo), 7*24*time.Hour)
		a.reason("expire older-than %s: at %.1f commits/h the history reaches %d snapshots in %s (kept between %s and 7d)",
			FormatDuration(a.ExpireOlderThan), a.CommitsPerHour, snapshotBudget, FormatDuration(budget), FormatDuration(lo))
	} else {
		a.reason("expire older-than %s: Iceberg's default, as the commit rate is unknown", FormatDuration(a.ExpireOlderThan))
	}

}

// policy is the maintain policy the suggestions add up to.
func (a *Advice) policy() Policy {
	p := DefaultPolicy()
	p.Gate = GatePolicy{MinAvgFileBytes: a.MinAvgFileBytes, MaxFilesPerPartition: a.MaxFilesPerPartition}
	p.Rewrite = RewritePolicy{Strategy: string(engine.Sort), Curve: "hilbert", Options: map[string]string{
		engine.OptTargetFileSize: strconv.FormatInt(a.TargetFileSizeBytes, 10),
		engine.OptMinFileSize:    strconv.FormatInt(a.MinFileSizeBytes, 10),
	}}
	daily := Duration(24 * time.Hour)
	p.Expire.Every = &daily
	p.Expire.OlderThan = Duration(a.ExpireOlderThan)
	p.Expire.RetainLast = a.RetainLast
	return p
}

func (a *Advice) reason(format string, args ...any) {
	a.Reasons = append(a.Reasons, fmt.Sprintf(format, args...))
}

// pow2Floor returns the largest power of two <= n (0 for n <= 0).
func pow2Floor(n int64) int64 {
	if n <= 0 {
		return 0
	}
	return 1 << (63 - bits.LeadingZeros64(uint64(n)))
}

// SparkCalls renders the advice as Spark SQL procedure calls on catalog,
// for teams that also run Spark. now dates expire_snapshots' older_than
// (Spark takes a timestamp; compute it at run time in a scheduled job).
func (a *Advice) SparkCalls(catalog string, now time.Time) []string {
	if catalog == "" {
		catalog = "catalog"
	}
	opts := fmt.Sprintf("map('%s', '%d', '%s', '%d')", engine.OptTargetFileSize, a.TargetFileSizeBytes, engine.OptMinFileSize, a.MinFileSizeBytes)
	var calls []string
	if a.SparkSortOrder != "" {
		calls = append(calls, fmt.Sprintf("CALL %s.system.rewrite_data_files(table => '%s', strategy => 'sort', sort_order => '%s', options => %s)",
			catalog, a.Table, a.SparkSortOrder, opts))
	} else {
		calls = append(calls, fmt.Sprintf("CALL %s.system.rewrite_data_files(table => '%s', strategy => 'binpack', options => %s)", catalog, a.Table, opts))
	}
	if a.DeleteCure == DeleteCureCompact {
		calls = append(calls, fmt.Sprintf("CALL %s.system.rewrite_position_delete_files(table => '%s')", catalog, a.Table))
	}
	cutoff := now.Add(-a.ExpireOlderThan).UTC().Format("2006-01-02 15:04:05")
	calls = append(calls, fmt.Sprintf("CALL %s.system.expire_snapshots(table => '%s', older_than => TIMESTAMP '%s', retain_last => %d)",
		catalog, a.Table, cutoff, a.RetainLast))
	return calls
}
