package posdeletes

import (
	"context"
	"fmt"
	"hash/fnv"
	"path"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"
)

// output is one rewritten group: the delete files it replaces, the files
// it adds, and what it kept and dropped.
type output struct {
	g       *group
	removed []deleteFile
	added   []iceberg.DataFile
	// written are the paths written, for removal on failure.
	written []string
	// vectors maps each data file given a new vector to the key of the
	// vector it replaces ("" for none).
	vectors map[string]string
	// equality are the equality delete files converted, with the data
	// files each applied to when resolved.
	equality []eqPlan
	kept     int64
	dropped  int64
}

// positions are the live deleted positions of a group, by data file.
type positions map[string][]int64

// digest is an order-free fingerprint of a set of positions.
type digest struct {
	n   int64
	sum uint64
}

func (d *digest) add(p string, pos int64) {
	h := fnv.New64a()
	h.Write([]byte(p))
	h.Write([]byte(strconv.FormatInt(pos, 10)))
	d.n++
	d.sum += h.Sum64()
}

// rewriteGroup reads g's delete files, keeps the positions of live data
// files, writes them (as vectors on a v3 table) and reads them back.
func (r *run) rewriteGroup(ctx context.Context, g *group) (*output, error) {
	fs, err := r.tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	o := &output{g: g, removed: g.files}
	pos := positions{}
	for _, f := range g.files {
		if r.st.dangling(f) {
			o.dropped += f.df.Count()
			continue
		}
		err := readPositions(ctx, fs, f.df.FilePath(), func(p string, at int64) {
			if r.applies(f, p) {
				pos[p] = append(pos[p], at)
			} else {
				o.dropped++
			}
		})
		if err != nil {
			return nil, fmt.Errorf("read position delete file %s: %w", f.df.FilePath(), err)
		}
	}
	o.kept = normalize(pos).n
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("the table's file system cannot write")
	}
	return o, r.write(ctx, wfs, o, pos, false)
}

// write writes pos, as vectors on a v3 table (merged with the vectors
// the data files have when merge is set), reads the new files back and
// checks they hold exactly pos.
func (r *run) write(ctx context.Context, fs iceio.WriteFileIO, o *output, pos positions, merge bool) error {
	var err error
	if r.tbl.Metadata().Version() >= 3 {
		err = r.writeVectors(ctx, fs, o, pos, merge)
	} else if len(pos) > 0 {
		err = r.writeFiles(ctx, fs, o, pos)
	}
	if err != nil {
		return err
	}
	want := normalize(pos)
	o.kept = want.n
	got, err := readBack(ctx, fs, o.added)
	if err != nil {
		return fmt.Errorf("read back the new delete files: %w", err)
	}
	if got != want {
		return fmt.Errorf("the new delete files of partition %q hold %d positions that differ from the %d read", o.g.name, got.n, want.n)
	}
	return nil
}

// applies reports whether a position of delete file f in data file p
// deletes a row readers see deleted: p is live, was added no later than
// f, and has no deletion vector (readers ignore position deletes of a
// data file that has one, which holds all of its deletes).
func (r *run) applies(f deleteFile, p string) bool {
	d, ok := r.st.data[p]
	if !ok || d.seq > f.seq {
		return false
	}
	_, vector := r.st.vectors[p]
	return !vector
}

// normalize sorts each data file's positions, drops repeats, and
// fingerprints them.
func normalize(pos positions) digest {
	var d digest
	for p, ps := range pos {
		slices.Sort(ps)
		ps = slices.Compact(ps)
		pos[p] = ps
		for _, at := range ps {
			d.add(p, at)
		}
	}
	return d
}

// readPositions calls fn with every (file_path, pos) of a Parquet
// position delete file.
func readPositions(ctx context.Context, fs iceio.IO, p string, fn func(string, int64)) error {
	f, err := fs.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return err
	}
	defer pr.Close()
	sc := pr.MetaData().Schema
	pathCol, posCol := sc.ColumnIndexByName("file_path"), sc.ColumnIndexByName("pos")
	if pathCol < 0 || posCol < 0 {
		return fmt.Errorf("it has no file_path and pos columns")
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, []int{pathCol, posCol}, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		rec := rr.RecordBatch()
		paths, ok := rec.Column(0).(interface{ Value(int) string })
		at, ok2 := rec.Column(1).(*array.Int64)
		if !ok || !ok2 {
			return fmt.Errorf("file_path is %s and pos %s, want a string and a long", rec.Column(0).DataType(), rec.Column(1).DataType())
		}
		for i := range int(rec.NumRows()) {
			if rec.Column(0).IsNull(i) || at.IsNull(i) {
				return fmt.Errorf("row %d has a null file_path or pos", i)
			}
			fn(paths.Value(i), at.Value(i))
		}
	}
	return rr.Err()
}

// newLocation names a new delete file in the group's partition directory.
func (r *run) newLocation(g *group, ext string) (string, error) {
	lp, err := r.tbl.LocationProvider()
	if err != nil {
		return "", err
	}
	name := uuid.NewString() + "-deletes." + ext
	if g.name != "" {
		name = path.Join(g.name, name)
	}
	return lp.NewDataLocation(name), nil
}

// GranularityProperty is the table property by which Iceberg's writers
// scope position delete files: "partition" (many data files per delete
// file) or "file" (one data file per delete file), which the rewrite
// keeps.
const GranularityProperty = "write.delete.granularity"

// writeFiles writes pos as Parquet position delete files, sorted by path
// and position, cut toward the target size (or one per data file when
// the table's delete granularity is file).
func (r *run) writeFiles(ctx context.Context, fs iceio.WriteFileIO, o *output, pos positions) error {
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range pos {
			if !yield(p) {
				return
			}
		}
	})
	var read int64
	for _, f := range o.g.files {
		read += f.df.Count()
	}
	n := int64(1)
	if read > 0 {
		est := o.g.bytes() * o.kept / read
		n = max(1, (est+r.opts.TargetFileSize-1)/r.opts.TargetFileSize)
	}
	per := (o.kept + n - 1) / n
	if r.tbl.Properties()[GranularityProperty] == "file" {
		per = 1 // a file per data file, as the table's writers make them
	}
	var chunk []string
	var rows int64
	flush := func() error {
		if rows == 0 {
			return nil
		}
		df, err := r.writeFile(ctx, fs, o, chunk, pos)
		chunk, rows = nil, 0
		if err != nil {
			return err
		}
		o.added = append(o.added, df)
		return nil
	}
	for _, p := range paths {
		if rows > 0 && rows+int64(len(pos[p])) > per {
			if err := flush(); err != nil {
				return err
			}
		}
		chunk = append(chunk, p)
		rows += int64(len(pos[p]))
	}
	return flush()
}

var deleteSchema = arrow.NewSchema([]arrow.Field{
	{Name: "file_path", Type: arrow.BinaryTypes.String, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2147483546"})},
	{Name: "pos", Type: arrow.PrimitiveTypes.Int64, Metadata: arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"2147483545"})},
}, nil)

// writeFile writes the positions of the data files paths into one file.
func (r *run) writeFile(ctx context.Context, fs iceio.WriteFileIO, o *output, paths []string, pos positions) (iceberg.DataFile, error) {
	loc, err := r.newLocation(o.g, "parquet")
	if err != nil {
		return nil, err
	}
	w, err := fs.Create(loc)
	if err != nil {
		return nil, err
	}
	o.written = append(o.written, loc)
	cw := &countingWriter{w: w}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithStats(true),
		parquet.WithDictionaryFor("pos", false)) // distinct positions: a dictionary only adds bytes
	pw, err := pqarrow.NewFileWriter(deleteSchema, cw, props, pqarrow.DefaultWriterProps())
	if err != nil {
		w.Close()
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, deleteSchema)
	defer b.Release()
	pb, ab := b.Field(0).(*array.StringBuilder), b.Field(1).(*array.Int64Builder)
	writeBatch := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		return pw.WriteBuffered(rec)
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			pw.Close()
			return nil, err
		}
		for _, at := range pos[p] {
			pb.Append(p)
			ab.Append(at)
			if pb.Len() == 64<<10 {
				if err := writeBatch(); err != nil {
					pw.Close()
					return nil, err
				}
			}
		}
	}
	if pb.Len() > 0 {
		if err := writeBatch(); err != nil {
			pw.Close()
			return nil, err
		}
	}
	if err := pw.Close(); err != nil {
		return nil, err
	}
	meta, err := pw.FileMetadata()
	if err != nil {
		return nil, err
	}
	args := table.DataFileArgs{Schema: iceberg.PositionalDeleteSchema, Spec: r.spec(o.g.specID), Format: iceberg.ParquetFile,
		Metadata: meta, FilePath: loc, FileSize: cw.n, Content: iceberg.EntryContentPosDeletes, PartitionValues: o.g.partition,
		Properties: iceberg.Properties{table.MetricsModeColumnConfPrefix + ".file_path": "full"}, FormatVersion: r.tbl.Metadata().Version()}
	if len(paths) == 1 {
		args.ReferencedDataFile = &paths[0]
	}
	return table.DataFileFromMetadata(args)
}

func (r *run) spec(id int32) iceberg.PartitionSpec {
	if s := r.tbl.Metadata().PartitionSpecByID(int(id)); s != nil {
		return *s
	}
	return *iceberg.UnpartitionedSpec
}

// writeVectors writes one deletion vector per data file in pos into one
// Puffin file. Unless merge is set no data file in pos has a vector yet
// (see applies); with merge, a data file's vector is read, its positions
// join pos, and it is replaced.
func (r *run) writeVectors(ctx context.Context, fs iceio.WriteFileIO, o *output, pos positions, merge bool) error {
	if len(pos) == 0 {
		return nil
	}
	w := dv.NewDVWriter(fs, func(id int32) *iceberg.PartitionSpec { return r.tbl.Metadata().PartitionSpecByID(int(id)) })
	o.vectors = map[string]string{}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range pos {
			if !yield(p) {
				return
			}
		}
	}) {
		data := r.st.data[p]
		o.vectors[p] = ""
		if old, ok := r.st.vectors[p]; ok && merge {
			bm, err := dv.ReadDV(fs, old.df)
			if err != nil {
				return fmt.Errorf("read the deletion vector of %s: %w", p, err)
			}
			o.vectors[p] = old.key()
			o.removed = append(o.removed, old)
			for at := range bm.Positions() {
				pos[p] = append(pos[p], int64(at))
			}
		}
		if err := w.Add(p, pos[p], data.spec, data.partition); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	loc, err := r.newLocation(o.g, "puffin")
	if err != nil {
		return err
	}
	o.written = append(o.written, loc)
	added, err := w.Flush(ctx, loc)
	if err != nil {
		return err
	}
	o.added = added
	return nil
}

// readBack reads the new delete files and fingerprints what they hold.
func readBack(ctx context.Context, fs iceio.IO, added []iceberg.DataFile) (digest, error) {
	var d digest
	for _, a := range added {
		if a.FileFormat() == iceberg.PuffinFile {
			bm, err := dv.ReadDV(fs, a)
			if err != nil {
				return d, err
			}
			for at := range bm.Positions() {
				d.add(*a.ReferencedDataFile(), int64(at))
			}
			continue
		}
		if err := readPositions(ctx, fs, a.FilePath(), d.add); err != nil {
			return d, err
		}
	}
	return d, nil
}

type countingWriter struct {
	w interface {
		Write([]byte) (int, error)
		Close() error
	}
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) Close() error { return c.w.Close() }
