package posdeletes

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"

	"github.com/geocompact/geocompact/table/catalogs"
)

// OptConvertEquality is geocompact's own option: resolve every equality
// delete file against the data files it applies to, write the rows it
// deletes as positions (vectors on a v3 table), and remove it.
const OptConvertEquality = "convert-equality-deletes"

// eqPlan is one equality delete file and the live data files it applies
// to: those of its partition (every one for a global delete, written with
// an unpartitioned spec) added before it.
type eqPlan struct {
	e    deleteFile
	data []string
}

// equalityPlans pairs each equality delete file with its data files.
func (r *run) equalityPlans(st *state) []eqPlan {
	var out []eqPlan
	for _, e := range st.equality {
		out = append(out, eqPlan{e: e, data: r.appliesTo(st, e)})
	}
	return out
}

// appliesTo lists, sorted, the live data files of st equality delete e
// applies to.
func (r *run) appliesTo(st *state, e deleteFile) []string {
	spec := r.tbl.Metadata().PartitionSpecByID(int(e.df.SpecID()))
	global := spec == nil || spec.IsUnpartitioned()
	ek := valuesKey(e.df.SpecID(), e.df.Partition())
	var data []string
	for p, d := range st.data {
		if d.seq < e.seq && (global || valuesKey(d.spec, d.partition) == ek) {
			data = append(data, p)
		}
	}
	slices.Sort(data)
	return data
}

// convertEquality turns the table's equality delete files into positions
// in one commit, on a fresh read of the table.
func (r *run) convertEquality(ctx context.Context, res *Result) error {
	tbl, err := catalogs.LoadTable(ctx, r.cat, r.name)
	if err != nil {
		return err
	}
	r.tbl = tbl
	if r.st, err = readState(ctx, tbl); err != nil {
		return fmt.Errorf("rewrite position deletes of %s: %w", r.name, err)
	}
	plans := r.equalityPlans(r.st)
	if len(plans) == 0 {
		return nil
	}
	if err := r.refuseEquality(plans); err != nil {
		return err
	}
	res.EqualityDeleteFilesConverted = len(plans)
	if r.cfg.DryRun {
		for _, p := range plans {
			res.RewrittenDeleteFilesCount++
			res.RewrittenBytesCount += p.e.size()
		}
		return nil
	}
	outs, written, err := r.resolve(ctx, plans)
	if err == nil {
		err = r.gate(outs)
	}
	if err == nil {
		err = r.commitOutputs(ctx, outs, res)
	}
	if err != nil && !catalogs.OutcomeUnknown(err) {
		removeWritten(ctx, r, written)
	}
	return err
}

// refuseEquality names, before anything is written, what cannot be
// resolved safely.
func (r *run) refuseEquality(plans []eqPlan) error {
	v3 := r.tbl.Metadata().Version() >= 3
	withFiles := map[string]bool{}
	for _, f := range r.st.files {
		if ref := f.df.ReferencedDataFile(); ref != nil {
			withFiles[*ref] = true
		}
	}
	for _, p := range plans {
		e := p.e.df
		if e.FileFormat() != iceberg.ParquetFile {
			return fmt.Errorf("%w: %s: equality delete file %s is %s; only Parquet equality delete files are converted", ErrUnsupported, r.name, e.FilePath(), e.FileFormat())
		}
		for _, id := range e.EqualityFieldIDs() {
			f, ok := r.tbl.Schema().FindFieldByID(id)
			if !ok {
				return fmt.Errorf("%w: %s: equality delete file %s deletes by field %d, which the schema no longer has", ErrUnsupported, r.name, e.FilePath(), id)
			}
			if _, ok := f.Type.(iceberg.PrimitiveType); !ok {
				return fmt.Errorf("%w: %s: equality delete file %s deletes by %s, a %s: only primitive fields are resolved", ErrUnsupported, r.name, e.FilePath(), f.Name, f.Type)
			}
			if f.InitialDefault != nil {
				return fmt.Errorf("%w: %s: equality delete file %s deletes by %s, which has an initial default: files written before it was added cannot be resolved safely", ErrUnsupported, r.name, e.FilePath(), f.Name)
			}
		}
		if !v3 {
			continue
		}
		for _, d := range p.data {
			if _, vector := r.st.vectors[d]; !vector && withFiles[d] {
				return fmt.Errorf("%w: %s: data file %s has position delete files and no deletion vector; run rewrite-deletes first, which turns them into vectors", ErrUnsupported, r.name, d)
			}
		}
	}
	return nil
}

// resolve reads each equality delete file's keys, finds the rows of its
// data files that match them, and writes those rows' positions per
// partition. The first output carries the equality delete files to
// remove.
func (r *run) resolve(ctx context.Context, plans []eqPlan) ([]*output, []string, error) {
	fs, err := r.tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, ok := fs.(iceio.WriteFileIO)
	if !ok {
		return nil, nil, fmt.Errorf("the table's file system cannot write")
	}
	byPart := map[string]positions{}
	for _, p := range plans {
		ids := p.e.df.EqualityFieldIDs()
		keys := map[string]bool{}
		if err := readColumns(ctx, fs, p.e.df.FilePath(), ids, func(k string, _ int64) { keys[k] = true }); err != nil {
			return nil, nil, fmt.Errorf("read equality delete file %s: %w", p.e.df.FilePath(), err)
		}
		for _, d := range p.data {
			part := valuesKey(r.st.data[d].spec, r.st.data[d].partition)
			err := readColumns(ctx, fs, d, ids, func(k string, at int64) {
				if keys[k] {
					if byPart[part] == nil {
						byPart[part] = positions{}
					}
					byPart[part][d] = append(byPart[part][d], at)
				}
			})
			if err != nil {
				return nil, nil, fmt.Errorf("read data file %s: %w", d, err)
			}
		}
	}
	var outs []*output
	var written []string
	for _, k := range slices.Sorted(maps.Keys(byPart)) {
		pos := byPart[k]
		first := slices.Min(slices.Collect(maps.Keys(pos)))
		d := r.st.data[first]
		g := &group{name: r.partitionPath(d), specID: d.spec, partition: d.partition}
		o := &output{g: g}
		normalize(pos)
		o.kept = int64(0)
		for _, ps := range pos {
			o.kept += int64(len(ps))
		}
		err := r.write(ctx, wfs, o, pos, true)
		written = append(written, o.written...)
		if err != nil {
			return nil, written, err
		}
		outs = append(outs, o)
	}
	if len(outs) == 0 {
		outs = append(outs, &output{g: &group{name: "equality deletes"}})
	}
	for _, p := range plans {
		outs[0].removed = append(outs[0].removed, p.e)
	}
	outs[0].equality = plans
	return outs, written, nil
}

// partitionPath is a data file's partition directory.
func (r *run) partitionPath(d dataFile) string {
	spec := r.tbl.Metadata().PartitionSpecByID(int(d.spec))
	if spec == nil || spec.IsUnpartitioned() || len(d.partition) == 0 {
		return ""
	}
	rec := make(partitionTuple, 0, spec.NumFields())
	for _, f := range spec.Fields() {
		rec = append(rec, d.partition[f.FieldID])
	}
	return spec.PartitionToPath(rec, r.tbl.Metadata().CurrentSchema())
}

// readColumns calls fn with the key of the columns ids (by field id) of
// every row of a Parquet file, and the row's position. A column the file
// lacks reads as null, as it does for Iceberg readers.
func readColumns(ctx context.Context, fs iceio.IO, p string, ids []int, fn func(key string, at int64)) error {
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
	byID := map[int]int{}
	for i := range sc.NumColumns() {
		if id := int(sc.Column(i).SchemaNode().FieldID()); id >= 0 {
			byID[id] = i
		}
	}
	var cols []int
	slot := make([]int, len(ids)) // index into the record, or -1
	for i, id := range ids {
		c, ok := byID[id]
		if !ok {
			slot[i] = -1
			continue
		}
		slot[i] = len(cols)
		cols = append(cols, c)
	}
	rows := pr.NumRows()
	if len(cols) == 0 {
		k := strings.Repeat("\x00", len(ids))
		for at := range rows {
			fn(k, at)
		}
		return nil
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, cols, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	var at int64
	var b strings.Builder
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := range int(rec.NumRows()) {
			b.Reset()
			for _, s := range slot {
				if s < 0 {
					b.WriteByte(0)
					continue
				}
				if err := appendKey(&b, rec.Column(s), i); err != nil {
					return err
				}
			}
			fn(b.String(), at)
			at++
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	if at != rows {
		return fmt.Errorf("read %d rows of %d", at, rows)
	}
	return nil
}

// appendKey appends one value of arr to a key, in a form equal for equal
// Iceberg values whatever their Arrow width (an int read as int32 in one
// file and int64 in another after promotion); null is a value of its own,
// as equality deletes treat it.
func appendKey(b *strings.Builder, arr arrow.Array, i int) error {
	if arr.IsNull(i) {
		b.WriteByte(0)
		return nil
	}
	var v string
	switch a := arr.(type) {
	case *array.Int8:
		v = "i" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		v = "i" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int32:
		v = "i" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int64:
		v = "i" + strconv.FormatInt(a.Value(i), 10)
	case *array.Float32:
		v = "f" + strconv.FormatUint(math.Float64bits(float64(a.Value(i))), 16)
	case *array.Float64:
		v = "f" + strconv.FormatUint(math.Float64bits(a.Value(i)), 16)
	case *array.Boolean:
		v = "b" + strconv.FormatBool(a.Value(i))
	case *array.String:
		v = "s" + a.Value(i)
	case *array.LargeString:
		v = "s" + a.Value(i)
	case *array.Binary:
		v = "s" + string(a.Value(i))
	case *array.LargeBinary:
		v = "s" + string(a.Value(i))
	case *array.FixedSizeBinary:
		v = "s" + string(a.Value(i))
	case *array.Date32:
		v = "d" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		v = "t" + strconv.FormatInt(int64(a.Value(i))*map[arrow.TimeUnit]int64{arrow.Second: 1e6, arrow.Millisecond: 1e3, arrow.Microsecond: 1, arrow.Nanosecond: 1}[unit], 10)
		if unit == arrow.Nanosecond {
			v = "n" + strconv.FormatInt(int64(a.Value(i)), 10)
		}
	case *array.Time64:
		v = "h" + strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Decimal128:
		v = "m" + a.Value(i).BigInt().String() + "e" + strconv.Itoa(int(a.DataType().(*arrow.Decimal128Type).Scale))
	default:
		return fmt.Errorf("%w: equality deletes by a %s column are not resolved", ErrUnsupported, arr.DataType())
	}
	b.WriteByte(1)
	b.WriteString(strconv.Itoa(len(v)))
	b.WriteByte(':')
	b.WriteString(v)
	return nil
}

// valuesKey keys a spec and partition values.
func valuesKey(spec int32, p map[int]any) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", spec)
	for _, id := range slices.Sorted(maps.Keys(p)) {
		fmt.Fprintf(&b, "|%d=%T:%v", id, p[id], p[id])
	}
	return b.String()
}
