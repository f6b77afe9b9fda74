package posdeletes

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/where"
)

// state is what a snapshot holds that a delete file rewrite reads: its
// live data files with their data sequence numbers, its position delete
// files, and its deletion vectors by the data file they apply to.
type state struct {
	snapshotID int64
	// data maps a live data file's path to its facts.
	data map[string]dataFile
	// files are the live position delete files (not vectors).
	files []deleteFile
	// vectors maps a data file's path to its deletion vector.
	vectors map[string]deleteFile
	// equality are the live equality delete files.
	equality []deleteFile
}

// dataFile is what a delete file rewrite needs of a live data file: its
// data sequence number, spec and partition.
type dataFile struct {
	seq       int64
	spec      int32
	partition map[int]any
}

// deleteFile is one live delete file and its manifest entry's facts.
type deleteFile struct {
	df  iceberg.DataFile
	seq int64
}

func (d deleteFile) key() string {
	if ref := d.df.ReferencedDataFile(); ref != nil && d.df.FileFormat() == iceberg.PuffinFile {
		return d.df.FilePath() + "#" + *ref
	}
	return d.df.FilePath()
}

// size is the bytes a delete file counts for: its file's, or its blob's
// for a vector that shares a Puffin file.
func (d deleteFile) size() int64 {
	if d.df.FileFormat() == iceberg.PuffinFile && d.df.ContentSizeInBytes() != nil {
		return *d.df.ContentSizeInBytes()
	}
	return d.df.FileSizeBytes()
}

// readState reads the manifests of tbl's current snapshot.
func readState(ctx context.Context, tbl *table.Table) (*state, error) {
	snap := tbl.CurrentSnapshot()
	st := &state{data: map[string]dataFile{}, vectors: map[string]deleteFile{}}
	if snap == nil {
		return st, nil
	}
	st.snapshotID = snap.SnapshotID
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read the manifest list: %w", err)
	}
	for _, m := range mans {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := st.addManifest(fs, m); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(st.files, func(a, b deleteFile) int { return cmp.Compare(a.df.FilePath(), b.df.FilePath()) })
	return st, nil
}

func (st *state) addManifest(fs iceio.IO, m iceberg.ManifestFile) error {
	entries, err := m.FetchEntries(fs, true)
	if err != nil {
		return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
	}
	for _, e := range entries {
		df := e.DataFile()
		switch df.ContentType() {
		case iceberg.EntryContentData:
			st.data[df.FilePath()] = dataFile{seq: e.SequenceNum(), spec: df.SpecID(), partition: df.Partition()}
		case iceberg.EntryContentEqDeletes:
			st.equality = append(st.equality, deleteFile{df: df, seq: e.SequenceNum()})
		case iceberg.EntryContentPosDeletes:
			d := deleteFile{df: df, seq: e.SequenceNum()}
			if df.FileFormat() != iceberg.PuffinFile {
				st.files = append(st.files, d)
				continue
			}
			ref := df.ReferencedDataFile()
			if ref == nil {
				return fmt.Errorf("deletion vector in %s names no data file", df.FilePath())
			}
			if prev, ok := st.vectors[*ref]; ok {
				return fmt.Errorf("data file %s has two deletion vectors (%s and %s): the table breaks the v3 spec; refusing to rewrite its deletes", *ref, prev.df.FilePath(), df.FilePath())
			}
			st.vectors[*ref] = d
		}
	}
	return nil
}

// selectWhere keeps the position delete files that apply to a data file
// the predicate text may match: those a scan filtered by it attaches.
func (st *state) selectWhere(ctx context.Context, tbl *table.Table, text string) error {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	filter, err := where.Parse(text, tbl.Schema())
	if err != nil {
		return err
	}
	if _, ok := filter.(iceberg.AlwaysTrue); ok {
		return nil
	}
	tasks, err := catalogs.PlanFiles(ctx, tbl.Scan(table.WithSnapshotID(st.snapshotID), table.WithRowFilter(filter)))
	if err != nil {
		return fmt.Errorf("plan files for the where predicate: %w", err)
	}
	keep := map[string]bool{}
	for _, t := range tasks {
		for _, d := range t.DeleteFiles {
			keep[d.FilePath()] = true
		}
	}
	st.files = slices.DeleteFunc(st.files, func(d deleteFile) bool { return !keep[d.df.FilePath()] })
	return nil
}

// group is the position delete files of one partition rewritten together.
type group struct {
	// name is the partition, as its path reads ("" unpartitioned).
	name      string
	specID    int32
	partition map[int]any
	files     []deleteFile
}

func (g *group) bytes() int64 {
	var n int64
	for _, f := range g.files {
		n += f.size()
	}
	return n
}

// dangling reports whether d names the one data file it applies to and
// that file is not live (or was added after d): d deletes nothing and
// goes without being read.
func (st *state) dangling(d deleteFile) bool {
	ref := d.df.ReferencedDataFile()
	if ref == nil {
		return false
	}
	data, ok := st.data[*ref]
	return !ok || data.seq > d.seq
}

// plan groups the position delete files by partition and keeps the groups
// worth rewriting under o, in o's job order. On a v3 table every position
// delete file is rewritten, into deletion vectors.
func (st *state) plan(r *run, o Options, toVectors bool) []*group {
	byKey := map[string]*group{}
	var keys []string
	for _, d := range st.files {
		k := partitionKey(d.df)
		g := byKey[k]
		if g == nil {
			g = &group{name: r.partitionPath(dataFile{spec: d.df.SpecID(), partition: d.df.Partition()}), specID: d.df.SpecID(), partition: d.df.Partition()}
			byKey[k] = g
			keys = append(keys, k)
		}
		g.files = append(g.files, d)
	}
	slices.Sort(keys)
	var out []*group
	for _, k := range keys {
		out = append(out, st.pick(byKey[k], o, toVectors)...)
	}
	order(out, o.JobOrder)
	return out
}

// pick returns the groups of one partition's files that o rewrites: the
// files outside the size range (all with rewrite-all or on v3), packed
// into groups of at most MaxFileGroupSize, each kept when it has enough
// files or content, or a file that is too large or deletes nothing.
func (st *state) pick(all *group, o Options, toVectors bool) []*group {
	var cands []deleteFile
	for _, f := range all.files {
		if o.RewriteAll || toVectors || st.dangling(f) || f.size() < o.MinFileSize || f.size() > o.MaxFileSize {
			cands = append(cands, f)
		}
	}
	var out []*group
	cur := &group{name: all.name, specID: all.specID, partition: all.partition}
	flush := func() {
		if len(cur.files) > 0 && st.worth(cur, o, toVectors) {
			out = append(out, cur)
		}
		cur = &group{name: all.name, specID: all.specID, partition: all.partition}
	}
	for _, f := range cands {
		if len(cur.files) > 0 && cur.bytes()+f.size() > o.MaxFileGroupSize {
			flush()
		}
		cur.files = append(cur.files, f)
	}
	flush()
	return out
}

func (st *state) worth(g *group, o Options, toVectors bool) bool {
	if o.RewriteAll || toVectors || slices.ContainsFunc(g.files, st.dangling) {
		return true
	}
	n, b := len(g.files), g.bytes()
	tooLarge := slices.ContainsFunc(g.files, func(f deleteFile) bool { return f.size() > o.MaxFileSize })
	return n > 1 && (n >= o.MinInputFiles || b > o.TargetFileSize || b > o.MaxFileGroupSize) || tooLarge
}

func order(gs []*group, by string) {
	switch by {
	case "bytes-asc":
		slices.SortStableFunc(gs, func(a, b *group) int { return cmp.Compare(a.bytes(), b.bytes()) })
	case "bytes-desc":
		slices.SortStableFunc(gs, func(a, b *group) int { return cmp.Compare(b.bytes(), a.bytes()) })
	case "files-asc":
		slices.SortStableFunc(gs, func(a, b *group) int { return cmp.Compare(len(a.files), len(b.files)) })
	case "files-desc":
		slices.SortStableFunc(gs, func(a, b *group) int { return cmp.Compare(len(b.files), len(a.files)) })
	}
}

// partitionKey keys a file's spec and partition values.
func partitionKey(df iceberg.DataFile) string { return valuesKey(df.SpecID(), df.Partition()) }

type partitionTuple []any

func (p partitionTuple) Size() int        { return len(p) }
func (p partitionTuple) Get(i int) any    { return p[i] }
func (p partitionTuple) Set(i int, v any) { p[i] = v }
