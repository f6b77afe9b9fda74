package engine

import (
	"context"

	"github.com/geocompact/geocompact/table/catalogs"
)

// ErrConflict marks a commit that lost to a concurrent writer and could not
// be replayed within the retry budget, or found the files it replaces
// changed. The table is unchanged; the operation is safe to run again. The
// CLI exits 4 on it. It is catalogs.ErrConflict, which
// catalogs.WithCommitRetry returns when its budget is spent.
var ErrConflict = catalogs.ErrConflict

// commit commits the groups' outputs through the table's format, after
// reporting the phase.
func (ex *execution) commit(ctx context.Context, outs []*groupOut) (id int64, removedDeletes int, err error) {
	ex.progress(-1, "committing", 0, 0)
	id, removedDeletes, err = ex.tf.Commit(ctx, replacements(outs), ex.r.summary(len(outs)))
	if err == nil {
		ex.r.log.Info("rewrite committed", "snapshot_id", id, "groups", len(outs))
	}
	return id, removedDeletes, err
}
