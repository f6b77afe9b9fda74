package maintain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
)

// steady is a history of n commits of size bytes, every interval, ending
// now, on an unpartitioned table holding all of them.
func steady(n int, size int64, interval time.Duration) maintain.History {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := maintain.History{}
	for i := range n {
		h.Ingests = append(h.Ingests, maintain.Ingest{Time: start.Add(time.Duration(i) * interval), AddedBytes: size, AddedFiles: 1})
	}
	total := int64(n) * size
	h.Metrics = &maintain.TableMetrics{FileCount: int64(n), TotalBytes: total, AvgFileBytes: size,
		Partitions: []maintain.PartitionMetrics{{FileCount: int64(n), TotalBytes: total, AvgFileBytes: size}}}
	return h
}

func checkAdvice(t *testing.T, a maintain.Advice) {
	t.Helper()
	if a.Cadence < time.Hour || a.Cadence > 24*time.Hour {
		t.Errorf("cadence %s outside [1h, 24h]", a.Cadence)
	}
	if a.TargetFileSizeBytes < 8<<20 || a.TargetFileSizeBytes > 512<<20 || a.TargetFileSizeBytes&(a.TargetFileSizeBytes-1) != 0 {
		t.Errorf("target %d is not a power of two in [8 MiB, 512 MiB]", a.TargetFileSizeBytes)
	}
	if a.MinFileSizeBytes >= a.TargetFileSizeBytes || a.MinFileSizeBytes <= 0 {
		t.Errorf("min-file-size %d not below target %d", a.MinFileSizeBytes, a.TargetFileSizeBytes)
	}
	if a.TargetFileSizeBytes < a.BytesPerCommit {
		t.Errorf("target %d below one commit's %d bytes", a.TargetFileSizeBytes, a.BytesPerCommit)
	}
	if a.MinAvgFileBytes <= 0 || a.MinAvgFileBytes >= a.MinFileSizeBytes {
		t.Errorf("gate floor %d not between 0 and min-file-size %d", a.MinAvgFileBytes, a.MinFileSizeBytes)
	}
	if a.ExpireOlderThan < maintain.MinRetention || a.ExpireOlderThan < a.Cadence || a.ExpireOlderThan > 7*24*time.Hour {
		t.Errorf("expire older-than %s: want between max(floor, cadence %s) and 7d", a.ExpireOlderThan, a.Cadence)
	}
	if err := a.Policy.Validate(); err != nil {
		t.Errorf("advised policy is invalid: %v", err)
	}
	if len(a.Reasons) < 4 {
		t.Errorf("advice gives %d reasons, want one per suggestion", len(a.Reasons))
	}
}

func TestAdviseStreamingTable(t *testing.T) {
	t.Parallel()
	// 100 commits of ~100 KB per hour.
	a := maintain.AdviseFrom(steady(100, 100_000, 36*time.Second))
	checkAdvice(t, a)
	if a.CommitsPerHour < 90 || a.CommitsPerHour > 110 {
		t.Errorf("commits/h = %.1f, want about 100", a.CommitsPerHour)
	}
	// A streaming table is compacted often, into files that hold about
	// what arrives between runs.
	if a.Cadence > 2*time.Hour {
		t.Errorf("cadence %s for 100 commits/h, want at most 2h", a.Cadence)
	}
	perRun := int64(a.IngestBytesPerHour * a.Cadence.Hours())
	if a.TargetFileSizeBytes > max(perRun, 8<<20) {
		t.Errorf("target %d larger than one cadence's ingest %d", a.TargetFileSizeBytes, perRun)
	}
	// The gate fires once a cadence's commits have piled up.
	if a.MaxFilesPerPartition > int64(a.CommitsPerHour*a.Cadence.Hours())+a.LargestPartition/a.TargetFileSizeBytes+1 {
		t.Errorf("max-files-per-partition %d lets more than a cadence of commits pile up", a.MaxFilesPerPartition)
	}
	// It keeps a day of time travel, not the full 7 days of 100 commits/h.
	if a.ExpireOlderThan > 2*24*time.Hour {
		t.Errorf("expire older-than %s keeps more than %d snapshots", a.ExpireOlderThan, int(a.CommitsPerHour*a.ExpireOlderThan.Hours()))
	}
}

func TestAdviseRelations(t *testing.T) {
	t.Parallel()
	fast := maintain.AdviseFrom(steady(100, 100_000, 36*time.Second))
	slow := maintain.AdviseFrom(steady(100, 100_000, time.Hour))
	heavy := maintain.AdviseFrom(steady(100, 100_000_000, 36*time.Second))
	unknown := maintain.AdviseFrom(steady(1, 100_000, time.Hour))
	for _, a := range []maintain.Advice{slow, heavy, unknown} {
		checkAdvice(t, a)
	}
	if slow.Cadence < fast.Cadence {
		t.Errorf("slow table cadence %s shorter than fast table's %s", slow.Cadence, fast.Cadence)
	}
	if slow.ExpireOlderThan < fast.ExpireOlderThan {
		t.Errorf("slow table retention %s shorter than fast table's %s", slow.ExpireOlderThan, fast.ExpireOlderThan)
	}
	if heavy.TargetFileSizeBytes <= fast.TargetFileSizeBytes {
		t.Errorf("1000x the ingest gives target %d, not above %d", heavy.TargetFileSizeBytes, fast.TargetFileSizeBytes)
	}
	if unknown.Cadence != 24*time.Hour || unknown.ExpireOlderThan != maintain.DefaultExpireOlderThan || !strings.Contains(strings.Join(unknown.Reasons, "\n"), "unknown") {
		t.Errorf("one commit: cadence %s, retention %s, reasons %q; want the defaults, saying the rate is unknown", unknown.Cadence, unknown.ExpireOlderThan, unknown.Reasons)
	}
}

func TestAdviseTable(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 1000, 10)
	a, err := maintain.Advise(t.Context(), load(t, cat, name))
	if err != nil {
		t.Fatal(err)
	}
	checkAdvice(t, *a)
	if a.IngestCommits != 10 || a.FileCount != 10 || a.Table != name {
		t.Errorf("advice saw %d commits, %d files of %q; want 10, 10, %s", a.IngestCommits, a.FileCount, a.Table, name)
	}
	calls := a.SparkCalls("lake", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	all := strings.Join(calls, "\n")
	for _, want := range []string{
		"CALL lake.system.rewrite_data_files(table => 't.x', strategy => 'sort', sort_order => 'zorder(bbox_minx, bbox_miny)'",
		"'target-file-size-bytes', '",
		"CALL lake.system.expire_snapshots(table => 't.x', older_than => TIMESTAMP '2026-02-",
		"retain_last => 1)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("spark calls lack %q:\n%s", want, all)
		}
	}
}

// TestAdviseRefusesShortHistory checks that a burst of commits seconds
// apart gives no commit rate (and says how much history it needs) rather
// than a projection of thousands of commits per hour.
func TestAdviseRefusesShortHistory(t *testing.T) {
	t.Parallel()
	for _, h := range []maintain.History{
		steady(5, 100_000, 3*time.Second), // 12 seconds
		steady(2, 100_000, 2*time.Hour),   // too few commits
	} {
		a := maintain.AdviseFrom(h)
		assert.Zero(t, a.CommitsPerHour)
		assert.Contains(t, a.RateUnknown, "needs at least 3 over at least 30m")
		assert.Equal(t, 24*time.Hour, a.Cadence, "the cadence falls back to the default")
		assert.Contains(t, strings.Join(a.Reasons, "\n"), "unknown")
		checkAdvice(t, a)
	}
	a := maintain.AdviseFrom(steady(5, 100_000, 3*time.Second))
	assert.Contains(t, a.RateUnknown, "5 ingest commits over 12s")
	a = maintain.AdviseFrom(steady(3, 100_000, 20*time.Minute))
	assert.Empty(t, a.RateUnknown, "3 commits over 40 minutes are enough")
	assert.InDelta(t, 3.0, a.CommitsPerHour, 0.01)
}

func TestAdviseDeleteCure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		debt *maintain.DeleteDebt
		want string
		call bool
	}{
		{nil, maintain.DeleteCureNone, false},
		{&maintain.DeleteDebt{PositionDeleteFiles: 3, DeletedFraction: 0.01}, maintain.DeleteCureNone, false},
		{&maintain.DeleteDebt{PositionDeleteFiles: 40, DeletedFraction: 0.05}, maintain.DeleteCureCompact, true},
		{&maintain.DeleteDebt{PositionDeleteFiles: 40, DeletedFraction: 0.35}, maintain.DeleteCureRewrite, false},
		{&maintain.DeleteDebt{EqualityDeleteFiles: 2, DeletedFraction: 0}, maintain.DeleteCureRewrite, false},
	} {
		a := maintain.AdviseFrom(maintain.History{Metrics: &maintain.TableMetrics{Deletes: tc.debt}})
		a.Table = "d.t"
		assert.Equal(t, tc.want, a.DeleteCure, "%+v", tc.debt)
		calls := strings.Join(a.SparkCalls("cat", time.Now()), "\n")
		assert.Equal(t, tc.call, strings.Contains(calls, "CALL cat.system.rewrite_position_delete_files(table => 'd.t')"), calls)
		if tc.debt != nil {
			assert.Contains(t, strings.Join(a.Reasons, "\n"), "deletes: ")
		}
	}
}

// TestAdviseKeepsASortedTablesFiles checks that a table whose last
// rewrite sorted it into small files (as quickstart leaves one: 64 files
// of about 800 KiB) is advised to keep that file size, not a target that
// folds the clustered files together, and says why; an unsorted table of
// the same files gets the usual target.
func TestAdviseKeepsASortedTablesFiles(t *testing.T) {
	t.Parallel()
	m := &maintain.TableMetrics{FileCount: 64, TotalBytes: 64 * 800 << 10, AvgFileBytes: 800 << 10}
	plain := maintain.AdviseFrom(maintain.History{Metrics: m})
	assert.Equal(t, int64(32<<20), plain.TargetFileSizeBytes, "unsorted: what arrives per cadence")

	a := maintain.AdviseFrom(maintain.History{Metrics: m, SortedOrder: "hilbert()"})
	assert.Equal(t, int64(800<<10), a.TargetFileSizeBytes, "sorted: the files it has")
	assert.Equal(t, a.TargetFileSizeBytes*3/4, a.MinFileSizeBytes)
	assert.Less(t, a.MinAvgFileBytes, a.MinFileSizeBytes)
	assert.Contains(t, strings.Join(a.Reasons, "\n"), "the last rewrite sorted the table (hilbert())")
	require.NoError(t, a.Policy.Validate())

	// Files already larger than the advised target are left to it.
	big := &maintain.TableMetrics{FileCount: 4, TotalBytes: 4 << 30, AvgFileBytes: 1 << 30}
	b := maintain.AdviseFrom(maintain.History{Metrics: big, SortedOrder: "hilbert()"})
	assert.Equal(t, int64(512<<20), b.TargetFileSizeBytes)
}
