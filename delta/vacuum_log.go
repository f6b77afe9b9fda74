package delta

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// OpVacuumEnd is the commitInfo operation of a version recording a
// finished vacuum, as Delta writers log vacuums.
const OpVacuumEnd = "VACUUM END"

// RecordVacuum commits a version holding only a commitInfo that records
// the finished vacuum res (operation VACUUM END, its deleted files and
// bytes), so that a scheduler can tell when the table was last vacuumed
// (LastVacuum). Such a version changes no data and no metadata; when
// another writer commits first it is retried on the next version, up to
// maxAttempts times. It returns the committed version.
func (t *Table) RecordVacuum(ctx context.Context, res *VacuumResult, maxAttempts int) (int64, error) {
	s, err := t.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	metrics := map[string]any{"numDeletedFiles": fmt.Sprint(res.DeletedCount), "numVacuumedBytes": fmt.Sprint(res.Bytes)}
	params := map[string]any{"status": "COMPLETED", "retentionMillis": res.RetainMillis}
	v := s.Version + 1
	for attempt := 0; attempt < max(maxAttempts, 1); attempt++ {
		err := Commit(ctx, t, v, []Action{NewCommitInfo(OpVacuumEnd, params, v-1, metrics)})
		if !errors.As(err, new(*VersionExistsError)) {
			if err != nil {
				return 0, fmt.Errorf("record vacuum: %w", err)
			}
			_, _ = t.MaybeCheckpoint(ctx, v) // the commit stands; a later commit checkpoints again
			return v, nil
		}
		v++
	}
	return 0, fmt.Errorf("record vacuum: gave up after %d attempts: %w", maxAttempts, &VersionExistsError{Version: v - 1})
}

// LastVacuum returns when the latest vacuum recorded in the log's commits
// (a VACUUM END commitInfo, RecordVacuum's or another writer's) was
// committed; false when the log holds none.
func (t *Table) LastVacuum(ctx context.Context) (time.Time, bool, error) {
	history, err := t.History(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	for i := len(history) - 1; i >= 0; i-- {
		if ci := history[i].Info; ci != nil && ci.Operation == OpVacuumEnd {
			return history[i].Timestamp, true, nil
		}
	}
	return time.Time{}, false, nil
}
