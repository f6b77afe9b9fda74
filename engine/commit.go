package engine

import (
	"context"

	"github.com/geocompact/geocompact/table"
)

// commit commits the groups' outputs through the table's format, after
// reporting the phase.
func (ex *execution) commit(ctx context.Context, outs []*groupOut) (id int64, removedDeletes int, err error) {
	ex.progress(-1, "committing", 0, 0)
	c := table.Commit{Summary: ex.r.summary(len(outs)), Retries: ex.r.cfg.CommitRetries, BeforeAttempt: hooksOf(ctx).BeforeCommit}
	rs := replacements(outs)
	if h := hooksOf(ctx).Replacements; h != nil {
		h(rs)
	}
	id, removedDeletes, err = ex.tf.Commit(ctx, rs, c)
	if err == nil {
		ex.r.log.Info("rewrite committed", "snapshot_id", id, "groups", len(outs))
	}
	return id, removedDeletes, err
}
