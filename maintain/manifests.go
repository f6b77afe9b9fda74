package maintain

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
)

// ManifestsConfig is one manifest rewrite.
type ManifestsConfig struct {
	// TargetSizeBytes is the size merged manifests aim at (0: the table's
	// commit.manifest.target-size-bytes, 8 MiB by default).
	TargetSizeBytes int64
	// CommitRetries is the budget for commits that lose a race with another
	// writer (0 means 4, negative none).
	CommitRetries int
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
}

// ManifestsResult reports a manifest rewrite: the data manifests of the
// current snapshot before and after, as Iceberg's rewrite_manifests
// procedure counts them.
type ManifestsResult struct {
	Table string `json:"table"`
	// ManifestsBefore and ManifestsAfter count all manifests (data and
	// delete) in the current snapshot's manifest list.
	ManifestsBefore int `json:"manifests_before"`
	ManifestsAfter  int `json:"manifests_after"`
	// RewrittenManifestsCount and AddedManifestsCount keep Iceberg's names.
	RewrittenManifestsCount int `json:"rewritten_manifests_count"`
	AddedManifestsCount     int `json:"added_manifests_count"`
	// SnapshotID is the replace snapshot committed; 0 for a no-op.
	SnapshotID int64 `json:"snapshot_id,omitempty"`
	// NoopReason says why nothing was rewritten; empty when something was.
	NoopReason string `json:"noop_reason,omitempty"`
}

// RewriteManifests merges the small data manifests of the table called
// name into target-sized ones (iceberg-go's RewriteManifests), committed as
// a metadata-only replace snapshot. Data files are not touched. A commit
// the catalog refuses deletes the manifests it wrote; one whose outcome
// is unknown keeps them (catalogs.CommitRetried).
func RewriteManifests(ctx context.Context, cat catalog.Catalog, name string, cfg ManifestsConfig) (*ManifestsResult, error) {
	cat = catalogs.Wrap(cat)
	log := orDiscard(cfg.Logger)
	retries := catalogs.Spec{CommitRetries: cfg.CommitRetries}.Retries()
	var res *ManifestsResult
	err := catalogs.CommitRetried(ctx, cat, name, retries, func(ctx context.Context) (*table.Table, error) {
		tbl, err := catalogs.LoadTable(ctx, cat, name)
		if err != nil {
			return nil, err
		}
		res = &ManifestsResult{Table: name}
		if res.ManifestsBefore, err = manifestCount(ctx, tbl); err != nil {
			return nil, fmt.Errorf("rewrite manifests %s: %w", name, err)
		}
		tx := tbl.NewTransaction()
		rr, err := tx.RewriteManifests(ctx, table.WithManifestTargetSize(cfg.TargetSizeBytes))
		if err != nil {
			return nil, fmt.Errorf("rewrite manifests %s: %w", name, err)
		}
		if rr.IsNoOp() {
			res.ManifestsAfter = res.ManifestsBefore
			res.NoopReason = manifestsNoop(rr.NoOpReason)
			return tbl, nil
		}
		after, err := tx.Commit(ctx)
		if err != nil {
			return nil, fmt.Errorf("rewrite manifests %s: %w", name, err)
		}
		res.RewrittenManifestsCount, res.AddedManifestsCount = len(rr.RewrittenManifests), len(rr.AddedManifests)
		if s := after.CurrentSnapshot(); s != nil {
			res.SnapshotID = s.SnapshotID
		}
		res.ManifestsAfter, err = manifestCount(ctx, after)
		return after, err
	})
	if err != nil {
		return nil, err
	}
	log.Info("rewrite manifests done", "table", name, "manifests_before", res.ManifestsBefore, "manifests_after", res.ManifestsAfter)
	return res, nil
}

func manifestsNoop(r table.NoOpReason) string {
	if r == table.NoOpNoSnapshot {
		return "the table has no snapshot"
	}
	return "the manifests are already merged to the target size"
}

// manifestCount counts the manifests of tbl's current snapshot.
func manifestCount(ctx context.Context, tbl *table.Table) (int, error) {
	s := tbl.CurrentSnapshot()
	if s == nil {
		return 0, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return 0, err
	}
	mans, err := s.Manifests(fs)
	if err != nil {
		return 0, err
	}
	return len(mans), nil
}
