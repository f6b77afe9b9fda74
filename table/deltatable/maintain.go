package deltatable

import (
	"context"
	"time"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/table"
)

// Census counts the versions the log of the table's latest version keeps
// and its live files: their add actions' sizes and numRecords statistics
// (a file without statistics counts no records), partitions by
// delta.Snapshot.PartitionPath, boxes from bbox statistics
// (delta.Snapshot.FileBound) and deletion vectors. It reads the log only,
// no data files.
func (f *format) Census(ctx context.Context) (*table.Census, error) {
	s, err := f.t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	history, err := f.t.History(ctx)
	if err != nil {
		return nil, err
	}
	c := &table.Census{Versions: len(history), Oldest: history[0].Timestamp, Latest: history[len(history)-1].Timestamp}
	// Bbox columns suffice for the layout figures; a table whose geometry
	// column is not found still has them.
	cols, _ := s.SpatialColumns("")
	c.BBoxPaths, c.Bounded = s.BBoxPaths(cols)
	c.Files = make([]table.CensusFile, 0, len(s.Files))
	for _, a := range s.Files {
		cf := table.CensusFile{Path: a.Path, Partition: s.PartitionPath(a), Size: a.Size, Open: f.opener(a)}
		if st, err := a.ParsedStats(); err == nil && st != nil {
			cf.Records = st.NumRecords
		}
		if dv := a.DeletionVector; dv != nil {
			cf.DeletionVector, cf.DeletedRecords, cf.DeleteBytes = true, dv.Cardinality, int64(dv.SizeInBytes)
		}
		if c.Bounded {
			cf.Bound, cf.HasBound = s.FileBound(a, cols)
		}
		c.Files = append(c.Files, cf)
	}
	return c, nil
}

// opener opens the data file a adds, for its footer.
func (f *format) opener(a *delta.Add) func(context.Context) (table.File, error) {
	return func(ctx context.Context) (table.File, error) {
		p, err := a.DecodedPath()
		if err != nil {
			return nil, err
		}
		return f.t.Store.Open(ctx, p)
	}
}

// Reopen opens the table again at its latest version for use, as Open
// does.
func (f *format) Reopen(ctx context.Context, use table.Use) (table.Table, error) {
	return Open(ctx, f.t, f.name, use)
}

// Vacuum deletes the files no version within cfg's retention references
// (delta.Table.Vacuum).
func (f *format) Vacuum(ctx context.Context, cfg delta.VacuumConfig) (*delta.VacuumResult, error) {
	return f.t.Vacuum(ctx, f.name, cfg)
}

// RecordVacuum records res in the log, as Delta's VACUUM START and END
// commits do, in up to attempts tries.
func (f *format) RecordVacuum(ctx context.Context, res *delta.VacuumResult, attempts int) error {
	_, err := f.t.RecordVacuum(ctx, res, attempts)
	return err
}

// LastVacuum returns when the log last recorded a finished vacuum, and
// whether it records one.
func (f *format) LastVacuum(ctx context.Context) (time.Time, bool, error) {
	return f.t.LastVacuum(ctx)
}
