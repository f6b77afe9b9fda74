package job

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// Commit verifies what the workers wrote for every group (the digests of
// the rows read, in, against those of the files written read back, out,
// combined with Digest.Merge per group), then replaces the planned files
// with files in one snapshot tagged with the job's id, with the local
// engine's conflict handling. The replaced files come from the driver's
// own plan, never from the workers. On error nothing is committed; call
// Abort to delete the job's files.
func (j *Rewrite) Commit(ctx context.Context, cat catalog.Catalog, files [][]iceberg.DataFile, in, out []verify.Digest) (*engine.Result, error) {
	start := time.Now()
	res := j.Result
	if j.pieces == nil {
		if err := j.Open(ctx, cat); err != nil {
			return res, err
		}
	}
	outs := make([][]format.OutFile, len(files))
	for i, fs := range files {
		outs[i] = icebergtable.Out(fs)
	}
	if err := j.pieces.Commit(ctx, res, outs, in, out); err != nil {
		return res, err
	}
	res.Duration += time.Since(start)
	return res, nil
}

// Abort deletes every file under the table location that carries the
// job's tag and that no table metadata references: after a failure,
// everything the job wrote; after a commit, what failed attempts of
// retried steps wrote (runners that retry, Flink and Dataflow, leave
// those). It returns the paths it deleted.
func (j *Rewrite) Abort(ctx context.Context, cat catalog.Catalog) ([]string, error) {
	tbl, err := catalogs.LoadTable(ctx, catalogs.Wrap(cat), j.Table)
	if err != nil {
		return nil, err
	}
	// Every file up to now: the job's files are seconds old.
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(0))
	if err != nil {
		return nil, fmt.Errorf("abort job %s: list files of %s: %w", j.ID, j.Table, err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("abort job %s: %w", j.ID, err)
	}
	var deleted []string
	for _, f := range plan.OrphanFiles() {
		// Orphan planning lists only files under the table location.
		if !strings.Contains(path.Base(f.Path), j.Tag()) {
			continue
		}
		if err := fs.Remove(f.Path); err != nil {
			return deleted, fmt.Errorf("abort job %s: delete %s: %w", j.ID, f.Path, err)
		}
		deleted = append(deleted, f.Path)
	}
	return deleted, nil
}

// EncodeFiles describes data files the job wrote, losslessly (partition
// values, bounds, counts), for another process: an Avro manifest list and
// manifest, as Iceberg itself stores them. No files encode as nil.
func (j *Rewrite) EncodeFiles(files []iceberg.DataFile) ([]byte, error) {
	if len(files) == 0 {
		return nil, nil
	}
	if _, err := j.open(); err != nil {
		return nil, err
	}
	var man, list bytes.Buffer
	entries := make([]iceberg.ManifestEntry, len(files))
	for i, f := range files {
		entries[i] = iceberg.NewManifestEntry(iceberg.EntryStatusADDED, &j.SnapshotID, nil, nil, f)
	}
	meta := j.ice.Table.Metadata()
	mf, err := iceberg.WriteManifest("job-"+j.ID+".avro", &man, 2, meta.PartitionSpec(), meta.CurrentSchema(), j.SnapshotID, entries)
	if err != nil {
		return nil, fmt.Errorf("encode data files: %w", err)
	}
	var seq int64
	if err := iceberg.WriteManifestList(2, &list, j.SnapshotID, nil, &seq, 0, []iceberg.ManifestFile{mf}); err != nil {
		return nil, fmt.Errorf("encode data files: %w", err)
	}
	out := binary.AppendUvarint(nil, uint64(list.Len()))
	out = append(out, list.Bytes()...)
	return append(out, man.Bytes()...), nil
}

// DecodeFiles reads what EncodeFiles wrote.
func DecodeFiles(b []byte) ([]iceberg.DataFile, error) {
	if len(b) == 0 {
		return nil, nil
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return nil, fmt.Errorf("decode data files: truncated description (%d bytes)", len(b))
	}
	mfs, err := iceberg.ReadManifestList(bytes.NewReader(b[k : k+int(n)]))
	if err != nil || len(mfs) != 1 {
		return nil, fmt.Errorf("decode data files: manifest list: %w (%d manifests)", err, len(mfs))
	}
	entries, err := iceberg.ReadManifest(mfs[0], bytes.NewReader(b[k+int(n):]), true)
	if err != nil {
		return nil, fmt.Errorf("decode data files: %w", err)
	}
	out := make([]iceberg.DataFile, len(entries))
	for i, e := range entries {
		out[i] = e.DataFile()
	}
	return out, nil
}
