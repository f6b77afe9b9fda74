// Package job splits a rewrite into pieces that run in other processes,
// the workers of a distributed engine (cmd/geocompact-beam runs them on
// Apache Beam): Prepare plans it on the driver, every worker decodes it
// and Opens it and scatters files or writes buckets, and the driver
// Commits what the workers wrote, or Aborts. A Rewrite is plain JSON, so
// it travels to workers as it is. The steps themselves are the engine's
// (engine.Pieces); this package adds the job's identity, the cutting of
// output files across bucket edges, and the wire form of data files.
package job

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// Rewrite is one rewrite as a distributed job. A group's rows are cut
// into buckets (see engine.GroupSpec); files are cut at global row
// positions, exactly where the local engine cuts them.
type Rewrite struct {
	// ID tags the job's files (the first half of each file's write UUID)
	// and the snapshot summary of its commit.
	ID         string `json:"id"`
	Table      string `json:"table"`
	SnapshotID int64  `json:"snapshot_id"`
	// Request is the rewrite's request; its logger and progress do not
	// travel.
	Request engine.Request     `json:"request"`
	Groups  []engine.GroupSpec `json:"groups"`
	// Shuffled are the groups that run as shuffled stages (SetShuffle).
	Shuffled []int `json:"shuffled,omitempty"`
	// ScatterRun is how many input files of a shuffled group one scatter
	// unit reads (SetShuffle).
	ScatterRun int `json:"scatter_run,omitempty"`
	// Result is the plan and the table's figures before the rewrite;
	// Commit fills in the rest.
	Result *engine.Result `json:"result"`

	pieces *engine.Pieces
	// ice is the table the pieces read.
	ice *icebergtable.Table
}

// Prepare plans a rewrite of the table called name at its current
// snapshot and samples the bucket boundaries of its sorted groups over
// the memory budget, to spread every one of them over the workers (see
// engine.Prepared.Pieces). The job has no groups when there is nothing to
// rewrite (the result says why) and on a dry run.
func Prepare(ctx context.Context, cat catalog.Catalog, name string, req engine.Request) (*Rewrite, error) {
	return PrepareShuffle(ctx, cat, name, req, Shuffle{Mode: ShuffleAlways})
}

// Shuffle chooses the sorted groups over a worker's memory budget that a
// job spreads over its workers in stages (see SetShuffle); the others are
// rewritten whole by one worker, spilling.
type Shuffle struct {
	// Mode is ShuffleAuto, ShuffleAlways or ShuffleNever.
	Mode string
	// Workers is how many units the engine runs at once, for ShuffleAuto.
	Workers int
}

// PrepareShuffle is Prepare, sampling only the groups sh spreads, and
// marking them (SetShuffle).
func PrepareShuffle(ctx context.Context, cat catalog.Catalog, name string, req engine.Request, sh Shuffle) (*Rewrite, error) {
	if _, err := spreads(sh.Mode, 0, 0, 0); err != nil {
		return nil, err
	}
	start := time.Now()
	j := &Rewrite{ID: newID(), Table: name, Request: req}
	ice, err := icebergtable.Load(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	po := j.pieceOptions()
	po.Spread = func(records, total int64) bool {
		ok, _ := spreads(sh.Mode, sh.Workers, records, total)
		return ok
	}
	prep, err := engine.Prepare(ctx, ice.Describe(), req)
	if err != nil {
		return nil, err
	}
	p, err := prep.Pieces(ctx, po)
	if err != nil {
		return nil, err
	}
	res := prep.Result()
	j.Result = res
	defer func() { res.Duration = time.Since(start) }()
	if p == nil {
		return j, nil
	}
	j.pieces, j.ice, j.SnapshotID, j.Groups = p, ice, p.Version(), p.Groups()
	return j, j.SetShuffle(sh.Mode, sh.Workers)
}

func (j *Rewrite) pieceOptions() engine.PieceOptions {
	return engine.PieceOptions{JobID: j.ID, WriteID: j.writeID}
}

// newID returns 16 random hex digits.
func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeID returns a fresh write UUID whose first 8 bytes are the job id,
// so every file the job writes carries Tag in its name.
func (j *Rewrite) writeID() uuid.UUID {
	var u uuid.UUID
	id, _ := hex.DecodeString(j.ID)
	copy(u[:8], id)
	rand.Read(u[8:])
	return u
}

// Tag is the part of the name of every data file the job writes: the
// first 19 characters of its write UUID (the job id, dashed as in a UUID,
// and the dash after it).
func (j *Rewrite) Tag() string {
	var u uuid.UUID
	id, _ := hex.DecodeString(j.ID)
	copy(u[:8], id)
	return u.String()[:19]
}

// Open readies a job decoded in a worker: it loads the table and the
// planned snapshot's files (with their delete files).
func (j *Rewrite) Open(ctx context.Context, cat catalog.Catalog) error {
	ice, err := icebergtable.LoadAt(ctx, cat, j.Table, j.SnapshotID)
	if err != nil {
		return fmt.Errorf("open job %s: %w", j.ID, err)
	}
	t := ice.Describe()
	if missing := engine.MissingFiles(t, j.Groups); len(missing) > 0 {
		return fmt.Errorf("open job %s: %w: data file %s is not in snapshot %d of %s", j.ID, catalogs.ErrConflict, missing[0], j.SnapshotID, j.Table)
	}
	p, err := engine.OpenPieces(t, j.Request, j.Groups, j.pieceOptions())
	if err != nil {
		return fmt.Errorf("open job %s: %w", j.ID, err)
	}
	j.pieces, j.ice = p, ice
	return nil
}

// open returns the job's pieces, or an error when it is not open.
func (j *Rewrite) open() (*engine.Pieces, error) {
	if j.pieces == nil {
		return nil, fmt.Errorf("job %s is not open", j.ID)
	}
	return j.pieces, nil
}

// Storage returns the table's location and file system, for files a
// distributed engine keeps beside the table (its result, for one).
func (j *Rewrite) Storage(ctx context.Context) (string, icebergio.IO, error) {
	if _, err := j.open(); err != nil {
		return "", nil, err
	}
	fs, err := j.ice.Table.FS(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("file system of %s: %w", j.Table, err)
	}
	return j.ice.Table.Location(), fs, nil
}
