package deltatable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/table"
)

// deltaLog is what a walk of a Delta table's commits tells about arrival.
type deltaLog struct {
	// appended are the files commits added with dataChange, in commit
	// order (version, then position in the commit).
	appended []*delta.Add
	// addedAt is where the latest add of each path is: version and
	// position in that commit.
	addedAt map[string]logPos
	// ok is false when appended cannot stand for the rows: a commit is
	// missing from the log, or one removed rows (a remove with
	// dataChange: a delete, an update, an overwrite) or added a file with
	// a deletion vector.
	ok bool
}

// logPos is an add action's place in the log.
type logPos struct{ version, pos int64 }

// commitRe matches a commit file's name.
var commitRe = regexp.MustCompile(`^(\d{20})\.json$`)

// PartitionColumns are the table's partition columns, in order.
func (f *format) PartitionColumns() []string { return f.snap.Metadata.PartitionColumns }

// OpenFile opens the file pf of the table for reading.
func (f *format) OpenFile(ctx context.Context, pf table.PlanFile) (table.File, error) {
	return f.opener(add(pf))(ctx)
}

// Arrival returns files whose live rows, read in order (Read), are the
// table's rows in arrival order, and whether that order comes from the
// log's history; rows is how many live rows the table holds. Arrival is
// the order commits added the rows with dataChange: by version, then by
// position in the commit, then by row. Rewrites (OPTIMIZE, dataChange
// false) move rows without changing their arrival, so the files the
// appends added stand for the current rows as long as every commit is in
// the log, none removed rows, no live file has a deletion vector, every
// added file is still on storage (VACUUM deletes them) and the row counts
// agree (history true). Otherwise the live files are read in the order
// their adds were committed (history false); files known only from a
// checkpoint come first.
func (f *format) Arrival(ctx context.Context, rows int64) ([]table.PlanFile, bool, error) {
	lg, err := walkLog(ctx, f.t, f.snap.Version)
	if err != nil {
		return nil, false, err
	}
	for _, add := range f.snap.Files {
		lg.ok = lg.ok && add.DeletionVector == nil
	}
	if lg.ok && historyStands(ctx, f.t, lg.appended, rows) {
		return f.readable(lg.appended), true, nil
	}
	adds := slices.Clone(f.snap.Files)
	key := func(a *delta.Add) logPos {
		p, _ := a.DecodedPath()
		if at, ok := lg.addedAt[p]; ok {
			return at
		}
		return logPos{-1, 0}
	}
	slices.SortStableFunc(adds, func(a, b *delta.Add) int {
		ka, kb := key(a), key(b)
		return cmp.Or(cmp.Compare(ka.version, kb.version), cmp.Compare(ka.pos, kb.pos))
	})
	return f.readable(adds), false, nil
}

// readable describes adds for Read, which needs only the add actions:
// each is named by its path as the log records it.
func (f *format) readable(adds []*delta.Add) []table.PlanFile {
	out := make([]table.PlanFile, len(adds))
	for i, a := range adds {
		out[i] = table.PlanFile{Path: a.Path, Size: a.Size, File: a}
	}
	return out
}

// historyStands reports whether the appended files are all on storage and
// hold rows rows by their statistics.
func historyStands(ctx context.Context, tbl *delta.Table, appended []*delta.Add, rows int64) bool {
	var total int64
	for _, a := range appended {
		st, err := a.ParsedStats()
		if err != nil || st == nil {
			return false
		}
		total += st.NumRecords
	}
	if total != rows {
		return false
	}
	for _, a := range appended {
		p, err := a.DecodedPath()
		if err != nil {
			return false
		}
		f, err := tbl.Store.Open(ctx, p)
		if err != nil {
			return false // vacuumed since
		}
		f.Close()
	}
	return true
}

// walkLog reads the commits of tbl up to version, in order.
func walkLog(ctx context.Context, tbl *delta.Table, version int64) (*deltaLog, error) {
	listed, err := tbl.Store.List(ctx, delta.LogDir, false)
	if err != nil {
		return nil, fmt.Errorf("list log: %w", err)
	}
	var versions []int64
	for _, f := range listed {
		if m := commitRe.FindStringSubmatch(path.Base(f.Path)); m != nil {
			if v, _ := strconv.ParseInt(m[1], 10, 64); v <= version {
				versions = append(versions, v)
			}
		}
	}
	slices.Sort(versions)
	lg := &deltaLog{addedAt: map[string]logPos{}, ok: int64(len(versions)) == version+1}
	for _, v := range versions {
		if err := lg.read(ctx, tbl, v); err != nil {
			return nil, err
		}
	}
	return lg, nil
}

// read adds commit v to the walk.
func (lg *deltaLog) read(ctx context.Context, tbl *delta.Table, v int64) error {
	f, err := tbl.Store.Open(ctx, delta.CommitPath(v))
	if errors.Is(err, fs.ErrNotExist) {
		lg.ok = false // cleaned up since it was listed
		return nil
	}
	if err != nil {
		return fmt.Errorf("read commit %d: %w", v, err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("read commit %d: %w", v, err)
	}
	acts, err := delta.ParseActions(b)
	if err != nil {
		return &delta.LogError{Version: v, Reason: err.Error()}
	}
	var pos int64
	for _, a := range acts {
		switch {
		case a.Add != nil:
			p, err := a.Add.DecodedPath()
			if err != nil {
				return err
			}
			lg.addedAt[p] = logPos{v, pos}
			pos++
			if a.Add.DataChange {
				lg.ok = lg.ok && a.Add.DeletionVector == nil
				lg.appended = append(lg.appended, a.Add)
			}
		case a.Remove != nil && a.Remove.DataChange:
			lg.ok = false
		}
	}
	return nil
}
