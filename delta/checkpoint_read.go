package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/geocompact/geocompact/internal/footer"
)

// actionColumns are the checkpoint columns that hold actions.
var actionColumns = map[string]bool{
	"protocol": true, "metaData": true, "add": true, "remove": true, "txn": true,
	"domainMetadata": true, "checkpointMetadata": true, "sidecar": true,
}

// readCheckpointFile returns the actions of one checkpoint file (Parquet or,
// for v2, JSON), without following sidecars.
func readCheckpointFile(ctx context.Context, st Storage, name string) ([]Action, error) {
	if strings.HasSuffix(name, ".json") {
		b, err := readAll(ctx, st, name)
		if err != nil {
			return nil, err
		}
		acts, err := ParseActions(b)
		if err != nil {
			return nil, fmt.Errorf("read checkpoint %s: %w", name, err)
		}
		return acts, nil
	}
	var out []Action
	err := readParquetActions(ctx, st, name, func(a Action) error {
		out = append(out, a)
		return nil
	})
	return out, err
}

// readCheckpoint returns every action of a complete checkpoint, sidecars
// included.
func readCheckpoint(ctx context.Context, st Storage, c checkpoint) ([]Action, error) {
	var out []Action
	for _, f := range c.Files {
		acts, err := readCheckpointFile(ctx, st, f.Name)
		if err != nil {
			return nil, err
		}
		for _, a := range acts {
			if a.Sidecar == nil {
				out = append(out, a)
				continue
			}
			side, err := readSidecar(ctx, st, a.Sidecar)
			if err != nil {
				return nil, fmt.Errorf("read checkpoint %s: %w", f.Name, err)
			}
			out = append(out, side...)
		}
	}
	return out, nil
}

func readSidecar(ctx context.Context, st Storage, s *Sidecar) ([]Action, error) {
	p, err := decodePath(s.Path)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(p, "/") {
		p = sidecarDir + "/" + p
	}
	acts, err := readCheckpointFile(ctx, st, p)
	if err != nil {
		return nil, fmt.Errorf("sidecar %s: %w", path.Base(p), err)
	}
	for _, a := range acts {
		if a.Add == nil && a.Remove == nil {
			return nil, fmt.Errorf("sidecar %s: holds an action other than add or remove", path.Base(p))
		}
	}
	return acts, nil
}

func openParquet(ctx context.Context, st Storage, name string, batch int64) (*pqarrow.FileReader, io.Closer, error) {
	f, err := st.Open(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	pf, err := footer.Open(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open parquet %s: %w", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, nil, fmt.Errorf("open parquet %s: %w", name, err)
	}
	return fr, pf, nil
}

// readParquetActions streams the rows of a Parquet checkpoint as actions.
func readParquetActions(ctx context.Context, st Storage, name string, fn func(Action) error) error {
	fr, closer, err := openParquet(ctx, st, name, 4096)
	if err != nil {
		return err
	}
	defer closer.Close()
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("read checkpoint %s: %w", name, err)
	}
	defer rr.Release()
	for rr.Next() {
		if err := recordActions(rr.RecordBatch(), fn); err != nil {
			return fmt.Errorf("read checkpoint %s: %w", name, err)
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read checkpoint %s: %w", name, err)
	}
	return nil
}

// recordActions turns each row of a checkpoint batch into an action, going
// through the action's JSON form so that JSON commits and checkpoints share
// one decoder.
func recordActions(rec arrow.RecordBatch, fn func(Action) error) error {
	schema := rec.Schema()
	for row := 0; row < int(rec.NumRows()); row++ {
		for c := 0; c < int(rec.NumCols()); c++ {
			name := schema.Field(c).Name
			col := rec.Column(c)
			if !actionColumns[name] || col.IsNull(row) {
				continue
			}
			b, err := json.Marshal(map[string]any{name: arrowValue(col, row)})
			if err != nil {
				return err
			}
			var a Action
			if err := json.Unmarshal(b, &a); err != nil {
				return fmt.Errorf("row %d %s: %w", row, name, err)
			}
			if err := fn(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// arrowValue converts one value of an Arrow array to plain Go values (maps,
// slices, strings, numbers) that encoding/json renders as Delta's JSON would.
func arrowValue(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		m := make(map[string]any, st.NumFields())
		for f := 0; f < st.NumFields(); f++ {
			m[st.Field(f).Name] = arrowValue(a.Field(f), i)
		}
		return m
	case *array.Map:
		start, end := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		m := make(map[string]any, end-start)
		for j := start; j < end; j++ {
			m[fmt.Sprint(arrowValue(keys, int(j)))] = arrowValue(items, int(j))
		}
		return m
	case array.ListLike:
		start, end := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, end-start)
		for j := start; j < end; j++ {
			out = append(out, arrowValue(vals, int(j)))
		}
		return out
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	}
	return arr.GetOneForMarshal(i)
}
