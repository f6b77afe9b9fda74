package deltatable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/layouts"
	"github.com/geocompact/geocompact/spatial"
)

// commitAttempts is how many versions a commit tries before giving up
// when concurrent appends keep winning the race.
const commitAttempts = 20

func (f *format) NewSink(ctx context.Context, group []engine.PlanFile, _ *arrow.Schema, cfg engine.SinkConfig) engine.Sink {
	var values map[string]*string
	if len(group) > 0 {
		values = add(group[0]).PartitionValues
	}
	dir := delta.PartitionDir(f.snap.PhysicalPartitionColumns(), values)
	if dir != "" {
		dir += "/"
	}
	return &sink{ctx: ctx, f: f, values: values, dir: dir, cfg: cfg}
}

// sink writes a group's rows into files of cfg.FileRows rows, one file at
// a time; on a table with a geometry column each file carries GeoParquet
// metadata of its rows, as ingest --delta writes it.
type sink struct {
	ctx    context.Context
	f      *format
	values map[string]*string
	dir    string
	cfg    engine.SinkConfig

	cur     *delta.FileWriter
	curName string
	geo     *spatial.GeoStats // of the current file's rows, when spatial
	left    int64             // rows the current file still takes
	written []engine.OutFile
	rows    []int64
	err     error
}

func (s *sink) Write(rec arrow.RecordBatch) error {
	defer rec.Release()
	if s.err != nil {
		return s.err
	}
	for off := int64(0); off < rec.NumRows(); {
		if s.cur == nil {
			if s.err = s.open(); s.err != nil {
				return s.err
			}
		}
		n := min(s.left, rec.NumRows()-off)
		part := rec.NewSlice(off, off+n)
		s.err = s.cur.Write(part)
		if s.err == nil && s.geo != nil {
			s.geo.AddArray(part.Column(part.Schema().FieldIndices(s.f.cols.Geometry)[0]))
		}
		part.Release()
		if s.err != nil {
			return s.err
		}
		off += n
		s.left -= n
		if s.left == 0 {
			if s.err = s.finish(); s.err != nil {
				return s.err
			}
		}
	}
	return nil
}

// open starts the next file.
func (s *sink) open() error {
	id := uuid.New()
	if s.cfg.WriteID != nil {
		id = s.cfg.WriteID()
	}
	i := len(s.written)
	s.curName = fmt.Sprintf("%spart-%05d-%s-c000.zstd.parquet", s.dir, i, id)
	w, err := s.f.t.NewFileWriter(s.ctx, s.f.snap, s.curName, s.values, nil)
	if err != nil {
		return err
	}
	s.cur, s.left = w, max(s.cfg.FileRows(i), 1)
	if s.f.colsErr == nil && len(s.f.sc.FieldIndices(s.f.cols.Geometry)) == 1 {
		s.geo = spatial.NewGeoStats()
	}
	s.rows = append(s.rows, 0)
	return nil
}

// finish closes the current file and records it.
func (s *sink) finish() error {
	var err error
	if s.geo != nil {
		var doc []byte
		if doc, err = s.geo.Metadata(s.f.cols).Marshal(); err == nil {
			err = s.cur.SetFileMetadata("geo", string(doc))
		}
	}
	a, cerr := s.cur.Close()
	if err == nil {
		err = cerr
	}
	s.cur = nil
	if err != nil {
		s.written = append(s.written, engine.OutFile{Path: s.curName})
		return err
	}
	var records int64
	if st, err := a.ParsedStats(); err == nil && st != nil {
		records = st.NumRecords
	}
	s.written = append(s.written, engine.OutFile{Path: s.curName, Size: a.Size, Records: records, File: a})
	return nil
}

func (s *sink) Close() ([]engine.OutFile, error) {
	if s.cur != nil {
		if err := s.finish(); err != nil && s.err == nil {
			s.err = err
		}
	}
	return s.written, s.err
}

// Commit commits the groups as one OPTIMIZE: a commitInfo, then a remove
// (dataChange=false) of every replaced file and an add (dataChange=false)
// of every new one, put as the next version only if it is absent. When a
// concurrent commit wins the version, its actions are checked: one that
// removed a replaced file or changed its deletion vector is a conflict
// (engine.ErrConflict); anything else (an append) is not, and the commit
// is retried on the next version. A checkpoint follows on
// delta.checkpointInterval; failing to write one does not undo the commit.
func (f *format) Commit(ctx context.Context, groups []engine.Replacement, summary map[string]string) (int64, int, error) {
	var replaced, added []*delta.Add
	var dvs int
	var removedBytes, addedBytes int64
	for _, g := range groups {
		for _, pf := range g.Files {
			a := add(pf)
			replaced = append(replaced, a)
			removedBytes += a.Size
			if a.DeletionVector != nil {
				dvs++
			}
		}
		for _, o := range g.New {
			added = append(added, o.File.(*delta.Add))
			addedBytes += o.Size
		}
	}
	metrics := map[string]any{
		"numRemovedFiles": strconv.Itoa(len(replaced)), "numAddedFiles": strconv.Itoa(len(added)),
		"numRemovedBytes": strconv.FormatInt(removedBytes, 10), "numAddedBytes": strconv.FormatInt(addedBytes, 10),
		"numDeletionVectorsRemoved": strconv.Itoa(dvs),
	}
	actions := append([]delta.Action{delta.NewCommitInfo("OPTIMIZE", optimizeParams(summary), f.snap.Version, metrics)},
		delta.RewriteActions(replaced, added, time.Now())...)
	v, err := delta.CommitRewrite(ctx, f.t, f.snap.Version, actions, commitAttempts)
	var ce *delta.ConflictError
	switch {
	case errors.As(err, &ce):
		return 0, 0, fmt.Errorf("%w: %v; nothing was committed, run the rewrite again", engine.ErrConflict, err)
	case err != nil:
		var ve *delta.VersionExistsError
		if errors.As(err, &ve) {
			return 0, 0, fmt.Errorf("%w: %v", engine.ErrConflict, err)
		}
		return 0, 0, err
	}
	_, _ = f.t.MaybeCheckpoint(ctx, v) // the commit stands; a later commit checkpoints again
	return v, dvs, nil
}

// optimizeParams are the commitInfo's operationParameters: Delta's own
// (predicate, zOrderBy for a Z-order layout) and the rewrite's summary.
func optimizeParams(summary map[string]string) map[string]any {
	params := map[string]any{"predicate": "[]"}
	zorder := []string{}
	if o := summary[engine.SummarySortOrder]; o != "" {
		if cols, ok := zorderColumns(o); ok {
			zorder = cols
		}
	}
	b, _ := json.Marshal(zorder)
	params["zOrderBy"] = string(b)
	for k, v := range summary {
		params[k] = v
	}
	return params
}

// zorderColumns returns the columns of a Z-order layout's text (its
// bbox columns when it names none), and whether it is one.
func zorderColumns(text string) ([]string, bool) {
	o, auto, err := layouts.Parse(text)
	if err != nil || auto || o.Curve != cluster.CurveZOrder {
		return nil, false
	}
	if len(o.Columns) == 0 {
		return spatial.BBoxColumns[:], true
	}
	return o.Columns, true
}
