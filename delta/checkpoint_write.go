package delta

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// defaultCheckpointInterval is delta.checkpointInterval when unset.
const defaultCheckpointInterval = 10

func checkpointSchema() *arrow.Schema {
	str := arrow.BinaryTypes.String
	i64 := arrow.PrimitiveTypes.Int64
	i32 := arrow.PrimitiveTypes.Int32
	boolean := arrow.FixedWidthTypes.Boolean
	strMap := arrow.MapOf(str, str)
	strList := arrow.ListOf(str)
	f := func(name string, t arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: t, Nullable: true}
	}
	dv := arrow.StructOf(f("storageType", str), f("pathOrInlineDv", str), f("offset", i32),
		f("sizeInBytes", i32), f("cardinality", i64), f("maxRowIndex", i64))
	return arrow.NewSchema([]arrow.Field{
		f("txn", arrow.StructOf(f("appId", str), f("version", i64), f("lastUpdated", i64))),
		f("add", arrow.StructOf(f("path", str), f("partitionValues", strMap), f("size", i64),
			f("modificationTime", i64), f("dataChange", boolean), f("stats", str), f("tags", strMap),
			f("deletionVector", dv), f("baseRowId", i64), f("defaultRowCommitVersion", i64))),
		f("remove", arrow.StructOf(f("path", str), f("deletionTimestamp", i64), f("dataChange", boolean),
			f("extendedFileMetadata", boolean), f("partitionValues", strMap), f("size", i64),
			f("deletionVector", dv), f("baseRowId", i64), f("defaultRowCommitVersion", i64))),
		f("metaData", arrow.StructOf(f("id", str), f("name", str), f("description", str),
			f("format", arrow.StructOf(f("provider", str), f("options", strMap))), f("schemaString", str),
			f("partitionColumns", strList), f("configuration", strMap), f("createdTime", i64))),
		f("protocol", arrow.StructOf(f("minReaderVersion", i32), f("minWriterVersion", i32),
			f("readerFeatures", strList), f("writerFeatures", strList))),
		f("domainMetadata", arrow.StructOf(f("domain", str), f("configuration", str), f("removed", boolean))),
	}, nil)
}

// checkpointActions is the state of s as checkpoint rows: protocol, metadata,
// transactions, domains, live files, and tombstones still inside the
// retention window (remove rows carry no stats or tags).
func checkpointActions(s *Snapshot, now time.Time) ([]Action, error) {
	retention, err := s.DeletedFileRetention()
	if err != nil {
		return nil, err
	}
	acts := []Action{{Protocol: s.Protocol}, {MetaData: s.Metadata}}
	for app, v := range s.Txns {
		acts = append(acts, Action{Txn: &Txn{AppID: app, Version: v}})
	}
	for _, d := range s.Domains {
		acts = append(acts, Action{DomainMetadata: d})
	}
	for _, f := range s.Files {
		a := *f
		a.DataChange = false
		acts = append(acts, Action{Add: &a})
	}
	cutoff := now.Add(-retention).UnixMilli()
	for _, r := range s.Tombstones {
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp < cutoff {
			continue
		}
		rm := *r
		rm.Stats, rm.Tags, rm.DataChange = "", nil, false
		acts = append(acts, Action{Remove: &rm})
	}
	return acts, nil
}

// WriteCheckpoint writes a classic single-part Parquet checkpoint of s and
// points _last_checkpoint at it. Tables with the v2Checkpoint feature are
// left alone (their checkpoints must follow the v2 spec): it then returns
// false. A checkpoint is an optimisation, so callers may ignore its errors.
func (t *Table) WriteCheckpoint(ctx context.Context, s *Snapshot) (bool, error) {
	if s.Protocol.HasWriterFeature("v2Checkpoint") {
		return false, nil
	}
	acts, err := checkpointActions(s, time.Now())
	if err != nil {
		return false, err
	}
	rec, err := actionsRecord(acts)
	if err != nil {
		return false, fmt.Errorf("checkpoint %d: %w", s.Version, err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	pw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return false, fmt.Errorf("checkpoint %d: %w", s.Version, err)
	}
	if err := pw.Write(rec); err != nil {
		return false, fmt.Errorf("checkpoint %d: %w", s.Version, err)
	}
	if err := pw.Close(); err != nil {
		return false, fmt.Errorf("checkpoint %d: %w", s.Version, err)
	}
	name := fmt.Sprintf("%s/%020d.checkpoint.parquet", LogDir, s.Version)
	size := int64(buf.Len())
	if err := t.Store.Put(ctx, name, buf.Bytes()); err != nil {
		return false, err
	}
	adds := int64(len(s.Files))
	lc, err := json.Marshal(LastCheckpoint{Version: s.Version, Size: int64(len(acts)), SizeInBytes: &size, NumOfAddFiles: &adds})
	if err != nil {
		return false, err
	}
	return true, t.Store.Put(ctx, lastCheckpointName, lc)
}

// MaybeCheckpoint writes a checkpoint of version when delta.checkpointInterval
// (default 10) divides it.
func (t *Table) MaybeCheckpoint(ctx context.Context, version int64) (bool, error) {
	s, err := t.SnapshotAt(ctx, version)
	if err != nil {
		return false, err
	}
	interval := int64(defaultCheckpointInterval)
	if v, err := strconv.ParseInt(s.Config("delta.checkpointInterval", ""), 10, 64); err == nil && v > 0 {
		interval = v
	}
	if version == 0 || version%interval != 0 {
		return false, nil
	}
	return t.WriteCheckpoint(ctx, s)
}

// actionsRecord builds one checkpoint batch from actions through their JSON
// form, with maps turned into Arrow's key/value lists.
func actionsRecord(acts []Action) (arrow.RecordBatch, error) {
	schema := checkpointSchema()
	var buf bytes.Buffer
	for i := range acts {
		b, err := json.Marshal(&acts[i])
		if err != nil {
			return nil, err
		}
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		row := map[string]any{}
		for _, f := range schema.Fields() {
			if fv, ok := v[f.Name]; ok {
				row[f.Name] = arrowJSON(fv, f.Type)
			}
		}
		if err := json.NewEncoder(&buf).Encode(row); err != nil {
			return nil, err
		}
	}
	rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, schema, &buf, array.WithMultipleDocs())
	return rec, err
}

// arrowJSON reshapes a decoded JSON value for array.FromJSON: maps become
// lists of {"key","value"} objects and struct fields follow dt.
func arrowJSON(v any, dt arrow.DataType) any {
	switch t := dt.(type) {
	case *arrow.MapType:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		out := make([]map[string]any, 0, len(m))
		for k, val := range m {
			out = append(out, map[string]any{"key": k, "value": val})
		}
		return out
	case *arrow.StructType:
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		out := map[string]any{}
		for _, f := range t.Fields() {
			if fv, ok := m[f.Name]; ok {
				out[f.Name] = arrowJSON(fv, f.Type)
			}
		}
		return out
	}
	return v
}
