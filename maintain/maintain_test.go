package maintain_test

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/where"
)

func TestGateEvaluate(t *testing.T) {
	t.Parallel()
	g := maintain.GatePolicy{MinAvgFileBytes: 1 << 20, MaxFilesPerPartition: 100}
	part := func(name string, files, avg int64) maintain.PartitionMetrics {
		return maintain.PartitionMetrics{Partition: name, FileCount: files, AvgFileBytes: avg, TotalBytes: files * avg}
	}
	tests := []struct {
		name       string
		parts      []maintain.PartitionMetrics
		fired      []string
		firedWhere []string
	}{
		{"empty table", nil, []string{}, []string{}},
		{"one big file", []maintain.PartitionMetrics{part("", 1, 8<<20)}, []string{}, []string{}},
		{"one small file cannot be compacted", []maintain.PartitionMetrics{part("", 1, 10)}, []string{}, []string{}},
		{"small files", []maintain.PartitionMetrics{part("", 20, 5000)}, []string{maintain.GateMinAvgFileBytes}, []string{""}},
		{"many big files", []maintain.PartitionMetrics{part("d=1", 101, 4<<20), part("d=2", 100, 4<<20)}, []string{maintain.GateMaxFilesPerPartition}, []string{"d=1"}},
		{"both", []maintain.PartitionMetrics{part("d=1", 500, 10), part("d=2", 3, 8<<20)}, []string{maintain.GateMinAvgFileBytes, maintain.GateMaxFilesPerPartition}, []string{"d=1"}},
		{"at the thresholds", []maintain.PartitionMetrics{part("d=1", 100, 1<<20)}, []string{}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := g.Evaluate(&maintain.TableMetrics{Partitions: tc.parts})
			if d.Compact != (len(tc.fired) > 0) {
				t.Errorf("Compact = %v, want %v (%s)", d.Compact, len(tc.fired) > 0, d.Reason)
			}
			if diff := cmp.Diff(tc.fired, d.Fired); diff != "" {
				t.Errorf("fired (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.firedWhere, d.Partitions); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
			for _, f := range tc.fired {
				if !strings.Contains(d.Reason, f) {
					t.Errorf("reason %q does not name %s", d.Reason, f)
				}
			}
			if len(tc.fired) == 0 && !strings.Contains(d.Reason, "no threshold fired") {
				t.Errorf("reason %q does not say nothing fired", d.Reason)
			}
		})
	}
}

// testPolicy compacts small files with a binpack, and expires and removes
// orphans on every run at the retention floor.
func testPolicy() maintain.Policy {
	p := maintain.DefaultPolicy()
	zero := maintain.Duration(0)
	p.Expire.Every, p.Orphans.Every = &zero, &zero
	p.Expire.OlderThan, p.Orphans.OlderThan = maintain.Duration(time.Hour), maintain.Duration(time.Hour)
	return p
}

func stepStatus(rep *maintain.Report) map[string]string {
	out := map[string]string{}
	for _, s := range rep.Steps {
		out[s.Step] = s.Status
	}
	return out
}

func TestMaintainCompactsThenStaysQuiet(t *testing.T) {
	t.Parallel()
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) { testMaintainCompactsThenStaysQuiet(t, c) })
	}
}

func testMaintainCompactsThenStaysQuiet(t *testing.T, c testenv.Catalog) {
	const name = "t.x"
	cat := fragmentedOn(t, c, name, 2000, 20)
	rows, _ := liveRows(t, load(t, cat, name))
	dir := tableDir(t, load(t, cat, name))
	orphan := filepath.Join(dir, "data", "left-by-a-crash.parquet")
	plant(t, orphan, 500, 2*time.Hour)

	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: testPolicy(), Owner: "test"})
	if err != nil {
		t.Fatalf("maintain: %v\nsteps %+v", err, rep.Steps)
	}
	st := stepStatus(rep)
	want := map[string]string{"lease": maintain.StepDone, "measure": maintain.StepDone, "gate": maintain.StepDone, "rewrite": maintain.StepDone,
		"verify": maintain.StepDone, "deletes": maintain.StepSkipped, "manifests": maintain.StepSkipped, "expire": maintain.StepDone, "orphans": maintain.StepDone}
	if d := cmp.Diff(want, st); d != "" {
		t.Fatalf("steps (-want +got):\n%s\n%+v", d, rep.Steps)
	}
	if !slicesContain(rep.Gate.Fired, maintain.GateMinAvgFileBytes) {
		t.Errorf("gate fired %v, want %s", rep.Gate.Fired, maintain.GateMinAvgFileBytes)
	}
	if rep.Before.FileCount != 20 || rep.After.FileCount >= rep.Before.FileCount || rep.After.TotalRecords != rows {
		t.Errorf("files %d -> %d, rows after %d; want fewer files and %d rows", rep.Before.FileCount, rep.After.FileCount, rep.After.TotalRecords, rows)
	}
	// Fresh snapshots are younger than the floor: nothing expires.
	if len(rep.Expire.ExpiredSnapshots) != 0 {
		t.Errorf("expired %d snapshots younger than an hour", len(rep.Expire.ExpiredSnapshots))
	}
	if len(rep.Orphans.Files) != 1 || trimFileScheme(rep.Orphans.Files[0].Path) != orphan {
		t.Errorf("orphans removed %+v, want only %s", rep.Orphans.Files, orphan)
	}
	tbl := load(t, cat, name)
	if hasLeaseTag(tbl) || tbl.Properties()[maintain.PropLeaseOwner] != "" {
		t.Errorf("lease not released: %v", tbl.Properties())
	}
	for _, k := range []string{maintain.PropLastRewriteMs, maintain.PropLastExpireMs, maintain.PropLastOrphansMs} {
		ms, err := strconv.ParseInt(tbl.Properties()[k], 10, 64)
		if err != nil || time.Since(time.UnixMilli(ms)) > time.Minute {
			t.Errorf("property %s = %q, want a recent time", k, tbl.Properties()[k])
		}
	}

	// Second run: the table is compacted; the gate stays quiet and the
	// daily cadence skips expiry.
	p := testPolicy()
	day := maintain.Duration(24 * time.Hour)
	p.Expire.Every = &day
	rep, err = maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	st = stepStatus(rep)
	if st["gate"] != maintain.StepNoop || st["rewrite"] != maintain.StepSkipped || st["expire"] != maintain.StepSkipped || rep.Gate.Compact {
		t.Errorf("second run steps %+v, want a quiet gate and expiry skipped by cadence", rep.Steps)
	}
	if !strings.Contains(rep.Gate.Reason, "no threshold fired") {
		t.Errorf("gate reason %q", rep.Gate.Reason)
	}
}

func slicesContain(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestMaintainRefusedWhileLeased(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 500, 6)
	snaps := snapshotIDs(load(t, cat, name))
	if _, err := maintain.AcquireLease(t.Context(), cat, name, "other-run", time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: testPolicy()})
	var le *maintain.LeaseError
	if !errors.As(err, &le) || le.Owner != "other-run" || !catalogs.IsRetryable(err) {
		t.Fatalf("err = %v, want a retryable LeaseError naming other-run", err)
	}
	if d := cmp.Diff(snaps, snapshotIDs(load(t, cat, name))); d != "" {
		t.Fatalf("refused run committed snapshots:\n%s", d)
	}
	// The other run crashed and its lease lapsed: the next run takes over.
	setProps(t, cat, name, map[string]string{maintain.PropLeaseExpiresMs: strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10)})
	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: testPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lease.TookOverFrom != "other-run" || !strings.Contains(rep.Steps[0].Detail, "other-run") {
		t.Fatalf("lease %+v, step %+v; want a takeover from other-run", rep.Lease, rep.Steps[0])
	}
}

func TestMaintainRefusesPolicyBelowFloor(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 100, 3)
	p := testPolicy()
	p.Expire.OlderThan = maintain.Duration(10 * time.Minute)
	_, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p})
	if !errors.Is(err, maintain.ErrPolicy) {
		t.Fatalf("err = %v, want ErrPolicy", err)
	}
	if hasLeaseTag(load(t, cat, name)) {
		t.Fatal("refused run took the lease")
	}
}

func TestRewriteThenExpireShrinksTable(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 2000, 20)
	tbl := load(t, cat, name)
	rows, _ := liveRows(t, tbl)
	dir := tableDir(t, tbl)
	res, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Curve: "hilbert"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.RewrittenDataFilesCount != 20 {
		t.Fatalf("rewrite: verified %v, %d files rewritten", res.Verified, res.RewrittenDataFilesCount)
	}
	before := listFiles(t, dir)
	exp, err := maintain.Expire(t.Context(), cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	after := listFiles(t, dir)
	var goneBytes, dataBytes int64
	for p, n := range before {
		if _, ok := after[p]; !ok {
			goneBytes += n
		}
	}
	for _, f := range exp.Files {
		if f.Kind == maintain.KindData {
			dataBytes += f.Bytes
		}
	}
	if exp.DeletedDataFilesCount != res.RewrittenDataFilesCount || dataBytes != res.RewrittenBytesCount {
		t.Errorf("expiry freed %d data files (%d bytes), want the %d rewritten (%d bytes)", exp.DeletedDataFilesCount, dataBytes, res.RewrittenDataFilesCount, res.RewrittenBytesCount)
	}
	if goneBytes != exp.FreedBytes {
		t.Errorf("directory shrank by %d bytes, expiry reported %d", goneBytes, exp.FreedBytes)
	}
	if got, _ := liveRows(t, load(t, cat, name)); got != rows {
		t.Errorf("rows %d, want %d", got, rows)
	}
}

func TestGateThresholdsOff(t *testing.T) {
	t.Parallel()
	p, err := maintain.ParsePolicy([]byte("gate:\n  min-avg-file-bytes: -1\n  max-files-per-partition: -1\n"), "off")
	if err != nil {
		t.Fatal(err)
	}
	m := &maintain.TableMetrics{Partitions: []maintain.PartitionMetrics{{FileCount: 5000, AvgFileBytes: 10, TotalBytes: 50000}}}
	if d := p.Gate.Evaluate(m); d.Compact {
		t.Fatalf("gate with both thresholds off fired: %s", d.Reason)
	}
}

// TestMaintainStepErrorNamesStep fails the rewrite step (its --where names
// no column of the table): the error must say which step failed, as the
// report does.
func TestMaintainStepErrorNamesStep(t *testing.T) {
	t.Parallel()
	const name = "t.bad"
	cat := fragmented(t, name, 500, 6)
	p := testPolicy()
	p.Rewrite.Where = "no_such_column = 1"
	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p, Owner: "test"})
	require.ErrorIs(t, err, where.ErrInvalid)
	assert.ErrorContains(t, err, "maintain t.bad: rewrite: ")
	require.NotNil(t, rep)
	assert.Equal(t, maintain.StepFailed, stepStatus(rep)["rewrite"])
}
