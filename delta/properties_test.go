package delta_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
)

// racingStore commits concurrent before the first commit it is asked to
// write, so that the commit loses the race to it.
type racingStore struct {
	delta.Storage
	tbl        *delta.Table
	concurrent func(version int64) []delta.Action
	raced      bool
}

func (s *racingStore) PutIfAbsent(ctx context.Context, name string, data []byte) error {
	if !s.raced {
		s.raced = true
		snap, err := s.tbl.Snapshot(ctx)
		if err != nil {
			return err
		}
		if err := delta.Commit(ctx, s.tbl, snap.Version+1, s.concurrent(snap.Version)); err != nil {
			return err
		}
	}
	return s.Storage.PutIfAbsent(ctx, name, data)
}

// TestSetProperties sets and unsets properties in metaData commits that keep
// the table's id, schema and partitioning, and refuses protocol properties
// without writing anything.
func TestSetProperties(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true, Properties: map[string]string{"owner": "gis"}})
	before := deltatest.Snapshot(t, tbl)

	pc, err := tbl.SetProperties(t.Context(), map[string]string{delta.PropTargetFileSize: "1048576", "team": "maps"}, []string{"owner"}, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(1), pc.Version)
	s := deltatest.Snapshot(t, tbl)
	assert.Equal(t, map[string]string{delta.PropTargetFileSize: "1048576", "team": "maps"}, s.Metadata.Configuration)
	assert.Equal(t, before.Metadata.ID, s.Metadata.ID)
	assert.Equal(t, before.Metadata.SchemaString, s.Metadata.SchemaString)
	assert.Equal(t, []string{"part"}, s.Metadata.PartitionColumns)
	require.NotNil(t, s.CommitInfo)
	assert.Equal(t, "SET TBLPROPERTIES", s.CommitInfo.Operation)

	_, err = tbl.SetProperties(t.Context(), nil, []string{"team"}, 1)
	require.NoError(t, err)
	s = deltatest.Snapshot(t, tbl)
	assert.Equal(t, "UNSET TBLPROPERTIES", s.CommitInfo.Operation)
	assert.NotContains(t, s.Metadata.Configuration, "team")

	for _, tc := range []struct {
		set   map[string]string
		unset []string
		want  string
	}{
		{map[string]string{"delta.enableDeletionVectors": "true"}, nil, `table feature "deletionVectors"`},
		{nil, []string{"delta.columnMapping.mode"}, `table feature "columnMapping"`},
		{map[string]string{"delta.feature.rowTracking": "supported"}, nil, `table feature "rowTracking"`},
		{map[string]string{"delta.somethingElse": "1"}, nil, delta.PropCheckpointInterval},
		{map[string]string{delta.PropDeletedFileRetention: "a week"}, nil, "interval 7 days"},
		{map[string]string{delta.PropCheckpointInterval: "0"}, nil, "positive"},
	} {
		_, err := tbl.SetProperties(t.Context(), tc.set, tc.unset, 1)
		var pe *delta.PropertyError
		require.ErrorAs(t, err, &pe, "%v %v", tc.set, tc.unset)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.Equal(t, int64(2), deltatest.Snapshot(t, tbl).Version, "a refused change commits nothing")
}

// TestSetPropertiesRace: a concurrent append is retried on the next
// version; a concurrent metadata change is a conflict.
func TestSetPropertiesRace(t *testing.T) {
	dir := t.TempDir()
	base := deltatest.Create(t, dir, deltatest.Options{})
	add := deltatest.WriteFile(t, base, "a.parquet", "", 0, deltatest.Point(t, 1, 2))
	store := &racingStore{Storage: base.Store, tbl: base, concurrent: func(v int64) []delta.Action {
		return []delta.Action{delta.NewCommitInfo("WRITE", nil, v, nil), {Add: add}}
	}}
	racing := &delta.Table{Store: store}
	pc, err := racing.SetProperties(t.Context(), map[string]string{"team": "maps"}, nil, 3)
	require.NoError(t, err)
	assert.Equal(t, int64(2), pc.Version, "retried after the append")
	s := deltatest.Snapshot(t, base)
	assert.Equal(t, "maps", s.Metadata.Configuration["team"])
	assert.Len(t, s.Files, 1, "the append is kept")

	store = &racingStore{Storage: base.Store, tbl: base, concurrent: func(v int64) []delta.Action {
		md := *deltatest.Snapshot(t, base).Metadata
		md.Configuration = map[string]string{"team": "other"}
		return []delta.Action{delta.NewCommitInfo("SET TBLPROPERTIES", nil, v, nil), {MetaData: &md}}
	}}
	racing = &delta.Table{Store: store}
	_, err = racing.SetProperties(t.Context(), map[string]string{"team": "maps"}, nil, 3)
	var ce *delta.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "other", deltatest.Snapshot(t, base).Metadata.Configuration["team"])
}
