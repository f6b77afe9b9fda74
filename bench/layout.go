package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/catalogs"
)

// Layout is one way of laying out a table's rows in files.
type Layout string

// Layouts of bench's own, each written into its own scratch copy of the
// table (but Current). Every other layout is a curve name of cluster's
// registry (cluster.CurveNames): the engine's sorted rewrite of all files
// by that curve over the rows' bboxes, or, for auto, each group laid out
// by the candidate its sample predicts plans the fewest files, chosen
// exactly as a rewrite without windows of its own chooses (bench's
// windows measure the result, they do not choose it).
const (
	// Unsorted is the arrival order: the rows as they were committed
	// (whatever rewrites did since; see ArrivalSource), cut into
	// target-size files without any reordering.
	Unsorted Layout = "unsorted"
	// BinPack is the engine's binpack rewrite of all files: target-size
	// files, rows still in arrival order.
	BinPack Layout = "binpack"
	// Current is the source table's own files as they are: nothing is
	// copied or rewritten.
	Current Layout = "current"
)

// AllLayouts are the layouts measured when none are named, in report
// order: the table as it is first, then what each layout would make of it
// (the curves of cluster.BenchedCurves).
var AllLayouts = append([]Layout{Current, Unsorted, BinPack}, curveLayouts(cluster.BenchedCurves())...)

// KnownLayouts are the layouts ParseLayouts accepts: the default ones,
// then the other curve names (cluster.OtherCurves).
var KnownLayouts = append(slices.Clone(AllLayouts), curveLayouts(cluster.OtherCurves())...)

func curveLayouts(names []string) []Layout {
	ls := make([]Layout, len(names))
	for i, n := range names {
		ls[i] = Layout(n)
	}
	return ls
}

// ParseLayouts parses a comma-separated layout list. Duplicates are
// refused, since each layout gets one scratch table.
func ParseLayouts(s string) ([]Layout, error) {
	var out []Layout
	for _, p := range strings.Split(s, ",") {
		l := Layout(strings.ToLower(strings.TrimSpace(p)))
		if !slices.Contains(KnownLayouts, l) {
			n := len(KnownLayouts)
			return nil, fmt.Errorf("bench: unknown layout %q: want %s or %s", p, JoinLayouts(KnownLayouts[:n-1], ", "), KnownLayouts[n-1])
		}
		if slices.Contains(out, l) {
			return nil, fmt.Errorf("bench: layout %q given twice", l)
		}
		out = append(out, l)
	}
	return out, nil
}

// JoinLayouts joins layout names with sep.
func JoinLayouts(ls []Layout, sep string) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = string(l)
	}
	return strings.Join(parts, sep)
}

// rewriteRequest is the engine request that writes layout l over a copy
// already cut into target-size files in arrival order; nil for Unsorted,
// which is that copy.
func rewriteRequest(l Layout, opts map[string]string, target int64) *engine.Request {
	o := make(map[string]string, len(opts)+2)
	for k, v := range opts {
		o[k] = v
	}
	o[engine.OptTargetFileSize] = strconv.FormatInt(target, 10)
	o[engine.OptRewriteAll] = "true"
	switch l {
	case Unsorted:
		return nil
	case BinPack:
		// The copy keeps the source's properties, its recorded layout
		// among them; every layout is measured whatever it records.
		return &engine.Request{Strategy: engine.BinPack, Options: o, AllowLayoutChange: true}
	}
	return &engine.Request{Strategy: engine.Sort, Curve: string(l), Options: o, AllowLayoutChange: true}
}

// propBenchSource marks a scratch table with the table it copies, so that
// a later run may replace it and never replaces anything else.
const propBenchSource = "geocompact.bench.source"

// ScratchName is the name of layout l's scratch copy of table ("ns.t"):
// "ns.t__bench_<layout>".
func ScratchName(tableName string, l Layout) string {
	return tableName + "__bench_" + string(l)
}

// arrivalOrder sorts tasks into the order their rows were committed: by
// data sequence number, then by position in the snapshot's manifests.
func arrivalOrder(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask) error {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return fmt.Errorf("list manifests: %w", err)
	}
	type key struct {
		seq int64
		pos int
	}
	keys := map[string]key{}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentData {
			continue
		}
		entries, err := m.FetchEntries(fs, true)
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			keys[e.DataFile().FilePath()] = key{e.SequenceNum(), len(keys)}
		}
	}
	slices.SortStableFunc(tasks, func(a, b table.FileScanTask) int {
		ka, kb := keys[a.File.FilePath()], keys[b.File.FilePath()]
		return cmp.Or(cmp.Compare(ka.seq, kb.seq), cmp.Compare(ka.pos, kb.pos))
	})
	return nil
}

// createScratch creates the scratch table name with spec's schema,
// partition spec, format version and properties. The copy rolls files at
// target bytes; rowGroupRows bounds its row groups so that it can. An
// earlier scratch copy of the same source is replaced; any other table of
// that name is left alone and reported.
func createScratch(ctx context.Context, cat catalog.Catalog, spec scratchSpec, srcName, name string, target, rowGroupRows int64) (*table.Table, error) {
	ident, err := catalogs.ParseIdentifier(name)
	if err != nil {
		return nil, err
	}
	if old, err := cat.LoadTable(ctx, ident); err == nil {
		if old.Properties()[propBenchSource] != srcName {
			return nil, fmt.Errorf("bench: table %s exists and is not a bench copy of %s; drop or rename it", name, srcName)
		}
		if err := dropScratch(ctx, cat, name); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, fmt.Errorf("look up %s: %w", name, err)
	}
	props := iceberg.Properties{}
	for k, v := range spec.props {
		props[k] = v
	}
	props[table.PropertyFormatVersion] = strconv.Itoa(spec.version)
	props[table.WriteTargetFileSizeBytesKey] = strconv.FormatInt(target, 10)
	props[table.ParquetRowGroupLimitKey] = strconv.FormatInt(rowGroupRows, 10)
	props["gc.enabled"] = "true" // it is ours to purge
	props[propBenchSource] = srcName
	tbl, err := cat.CreateTable(ctx, ident, spec.schema, catalog.WithPartitionSpec(&spec.spec), catalog.WithProperties(props))
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return tbl, nil
}

// copyRows appends the rows rows reads, in their order, to dst in one
// commit, in batches of at most chunk rows: the writer checks the file
// size only between batches, so large batches would overshoot the target.
// The snapshot records srcName as its source.
func copyRows(ctx context.Context, rows rowReader, srcName string, dst *table.Table, chunk int64) (*table.Table, error) {
	sc, recs, err := rows(ctx)
	if err != nil {
		return nil, err
	}
	rdr := array.ReaderFromIter(sc, chunked(recs, chunk))
	defer rdr.Release()
	out, err := dst.Append(ctx, rdr, iceberg.Properties{propBenchSource: srcName})
	if err != nil {
		return nil, fmt.Errorf("copy rows into %s: %w", catalogs.TableName(dst), err)
	}
	return out, nil
}

// dropScratch drops a scratch table and deletes its files.
func dropScratch(ctx context.Context, cat catalog.Catalog, name string) error {
	ident, err := catalogs.ParseIdentifier(name)
	if err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) {
			return nil
		}
		return fmt.Errorf("drop %s: %w", name, err)
	}
	if err := cat.DropTable(ctx, ident); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	if err := tbl.PurgeFiles(ctx); err != nil {
		return fmt.Errorf("purge %s: %w", name, err)
	}
	removeEmptyDirs(tbl.Location())
	return nil
}

// removeEmptyDirs removes the directories a purged local table leaves
// behind. os.Remove refuses non-empty directories, so anything else that
// lives there stays; object stores have no directories to remove.
func removeEmptyDirs(location string) {
	dir, ok := strings.CutPrefix(location, "file://")
	if !ok && !strings.HasPrefix(location, "/") {
		return
	}
	if !ok {
		dir = location
	}
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		_ = os.Remove(dirs[i])
	}
}

// chunked re-slices the batches of recs into batches of at most n rows. The
// consumer releases each slice; chunked releases the batches it slices.
func chunked(recs iter.Seq2[arrow.RecordBatch, error], n int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range recs {
			if err != nil {
				yield(nil, err)
				return
			}
			for i := int64(0); i < rec.NumRows(); i += n {
				if !yield(rec.NewSlice(i, min(i+n, rec.NumRows())), nil) {
					rec.Release()
					return
				}
			}
			rec.Release()
		}
	}
}
