package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime"
	"time"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/cluster"
)

// Job is a rewrite split into pieces that run in other processes (the
// workers of a distributed engine): Prepare plans it on the driver, every
// worker Opens it and scatters files or writes buckets, and the driver
// Commits what the workers wrote, or Aborts. A Job is plain JSON, so it
// travels to workers as it is.
//
// A group's rows are cut into buckets: for a sorted group, key ranges
// between Bounds (so sorting each bucket and concatenating the buckets is
// the group's order); for binpack, bucket i is the group's i-th input
// file (so the buckets in order are the rows in read order). Files are
// cut at global row positions, exactly where the local engine cuts them.
type Job struct {
	// ID tags the job's files (the first half of each file's write UUID)
	// and the snapshot summary of its commit.
	ID         string     `json:"id"`
	Table      string     `json:"table"`
	SnapshotID int64      `json:"snapshot_id"`
	Request    JobRequest `json:"request"`
	Groups     []JobGroup `json:"groups"`
	// Result is the plan and the table's figures before the rewrite;
	// Commit fills in the rest.
	Result *Result `json:"result"`

	ex    *execution
	tasks map[string]*table.FileScanTask
}

// JobRequest is the part of Request a job carries to its workers.
type JobRequest struct {
	Strategy      Strategy          `json:"strategy,omitempty"`
	Curve         string            `json:"curve,omitempty"`
	SortOrder     string            `json:"sort_order,omitempty"`
	Where         string            `json:"where,omitempty"`
	Options       map[string]string `json:"options,omitempty"`
	CommitRetries int               `json:"commit_retries,omitempty"`
}

// JobGroup is one planned group of a job.
type JobGroup struct {
	Partition string   `json:"partition"`
	Files     []string `json:"files"`
	// OutputFiles and Records are the plan's: the files to write and the
	// rows the metadata counts (before deletes).
	OutputFiles int   `json:"output_files"`
	Records     int64 `json:"records"`
	// Buckets is how many buckets the group's rows are scattered into.
	Buckets int `json:"buckets"`
	// Scale and Bounds key a sorted group's rows and cut the keys into
	// bucket ranges.
	Scale  *cluster.Scale `json:"scale,omitempty"`
	Bounds []uint64       `json:"bounds,omitempty"`
}

func (r JobRequest) config() Request {
	return Request{Strategy: r.Strategy, Curve: r.Curve, SortOrder: r.SortOrder, Where: r.Where, Options: r.Options, CommitRetries: r.CommitRetries}
}

// Prepare plans a rewrite of the table called name at its current
// snapshot and, for sorted groups, learns each group's key scale and the
// boundaries of its buckets (one pass over the key columns). A sorted
// group gets as many buckets as it takes for each to fit
// max-group-memory-bytes, the memory one worker sorts a bucket in. The
// job has no groups when there is nothing to rewrite (the result says
// why) and on a dry run.
func Prepare(ctx context.Context, cat catalog.Catalog, name string, cfg Request) (*Job, error) {
	start := time.Now()
	r, tbl, filter, err := newRewriter(ctx, cat, name, cfg)
	if err != nil {
		return nil, err
	}
	res, all, err := r.plan(ctx, tbl, filter)
	if err != nil {
		return nil, err
	}
	job := &Job{ID: newJobID(), Table: name, Result: res,
		Request: JobRequest{Strategy: cfg.Strategy, Curve: cfg.Curve, SortOrder: cfg.SortOrder, Where: cfg.Where, Options: cfg.Options, CommitRetries: cfg.CommitRetries}}
	defer func() { res.Duration = time.Since(start) }()
	if len(res.Plan.Groups) == 0 || cfg.DryRun {
		return job, nil
	}
	r.jobID = job.ID
	if r.opts.CutWindowFraction > 0 && r.lay.strategy == Sort {
		r.log.Warn("cut-window-fraction is not applied by a distributed rewrite: its files are cut at equal row counts")
	}
	if r.opts.PartialProgress {
		r.log.Warn("partial-progress is not applied by a distributed rewrite: it commits every group at once, or nothing")
	}
	job.SnapshotID = tbl.CurrentSnapshot().SnapshotID
	job.ex = &execution{r: r, tbl: tbl, snapshotID: job.SnapshotID, all: all, groups: len(res.Plan.Groups), lanes: 1}
	job.index()
	for i := range res.Plan.Groups {
		jg, err := job.prepareGroup(ctx, &res.Plan.Groups[i])
		if err != nil {
			return nil, fmt.Errorf("prepare group %d (%s): %w", i+1, PartitionLabel(res.Plan.Groups[i].Partition), err)
		}
		job.Groups = append(job.Groups, jg)
	}
	r.log.Info("rewrite job prepared", "job_id", job.ID, "groups", len(job.Groups))
	return job, nil
}

func (j *Job) prepareGroup(ctx context.Context, g *Group) (JobGroup, error) {
	jg := JobGroup{Partition: g.Partition, OutputFiles: g.OutputFiles, Records: g.Records, Buckets: len(g.Files)}
	for _, f := range g.Files {
		jg.Files = append(jg.Files, f.Path)
	}
	if j.ex.r.lay.strategy != Sort {
		return jg, nil
	}
	sp := sortPlanFor(g, j.ex.r.opts.MaxGroupMemoryBytes)
	jg.Buckets = max(sp.Buckets, 1)
	o := j.groupOut(len(j.Groups), g)
	gio, _, err := j.ex.readGroup(ctx, o, nil)
	if err != nil {
		return jg, err
	}
	sorter, err := j.ex.sorter(gio.readSc, g.OutputFiles)
	if err != nil {
		return jg, err
	}
	_, bounds, scale, err := j.ex.sampleKeys(ctx, gio, sorter, jg.Buckets)
	if err != nil {
		return jg, fmt.Errorf("sample: %w", err)
	}
	jg.Scale, jg.Bounds, jg.Buckets = &scale, bounds, len(bounds)+1
	return jg, nil
}

// newJobID returns 16 random hex digits.
func newJobID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeID returns a fresh write UUID whose first 8 bytes are the job id,
// so every file the job writes carries JobTag in its name.
func (j *Job) writeID() uuid.UUID {
	var u uuid.UUID
	id, _ := hex.DecodeString(j.ID)
	copy(u[:8], id)
	rand.Read(u[8:])
	return u
}

// Tag is the part of the name of every data file the job writes: the
// first 18 characters of its write UUID.
func (j *Job) Tag() string {
	var u uuid.UUID
	id, _ := hex.DecodeString(j.ID)
	copy(u[:8], id)
	return u.String()[:19]
}

// Open readies a job decoded in a worker: it loads the table and the
// planned snapshot's files (with their delete files).
func (j *Job) Open(ctx context.Context, cat catalog.Catalog) error {
	r, tbl, _, err := newRewriter(ctx, cat, j.Table, j.Request.config())
	if err != nil {
		return err
	}
	r.jobID = j.ID
	all, err := tbl.Scan(table.WithSnapshotID(j.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan files of %s at snapshot %d: %w", j.Table, j.SnapshotID, err)
	}
	j.ex = &execution{r: r, tbl: tbl, snapshotID: j.SnapshotID, all: all, groups: len(j.Groups), lanes: max(1, runtime.NumCPU()/2)}
	j.index()
	for _, g := range j.Groups {
		for _, p := range g.Files {
			if j.tasks[p] == nil {
				return fmt.Errorf("%w: data file %s of the job is not in snapshot %d of %s", ErrConflict, p, j.SnapshotID, j.Table)
			}
		}
	}
	return nil
}

func (j *Job) index() {
	j.tasks = make(map[string]*table.FileScanTask, len(j.ex.all))
	for i := range j.ex.all {
		j.tasks[j.ex.all[i].File.FilePath()] = &j.ex.all[i]
	}
}

// groupOut returns a fresh groupOut for group i with its tasks.
func (j *Job) groupOut(i int, g *Group) *groupOut {
	o := &groupOut{group: g, index: i, in: NewDigest(), out: NewDigest()}
	paths := make([]string, 0, len(g.Files))
	for _, f := range g.Files {
		paths = append(paths, f.Path)
	}
	if i < len(j.Groups) {
		paths = j.Groups[i].Files
	}
	for _, p := range paths {
		o.tasks = append(o.tasks, *j.tasks[p])
	}
	return o
}

// Storage returns the table's location and file system, for files a
// distributed engine keeps beside the table (its result, for one).
func (j *Job) Storage(ctx context.Context) (string, icebergio.IO, error) {
	if j.ex == nil {
		return "", nil, fmt.Errorf("job %s is not open", j.ID)
	}
	fs, err := j.ex.tbl.FS(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("file system of %s: %w", j.Table, err)
	}
	return j.ex.tbl.Location(), fs, nil
}
