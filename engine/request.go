package engine

import (
	"log/slog"

	"github.com/geocompact/geocompact/cluster"
)

// Request is one rewrite: how to lay the table out, which files to
// consider, and the Iceberg options that tune the plan.
type Request struct {
	// Strategy is binpack (default) or sort. A Curve or SortOrder implies sort.
	Strategy Strategy `json:"strategy,omitempty"`
	// Curve is the shorthand for a curve over the table's spatial columns:
	// a name of cluster.CurveNames (auto chooses per group).
	Curve string `json:"curve,omitempty"`
	// SortOrder is an explicit sort order: "col [ASC|DESC] [NULLS FIRST|LAST], ...",
	// "zorder(a, b)" or "hilbert(a, b)". Empty with strategy sort means the
	// table's own sort order.
	SortOrder string `json:"sort_order,omitempty"`
	// AllowLayoutChange lets a request whose strategy, curve or sort order
	// differs from the layout the table records (table.Table.Layout) rewrite
	// it anyway; without it such a rewrite fails with a *layouts.ChangeError.
	// Without strategy, curve and sort order a rewrite follows the
	// table's layout.
	AllowLayoutChange bool `json:"allow_layout_change,omitempty"`
	// AutoWindows are the query windows --curve auto chooses for and kd
	// costs its splits for (each set weighs the same); nil means
	// cluster's default data-placed windows of 0.1% and 1% of the extent.
	AutoWindows []cluster.WindowSet `json:"windows,omitempty"`
	// Where scopes the rewrite to files that may hold matching rows, in
	// the small predicate language of where.Parse.
	Where string `json:"where,omitempty"`
	// Options are Iceberg rewrite_data_files options by name.
	Options map[string]string `json:"options,omitempty"`
	// DryRun plans and reports without writing anything.
	DryRun bool `json:"dry_run,omitempty"`
	// PurgeDeletes rewrites exactly the files that carry deletes (a Delta
	// deletion vector, Iceberg delete files), each whatever its size, and
	// no other file: Delta's REORG TABLE … APPLY (PURGE). It excludes the
	// rewrite-all option.
	PurgeDeletes bool `json:"purge_deletes,omitempty"`
	// CommitRetries is the budget for commits that lose a race with another
	// writer (0 means 4, negative none).
	CommitRetries int `json:"commit_retries,omitempty"`
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger `json:"-"`
	// Progress, when set, is told each phase of each group as it starts
	// (from several goroutines when groups run concurrently).
	Progress func(Progress) `json:"-"`

	// checked is what Check parsed (nil before it ran).
	checked *checked
}

// Progress says where a rewrite is.
type Progress struct {
	// Group is the group (1-based) the phase belongs to, of Groups; 0 for
	// the commit of several groups.
	Group, Groups int
	// GroupsDone counts the groups written and verified so far.
	GroupsDone int
	// Phase is reading, sampling, scattering, sorting, writing, verifying
	// or committing.
	Phase string
	// Step and Steps count the units of a spilled sort (sorting), else 0.
	Step, Steps int
	// BytesDone counts the input bytes of the groups done, of Bytes (0
	// when the caller did not plan the rewrite itself).
	BytesDone, Bytes int64
}

func (c Request) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}
