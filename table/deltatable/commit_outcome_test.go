package deltatable_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
)

// echoStore is a store whose client retries a put of a log version after
// the reply to the first was lost: the first put takes the version, and
// the retry, meeting its own object, reports that the version exists.
// With unreadable set, the version then cannot be read back.
type echoStore struct {
	delta.Storage
	unreadable bool
	echoed     atomic.Bool
}

func (s *echoStore) PutIfAbsent(ctx context.Context, name string, data []byte) error {
	if err := s.Storage.PutIfAbsent(ctx, name, data); err != nil || !strings.HasPrefix(name, "_delta_log/") {
		return err
	}
	s.echoed.Store(true)
	return delta.ErrExist
}

func (s *echoStore) Open(ctx context.Context, name string) (delta.File, error) {
	if s.unreadable && s.echoed.Load() && strings.HasPrefix(name, "_delta_log/") {
		return nil, errors.New("read timed out")
	}
	return s.Storage.Open(ctx, name)
}

// TestOptimizeOwnVersionIsNotALostRace: an OPTIMIZE whose put of the next
// log version took it, and whose store then reported the version as
// existing, is not a lost race: it is committed when the version holds its
// own actions, and of unknown outcome when the version cannot be read
// back. Either way every file the latest version names exists and the
// table reads the same rows.
func TestOptimizeOwnVersionIsNotALostRace(t *testing.T) {
	req := engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")}
	for _, unreadable := range []bool{false, true} {
		t.Run(map[bool]string{false: "read-back", true: "unreadable"}[unreadable], func(t *testing.T) {
			plain, dir := newTable(t, "none")
			appendPoints(t, plain, "2026-01-01", 0, 4, 100)
			before := rows(t, plain)
			v0, err := plain.Snapshot(t.Context())
			require.NoError(t, err)
			store := &echoStore{Storage: plain.Store, unreadable: unreadable}
			ft, err := deltatable.Open(t.Context(), &delta.Table{Store: store}, dir, table.ForWrite)
			require.NoError(t, err)
			res, err := engine.Rewrite(t.Context(), ft, req)
			require.True(t, store.echoed.Load())
			if unreadable {
				require.Error(t, err)
				assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)
				assert.False(t, table.IsNotCommitted(err), "error %v must not say nothing was committed", err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, []int64{v0.Version + 1}, res.SnapshotIDs)
			}

			after, err := plain.Snapshot(t.Context())
			require.NoError(t, err)
			require.Equal(t, v0.Version+1, after.Version, "one OPTIMIZE committed")
			for _, a := range after.Files {
				f, err := plain.Store.Open(t.Context(), a.Path)
				if assert.NoError(t, err, "a file the table names") {
					f.Close()
				}
			}
			assert.Equal(t, before, rows(t, plain))
		})
	}
}
